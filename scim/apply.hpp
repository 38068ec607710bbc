// apply.hpp - `allot-scimd apply directory.yaml`: the directory kept in Git.
//
// The file lists users and groups; apply computes the difference with the
// store and prints it (`--plan` stops there). Nothing is written unless every
// entry in the file validates. Ids are never changed: a pinned uid/gid that
// differs from the directory's is an error, not an update. Without --prune,
// entries missing from the file are left alone.
//
//   users:
//     - name: alice
//       display_name: Alice Example
//       email: alice@example.org
//       uid: 10001              # optional; allocated when absent
//       shell: /bin/bash        # optional
//       home: /home/alice       # optional
//       active: true            # optional
//       ssh_keys: ["ssh-ed25519 AAAA… alice@laptop"]
//   groups:
//     - name: team-a
//       gid: 20001              # optional
//       members: [alice, bob]
#pragma once

#include <ostream>
#include <string>

#include "store.hpp"
#include "validate.hpp"

namespace allot::scimd {

struct ApplySummary {
    size_t changes = 0;
};

Result<ApplySummary> apply_directory(DirectoryStore& store, const DirectoryPolicy& policy,
                                     const std::string& yaml_text, bool plan_only, bool prune,
                                     std::ostream& out);
Result<ApplySummary> apply_directory_file(DirectoryStore& store, const DirectoryPolicy& policy,
                                          const std::string& path, bool plan_only, bool prune,
                                          std::ostream& out);

}  // namespace allot::scimd

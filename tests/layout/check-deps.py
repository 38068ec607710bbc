#!/usr/bin/env python3
"""check-deps.py - enforces the dependency rule of docs/architecture.md.

- lib/ is pure: it includes only lib/ headers and system headers, never a host
  API (Slurm, PAM, NSS), a network or database library, or a deliverable.
- A deliverable's code (plugins/*, syncd, scim, mylimits, ...) includes only
  lib/ ("allot/..."), the host compat headers (compat/), config.h and files of
  its own folder; never another deliverable's folder.
- allot-kube-token (scim/kube-token) is a login-node client: it includes nothing
  of the server in scim/.

Usage: check-deps.py [SRCDIR]. Prints one `ok -`/`not ok -` line per rule and
file with a violation, then `N passed, N failed`; exit 1 on any failure.
"""
import os
import re
import sys

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                      os.path.join(os.path.dirname(__file__), "..", ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCES = (".cpp", ".hpp", ".c", ".h")
# Folders that are not deliverables: anything may be included from them only
# by themselves (tests of the whole tree, benchmarks, fuzz targets).
FREE = ("tests", "bench", "fuzz", "compat", "etc", "docs", "m4", "rpm", "debian")
# Host and outside-world APIs lib/ must never see.
IMPURE = re.compile(r"^(slurm/|security/|nss\.h|curl/|httplib\.h|sqlite3\.h|munge\.h|"
                    r"openssl/|sys/socket\.h|netdb\.h|arpa/|netinet/|microhttpd)")


def deliverable_root(rel):
    """The folder a file belongs to, as a path relative to SRC."""
    parts = rel.split(os.sep)
    if parts[0] == "plugins" and len(parts) > 2:
        return os.path.join(*parts[:2])
    if parts[:2] == ["scim", "kube-token"]:
        return "scim/kube-token"
    return parts[0]


def violations(rel):
    root = deliverable_root(rel)
    here = os.path.dirname(os.path.join(SRC, rel))
    found = []
    with open(os.path.join(SRC, rel), errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            if root == "lib":
                if kind == "<" and IMPURE.match(name):
                    found.append(f"{rel}:{n}: lib/ includes host or network API <{name}>")
                if kind == '"' and not (name.startswith("allot/") or name == "config.h" or
                                        os.path.exists(os.path.join(here, name))):
                    found.append(f'{rel}:{n}: lib/ includes "{name}" from outside lib/')
                continue
            if kind == "<" or name.startswith(("allot/", "compat/")) or name == "config.h":
                continue
            target = os.path.normpath(os.path.join(here, name))
            if not os.path.exists(target):
                continue  # generated or system header found through -I
            target_rel = os.path.relpath(target, SRC)
            if root in FREE:
                continue
            if not (target_rel + os.sep).startswith(root + os.sep):
                found.append(f'{rel}:{n}: {root} reaches into {os.path.dirname(target_rel)} ("{name}")')
    return found


def tracked_sources():
    for top, dirs, files in os.walk(SRC):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "autom4te.cache"
                   and not d.startswith("allot-")]
        for name in files:
            if name.endswith(SOURCES):
                yield os.path.relpath(os.path.join(top, name), SRC)


def main():
    passed = failed = 0
    for rel in sorted(tracked_sources()):
        found = violations(rel)
        if found:
            failed += 1
            print(f"not ok - {rel}")
            for v in found:
                print(f"#   {v}")
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

// run_stream.hpp - run records as bytes, for the second reader process.
//
// allot-report reads the two halves of its period from slurmdbd at once, the second in a
// child process (slurmdb_reader.cpp), which hands its records back through a pipe in this
// form: one status byte, then either the records or the error that stopped it. Both ends
// are the same binary, so numbers go in host byte order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "allot/result.hpp"
#include "errors.hpp"
#include "records.hpp"

namespace allot::report {

// A run record with its row in slurmdbd's job table: a run that crosses the halves'
// boundary is read by both readers and kept once.
struct IndexedRun {
    uint64_t db_index = 0;
    RunRecord run;
};

std::string encode_runs(const std::vector<IndexedRun>& runs);
std::string encode_failure(const Error& error);
// The runs, the error the other process sent, or SlurmdbdDown when the bytes are cut
// short or malformed (the process died mid-way).
Result<std::vector<IndexedRun>> decode_runs(std::string_view bytes);
// That SlurmdbdDown error: the other process did not hand over its records.
Error runs_cut_short();

}  // namespace allot::report

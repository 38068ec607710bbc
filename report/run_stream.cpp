// run_stream.cpp - run records as bytes (see run_stream.hpp).
#include "run_stream.hpp"

#include <cstring>
#include <optional>
#include <type_traits>

namespace allot::report {

namespace {

enum Status : uint8_t { kRecords = 0, kFailure = 1 };

class Writer {
public:
    template <typename T>
    void num(T v)
    {
        static_assert(std::is_arithmetic_v<T>);
        out_.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    void str(const std::string& s)
    {
        num(static_cast<uint32_t>(s.size()));
        out_ += s;
    }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

// Reads fields in order; once a read runs past the end every later one fails too.
class Reader {
public:
    explicit Reader(std::string_view in) : in_(in) {}
    template <typename T>
    bool num(T& v)
    {
        if (!ok_ || in_.size() < sizeof v) return ok_ = false;
        std::memcpy(&v, in_.data(), sizeof v);
        in_.remove_prefix(sizeof v);
        return true;
    }
    bool str(std::string& s)
    {
        uint32_t n = 0;
        if (!num(n) || in_.size() < n) return ok_ = false;
        s.assign(in_.data(), n);
        in_.remove_prefix(n);
        return true;
    }
    bool at_end() const { return in_.empty(); }
    bool ok() const { return ok_; }

private:
    std::string_view in_;
    bool ok_ = true;
};

void write_run(Writer& w, const IndexedRun& ir)
{
    const RunRecord& r = ir.run;
    w.num(ir.db_index);
    w.num(r.job_id);
    w.num(r.array_job_id);
    w.num(r.array_task_id);
    w.num(r.het_job_id);
    w.num(r.het_offset);
    w.str(r.account);
    w.str(r.qos);
    w.str(r.user);
    w.num(r.start);
    w.num(static_cast<uint8_t>(r.end.has_value()));
    w.num(r.end.value_or(0));
    w.num(r.gpus);
    w.num(static_cast<uint8_t>(r.state));
}

std::optional<IndexedRun> read_run(Reader& rd)
{
    IndexedRun ir;
    RunRecord& r = ir.run;
    uint8_t has_end = 0, state = 0;
    int64_t end = 0;
    rd.num(ir.db_index);
    rd.num(r.job_id);
    rd.num(r.array_job_id);
    rd.num(r.array_task_id);
    rd.num(r.het_job_id);
    rd.num(r.het_offset);
    rd.str(r.account);
    rd.str(r.qos);
    rd.str(r.user);
    rd.num(r.start);
    rd.num(has_end);
    rd.num(end);
    rd.num(r.gpus);
    rd.num(state);
    if (!rd.ok() || has_end > 1 || state > static_cast<uint8_t>(RunEnd::Other)) return std::nullopt;
    if (has_end) r.end = end;
    r.state = static_cast<RunEnd>(state);
    return ir;
}

}  // namespace

Error runs_cut_short()
{
    return make_error(Errc::SlurmdbdDown,
                      "the second reader process ended without handing over its records");
}

std::string encode_runs(const std::vector<IndexedRun>& runs)
{
    Writer w;
    w.num(static_cast<uint8_t>(kRecords));
    w.num(static_cast<uint64_t>(runs.size()));
    for (const IndexedRun& r : runs) write_run(w, r);
    return w.take();
}

std::string encode_failure(const Error& error)
{
    Writer w;
    w.num(static_cast<uint8_t>(kFailure));
    // Only this area's codes cross (both ends know them); any other is slurmdbd's trouble.
    const bool ours = error.code.category() == make_error_code(Errc::Ok).category();
    w.num(static_cast<int32_t>(ours ? error.code.value() : static_cast<int>(Errc::SlurmdbdDown)));
    w.str(error.describe());
    return w.take();
}

Result<std::vector<IndexedRun>> decode_runs(std::string_view bytes)
{
    Reader rd(bytes);
    uint8_t status = 0;
    if (!rd.num(status)) return runs_cut_short();
    if (status == kFailure) {
        int32_t code = 0;
        std::string detail;
        if (!rd.num(code) || !rd.str(detail) || !rd.at_end() || code <= 0 ||
            code > static_cast<int32_t>(Errc::Output))
            return runs_cut_short();
        return make_error(static_cast<Errc>(code), detail);
    }
    uint64_t count = 0;
    if (status != kRecords || !rd.num(count)) return runs_cut_short();
    std::vector<IndexedRun> runs;
    // A count is only believed as far as the bytes go: no reserve() from it.
    for (uint64_t i = 0; i < count; ++i) {
        auto r = read_run(rd);
        if (!r) return runs_cut_short();
        runs.push_back(std::move(*r));
    }
    if (!rd.at_end()) return runs_cut_short();
    return runs;
}

}  // namespace allot::report

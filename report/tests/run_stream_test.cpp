// run_stream_test.cpp - run records through the second reader's pipe: every field comes
// back, an error comes back as itself, and bytes cut short or damaged are an error, never
// fewer records.
#include "run_stream.hpp"

#include <gtest/gtest.h>

namespace allot::report {
namespace {

std::vector<IndexedRun> sample()
{
    IndexedRun a;
    a.db_index = 1ull << 40;
    a.run.job_id = 7;
    a.run.array_job_id = 5;
    a.run.array_task_id = 2;
    a.run.het_job_id = 0;
    a.run.account = "team-a";
    a.run.qos = "spot";
    a.run.user = std::string("al\0ice\t\n", 8);  // any bytes survive
    a.run.start = 1700000000;
    a.run.end = 1700003600;
    a.run.gpus = 8;
    a.run.state = RunEnd::Preempted;
    IndexedRun b;
    b.db_index = 2;
    b.run.job_id = 8;
    b.run.start = 1700000100;
    b.run.state = RunEnd::Running;  // no end
    return {a, b};
}

void expect_same(const IndexedRun& x, const IndexedRun& y)
{
    EXPECT_EQ(x.db_index, y.db_index);
    EXPECT_EQ(x.run.job_id, y.run.job_id);
    EXPECT_EQ(x.run.array_job_id, y.run.array_job_id);
    EXPECT_EQ(x.run.array_task_id, y.run.array_task_id);
    EXPECT_EQ(x.run.het_job_id, y.run.het_job_id);
    EXPECT_EQ(x.run.het_offset, y.run.het_offset);
    EXPECT_EQ(x.run.account, y.run.account);
    EXPECT_EQ(x.run.qos, y.run.qos);
    EXPECT_EQ(x.run.user, y.run.user);
    EXPECT_EQ(x.run.start, y.run.start);
    EXPECT_EQ(x.run.end, y.run.end);
    EXPECT_EQ(x.run.gpus, y.run.gpus);
    EXPECT_EQ(x.run.state, y.run.state);
}

TEST(RunStream, EveryFieldComesBack)
{
    const auto runs = sample();
    auto back = decode_runs(encode_runs(runs));
    ASSERT_TRUE(back) << back.error().describe();
    ASSERT_EQ(back.value().size(), 2u);
    expect_same(back.value()[0], runs[0]);
    expect_same(back.value()[1], runs[1]);
    EXPECT_FALSE(back.value()[1].run.end);
}

TEST(RunStream, NoRunsIsNotAnError)
{
    auto back = decode_runs(encode_runs({}));
    ASSERT_TRUE(back);
    EXPECT_TRUE(back.value().empty());
}

TEST(RunStream, AnErrorComesBackAsItself)
{
    auto back = decode_runs(encode_failure(make_error(Errc::NoGpuTres, "no gres/gpu")));
    ASSERT_FALSE(back);
    EXPECT_TRUE(back.error().is(Errc::NoGpuTres));
    EXPECT_EQ(back.error().describe(), "no gres/gpu");
}

TEST(RunStream, AnotherAreasErrorIsSlurmdbdTrouble)
{
    auto back = decode_runs(encode_failure(make_error("a generic failure")));
    ASSERT_FALSE(back);
    EXPECT_TRUE(back.error().is(Errc::SlurmdbdDown));
    EXPECT_EQ(back.error().describe(), "a generic failure");
}

TEST(RunStream, EveryCutIsAnError)
{
    const std::string whole = encode_runs(sample());
    for (size_t n = 0; n < whole.size(); ++n) {
        auto back = decode_runs(std::string_view(whole).substr(0, n));
        ASSERT_FALSE(back) << "cut at " << n;
        EXPECT_TRUE(back.error().is(Errc::SlurmdbdDown));
    }
    EXPECT_FALSE(decode_runs(whole + "x"));  // trailing bytes
}

TEST(RunStream, DamagedBytesAreAnError)
{
    std::string bytes = encode_runs(sample());
    bytes[0] = 7;  // no such status
    EXPECT_FALSE(decode_runs(bytes));
    bytes = encode_runs(sample());
    bytes[bytes.size() - 1] = 99;  // no such run state
    EXPECT_FALSE(decode_runs(bytes));
    std::string huge = encode_runs({});
    huge.replace(1, 8, std::string(8, '\xff'));  // a count the bytes do not hold
    EXPECT_FALSE(decode_runs(huge));
    std::string bad_code = encode_failure(make_error(Errc::Usage, "x"));
    bad_code.replace(1, 4, std::string(4, '\x7f'));
    EXPECT_FALSE(decode_runs(bad_code).error().is(Errc::Usage));
}

}  // namespace
}  // namespace allot::report

// Integration tests of tracing an MPI job across its ranks, on the simulated GPU, with Debian's
// Open MPI: mpirun starting one `xtrace record` per rank with an output-name template, and
// (in the Slurm tests below) a Slurm cluster of the test's own capturing a running job
// through the node daemons as an unprivileged user. One rank is made slower on purpose; the
// report must name it. Real BPF; needs root (skips elsewhere, fails under CI).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "log_contents.h"
#include "root_fixture.h"
#include "subprocess.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::LogContents;
using testing::ReadLogContents;
using testing::RootTest;
using testing::RunCommand;
using testing::RunResult;

const std::string kXtrace = XTRACE_BIN;
const std::string kMpiJob = MPI_GPU_JOB_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;

// `xtrace report ARGS --format json`, parsed.
json ReportJson(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kXtrace, "report"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--format", "json"});
  const RunResult r = RunCommand(argv, {}, 120s);
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  return json::parse(r.out, nullptr, false);
}

// The row of the kernel-spread table ("ranks") for `kernel`; null if none.
json SpreadRow(const json& report, const std::string& kernel) {
  if (!report.contains("across_logs") || !report["across_logs"].contains("ranks")) return nullptr;
  for (const json& row : report["across_logs"]["ranks"])
    if (row.value("name", "") == kernel) return row;
  return nullptr;
}

class ClusterTest : public RootTest {
 protected:
  ClusterTest() : RootTest("cluster", "cluster") {}
};

// mpirun starts an xtrace per rank; each writes the log its template names, tagged with the
// rank of the process it traced, and the report across them names the slow rank.
TEST_F(ClusterTest, MpirunWithARankTemplateWritesALogPerRankAndTheReportNamesTheSlowRank) {
  const std::string out = dir_ + "/run.%r.capnp";
  const RunResult run = RunCommand(
      {"/usr/bin/mpirun", "--allow-run-as-root", "--oversubscribe", "-n", "4", kXtrace, "record", "-q",
       "-o", out, "--", kMpiJob, "--duration", "3", "--slow-rank", "2"},
      {kSimDriver}, 240s);
  ASSERT_EQ(run.exit_code(), 0) << run.out << run.err;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string path = dir_ + "/run." + std::to_string(rank) + ".capnp";
    const LogContents c = ReadLogContents(path);
    ASSERT_TRUE(c.readable) << path << ": " << c.error;
    EXPECT_TRUE(c.complete) << path;
    size_t launches = 0;
    for (const auto& [pid, l] : c.launches) launches += l.size();
    EXPECT_GT(launches, 100u) << path;
  }
  const json report = ReportJson({dir_});
  ASSERT_TRUE(report.is_object());
  std::set<std::string> ranks;
  for (const json& log : report["logs"]) {
    EXPECT_TRUE(log["rank_recorded"].get<bool>()) << log.dump();
    ranks.insert(log["rank"].get<std::string>());
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"rank 0", "rank 1", "rank 2", "rank 3"}));
  const json row = SpreadRow(report, "step_forward");
  ASSERT_FALSE(row.is_null()) << report["across_logs"].dump();
  EXPECT_EQ(row["outlier"], "rank 2") << row.dump();
  EXPECT_GT(row["outlier_vs_median"].get<double>(), 2.0) << row.dump();
  const json even = SpreadRow(report, "step_allreduce_pack");
  ASSERT_FALSE(even.is_null());
  EXPECT_LT(even["outlier_vs_median"].get<double>(), 1.5) << even.dump();
}

}  // namespace
}  // namespace xtrace

// Integration test of `xtrace report` on a real capture of the simulated GPU: the device
// operation table's calls, measured/estimated split and measured totals against the GPU's
// ground truth (XTRACE_SIMZE_GROUND_TRUTH), host call counts against the log, the engines'
// time accounting, and the command's errors on bad input.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "capture_reader.h"
#include "root_fixture.h"
#include "subprocess.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::Capture;
using testing::ReadWholeCapture;
using testing::RootTest;
using testing::RunCommand;

const std::string kXtrace = XTRACE_BIN;
// The clock model maps each end of a measured operation within 2 µs (see the device timeline
// integration test); a duration is off by at most twice that.
constexpr double kDurationToleranceNs = 4'000;

struct TrueOp {
  std::string name;
  uint64_t start_ns = 0, end_ns = 0;
};

// Ground truth per engine (pid, queue), in start order.
std::map<std::pair<uint32_t, uint64_t>, std::vector<TrueOp>> ReadTruthByEngine(const std::string& path) {
  std::map<std::pair<uint32_t, uint64_t>, std::vector<TrueOp>> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
    if (f.size() != 14) {
      ADD_FAILURE() << "bad ground truth line: " << line;
      continue;
    }
    const auto engine = std::make_pair(uint32_t(std::stoul(f[8])), std::stoull(f[6], nullptr, 16));
    out[engine].push_back({f[1], std::stoull(f[2]), std::stoull(f[3])});
  }
  for (auto& [engine, ops] : out) {
    std::sort(ops.begin(), ops.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
  }
  return out;
}

struct Expected {
  uint64_t calls = 0, measured = 0, estimated = 0;
  double true_measured_ns = 0;
};

class ReportIntegrationTest : public RootTest {
 protected:
  ReportIntegrationTest() : RootTest("capture", "report") {}

  nlohmann::json Report(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kXtrace, "report", "--format", "json", "-o", Path("report.json")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = RunCommand(argv, {}, 60s);
    EXPECT_EQ(r.exit_code(), 0) << r.err;
    std::ifstream in(Path("report.json"));
    return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  }
};

TEST_F(ReportIntegrationTest, DeviceTotalsMatchTheSimulatedGpusGroundTruth) {
  auto rec = RunCommand({kXtrace, "record", "-q", "-o", Path("run.capnp"), "--", ZE_TIMELINE_BIN,
                         "--threads", "2", "--rounds", "3", "--executions", "4", "--immediate", "6",
                         "--query-every", "2"},
                        {"ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB, "XTRACE_SIMZE_GROUND_TRUTH=" + Path("truth.tsv")},
                        240s);
  ASSERT_EQ(rec.exit_code(), 0) << rec.err;
  const Capture c = ReadWholeCapture(Path("run.capnp"));
  ASSERT_TRUE(c.complete);
  auto truth = ReadTruthByEngine(Path("truth.tsv"));
  ASSERT_FALSE(truth.empty());

  // Pair each engine's operations (in submission order) with its true intervals (in start
  // order), as the device timeline test does, to know which were measured.
  std::map<std::pair<uint32_t, uint64_t>, std::vector<DeviceOp>> ops;
  for (const DeviceOp& op : c.All<DeviceOp>()) ops[{op.pid, op.queue}].push_back(op);
  std::map<std::string, Expected> expected;
  size_t paired = 0;
  for (auto& [engine, list] : ops) {
    std::sort(list.begin(), list.end(), [](auto& a, auto& b) { return a.id < b.id; });
    const auto& t = truth[engine];
    ASSERT_EQ(list.size(), t.size());
    for (size_t i = 0; i < list.size(); ++i, ++paired) {
      ASSERT_EQ(c.strings.Get(list[i].name), t[i].name);
      Expected& e = expected[t[i].name];
      ++e.calls;
      if (list[i].measured) {
        ++e.measured;
        e.true_measured_ns += double(t[i].end_ns - t[i].start_ns);
      } else {
        ++e.estimated;
      }
    }
  }
  ASSERT_EQ(paired, 3u * 2 * (4 * 5 + 6));

  const nlohmann::json report = Report({Path("run.capnp")});
  ASSERT_FALSE(report.is_discarded());
  const auto& tables = report["sections"][0]["tables"];
  ASSERT_EQ(tables["device_ops"].size(), expected.size());
  uint64_t measured = 0, estimated = 0;
  for (const auto& row : tables["device_ops"]) {
    // "name" is demangled (the SYCL kernel's type); the ground truth has the name as captured.
    const std::string name = row["mangled_name"];
    SCOPED_TRACE(name);
    ASSERT_TRUE(expected.count(name));
    const Expected& e = expected[name];
    EXPECT_EQ(row["calls"].get<uint64_t>(), e.calls);
    EXPECT_EQ(row["measured"].get<uint64_t>(), e.measured);
    EXPECT_EQ(row["estimated"].get<uint64_t>(), e.estimated);
    EXPECT_NEAR(row["total_ns"].get<double>(), e.true_measured_ns, kDurationToleranceNs * double(e.measured) + 1);
    measured += e.measured;
    estimated += e.estimated;
  }
  EXPECT_GT(measured, 0u);
  EXPECT_GT(estimated, 0u);

  // Every host call of the log is in the host call table once.
  uint64_t host_calls = 0;
  for (const auto& row : tables["host_calls"]) host_calls += row["calls"].get<uint64_t>();
  EXPECT_EQ(host_calls, c.calls.size() + c.launches.size() + c.creates.size());

  // Each engine's time is accounted for: busy + idle causes = span.
  ASSERT_EQ(tables["engines"].size(), ops.size());
  for (const auto& e : tables["engines"]) {
    const uint64_t parts = e["busy_ns"].get<uint64_t>() + e["idle_launch_ns"].get<uint64_t>() +
                           e["idle_sync_ns"].get<uint64_t>() + e["idle_waiting_ns"].get<uint64_t>() +
                           e["idle_unknown_ns"].get<uint64_t>();
    EXPECT_EQ(parts, e["span_ns"].get<uint64_t>());
    // Named as a user knows it: the workload's queues and immediate lists are on ordinal 0,
    // index 0, which the simulated GPU's queue groups (read by xtrace's own Level Zero) say
    // is a compute group.
    EXPECT_EQ(e["engine_type"], "compute") << e.dump();
    EXPECT_TRUE(e["engine"].get<std::string>().starts_with("GPU 0 compute 0.0")) << e.dump();
  }

  // The text report answers the same question.
  auto text = RunCommand({kXtrace, "report", Path("run.capnp"), "--top", "3"}, {}, 60s);
  ASSERT_EQ(text.exit_code(), 0) << text.err;
  EXPECT_NE(text.out.find("Device operations"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("xt::gemm"), std::string::npos) << text.out;
}

TEST_F(ReportIntegrationTest, BadInputGetsOneLineErrorsAndSalvage) {
  auto help = RunCommand({kXtrace, "report", "--help"});
  EXPECT_EQ(help.exit_code(), 0);
  EXPECT_NE(help.out.find("Examples:"), std::string::npos);

  auto missing = RunCommand({kXtrace, "report", Path("missing.capnp")});
  EXPECT_EQ(missing.exit_code(), 1);
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  EXPECT_NE(missing.err.find("missing.capnp"), std::string::npos) << missing.err;
  // Nothing of a missing file is readable: --salvage is suggested for damage alone.
  EXPECT_EQ(missing.err.find("--salvage"), std::string::npos) << missing.err;

  auto usage = RunCommand({kXtrace, "report", "x.capnp", "--top", "zero"});
  EXPECT_EQ(usage.exit_code(), 2);
  EXPECT_NE(usage.err.find("--top"), std::string::npos) << usage.err;

  // A capture cut in the middle of a batch.
  auto rec = RunCommand({kXtrace, "record", "-q", "-o", Path("run.capnp"), "--", ZE_TIMELINE_BIN,
                         "--rounds", "2"},
                        {"ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB}, 240s);
  ASSERT_EQ(rec.exit_code(), 0) << rec.err;
  std::ifstream in(Path("run.capnp"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(Path("torn.capnp"), std::ios::binary) << bytes.substr(0, bytes.size() * 2 / 3);
  auto torn = RunCommand({kXtrace, "report", Path("torn.capnp")});
  EXPECT_EQ(torn.exit_code(), 1);
  EXPECT_NE(torn.err.find("--salvage"), std::string::npos) << torn.err;
  auto salvaged = RunCommand({kXtrace, "report", "--salvage", Path("torn.capnp")});
  EXPECT_EQ(salvaged.exit_code(), 0) << salvaged.err;
  EXPECT_NE(salvaged.err.find("warning"), std::string::npos) << salvaged.err;
}

}  // namespace
}  // namespace xtrace

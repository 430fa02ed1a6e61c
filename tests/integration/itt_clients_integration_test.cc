// Integration tests of ITT capture with real clients: Debian's oneDNN and TBB through xtrace's
// collector, and PyTorch's range functions in a stand-in library, probed with or without the
// collector. Needs root; skips with the reason elsewhere, fails under CI.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "itt_test_support.h"
#include "subprocess.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using namespace itt_test;
using testing::PidFromReadyLine;
using testing::RunCommand;
using testing::Subprocess;

}  // namespace

TEST_F(IttIntegrationTest, OneDnnPrimitivesOnTheCallingThreadAndItsOpenMpWorkers) {
  const std::string out = Path("dnnl.capnp");
  auto r = RunCommand({kXtrace, "record", "-o", out, "--", DNNL_WORKLOAD_BIN, "--iterations", "4"},
                      {kWithCollector, "OMP_NUM_THREADS=2"}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  const IttCapture c = ReadIttCapture(out);
  ASSERT_FALSE(c.tasks.empty()) << r.err;
  const uint32_t pid = c.tasks[0].task.pid;
  const std::set<std::string> kinds = {"convolution", "eltwise", "reorder", "matmul"};

  std::map<std::string, int> on_caller;
  std::vector<const Span*> on_workers;
  for (const Span& s : c.tasks) {
    EXPECT_EQ(s.domain, "dnnl::primitive::execute");
    EXPECT_TRUE(kinds.count(s.name)) << s.name;
    EXPECT_FALSE(s.task.unfinished || s.task.begin_missing || s.task.closed_by_outer) << s.name;
    if (s.task.tid == pid) ++on_caller[s.name];
    else on_workers.push_back(&s);
  }
  // One task per execution on the thread that executed it.
  EXPECT_EQ(on_caller, (std::map<std::string, int>{
                           {"convolution", 4}, {"eltwise", 4}, {"reorder", 4}, {"matmul", 4}}));
  // Its OpenMP worker ran its share of each primitive inside that primitive's execution.
  std::set<std::string> worker_kinds;
  for (const Span* w : on_workers) {
    worker_kinds.insert(w->name);
    const bool inside = std::any_of(c.tasks.begin(), c.tasks.end(), [&](const Span& s) {
      return s.task.tid == pid && s.name == w->name && Encloses(s.task, w->task.start_ns, w->task.end_ns);
    });
    EXPECT_TRUE(inside) << w->name << " on tid " << w->task.tid;
  }
  EXPECT_EQ(worker_kinds, kinds);
}

TEST_F(IttIntegrationTest, TbbAlgorithmsAppearAsTasksInDomainTbb) {
  const std::string out = Path("tbb.capnp");
  auto r = RunCommand({kXtrace, "record", "-o", out, "--", TBB_WORKLOAD_BIN, "--iterations", "3"},
                      {kWithCollector}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  const IttCapture c = ReadIttCapture(out);
  ASSERT_FALSE(c.tasks.empty()) << r.err;
  const uint32_t pid = c.tasks[0].task.pid;
  std::map<std::string, int> on_caller;
  for (const Span& s : c.tasks) {
    EXPECT_EQ(s.domain, "tbb");
    if (s.task.tid == pid) ++on_caller[s.name];
  }
  EXPECT_EQ(on_caller,
            (std::map<std::string, int>{{"tbb_parallel_for", 3}, {"tbb_parallel_reduce", 3}}));
  if (std::thread::hardware_concurrency() >= 2) {
    const bool named = std::any_of(c.thread_names.begin(), c.thread_names.end(),
                                   [](const auto& t) { return t.second == "TBB Worker Thread"; });
    EXPECT_TRUE(named) << "TBB names its workers through __itt_thread_set_name";
  }
}

// torch_range_workload's log as capture lines, names cut where BPF cuts them and marked as
// cut with a trailing "…" (base/cut_text.h).
std::vector<std::string> RangeLogLines(const std::string& path) {
  std::vector<std::string> lines;
  for (const std::string& l : LogLines(path)) {
    // "<tid>\t<kind>\t<name>" -> "<tid>\t<kind>\tPyTorch\t<name>"
    const size_t second = l.find('\t', l.find('\t') + 1);
    std::string name = l.substr(second + 1);
    if (name.size() > XT_MAX_ITT_NAME - 1) name = name.substr(0, XT_MAX_ITT_NAME - 1) + "\u2026";
    lines.push_back(l.substr(0, second) + "\tPyTorch\t" + name);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST_F(IttIntegrationTest, PytorchRangesOfARunningProcessNeedNoCollector) {
  const std::string log = Path("ranges.tsv"), out = Path("torch.capnp");
  Subprocess workload({TORCH_WORKLOAD_BIN, "--library", TORCH_STANDIN_LIB, "--wait-for-signal",
                       "--threads", "2", "--iterations", "3", "--log", log});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("PyTorch ITT ranges in", 30s)) << xtrace.stderr_text();
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1", 60s)) << workload.stderr_text();
  xtrace.Signal(SIGINT);
  auto status = xtrace.Wait(30s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
  workload.Signal(SIGTERM);
  workload.Wait(30s);

  const IttCapture c = ReadIttCapture(out);
  const auto expected = RangeLogLines(log);
  ASSERT_EQ(expected.size(), 2u * 3u * 9u);
  EXPECT_EQ(AsLabelLines(c), expected);
  for (const Span& s : c.tasks) {
    EXPECT_FALSE(s.task.unfinished || s.task.begin_missing || s.task.closed_by_outer) << s.name;
    EXPECT_EQ(s.task.name_truncated, s.name.size() > XT_MAX_ITT_NAME - 1) << s.name;
    if (s.name == "aten::addmm") {
      const bool nested = std::any_of(c.tasks.begin(), c.tasks.end(), [&](const Span& o) {
        return o.name == "aten::linear" && o.task.tid == s.task.tid &&
               Encloses(o.task, s.task.start_ns, s.task.end_ns);
      });
      EXPECT_TRUE(nested);
    }
  }
}

TEST_F(IttIntegrationTest, AMissingPytorchFunctionIsSkippedWithOneLine) {
  const std::string log = Path("ranges.tsv"), out = Path("nomark.capnp");
  Subprocess xtrace({kXtrace, "record", "-o", out, "--", TORCH_WORKLOAD_BIN, "--library",
                     TORCH_STANDIN_NOMARK_LIB, "--wait-for-signal", "--log", log});
  const uint32_t pid = PidFromReadyLine(xtrace.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << xtrace.stderr_text();
  ASSERT_TRUE(xtrace.WaitStderr("PyTorch ITT ranges in", 30s)) << xtrace.stderr_text();
  kill(static_cast<pid_t>(pid), SIGUSR1);
  ASSERT_TRUE(xtrace.WaitStdout("round 1", 60s)) << xtrace.stderr_text();
  kill(static_cast<pid_t>(pid), SIGTERM);
  auto status = xtrace.Wait(60s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
  EXPECT_EQ(CountLinesWith(xtrace.stderr_text(), "skipped itt_mark (not exported)"), 1u)
      << xtrace.stderr_text();
  const IttCapture c = ReadIttCapture(out);
  EXPECT_EQ(AsLabelLines(c), RangeLogLines(log));
  EXPECT_TRUE(c.markers.empty());
}

TEST_F(IttIntegrationTest, PytorchIsNotProbedTwiceWhenTheCollectorCarriesItsRanges) {
  const std::string out = Path("both.capnp");
  Subprocess xtrace({kXtrace, "record", "-o", out, "--", TORCH_WORKLOAD_BIN, "--library",
                     TORCH_STANDIN_LIB, "--wait-for-signal"},
                    {kWithCollector});
  const uint32_t pid = PidFromReadyLine(xtrace.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << xtrace.stderr_text();
  ASSERT_TRUE(xtrace.WaitStderr("not probing them twice", 30s)) << xtrace.stderr_text();
  kill(static_cast<pid_t>(pid), SIGUSR1);
  ASSERT_TRUE(xtrace.WaitStdout("round 1", 60s)) << xtrace.stderr_text();
  kill(static_cast<pid_t>(pid), SIGTERM);
  auto status = xtrace.Wait(60s);
  ASSERT_TRUE(status.has_value()) << xtrace.stderr_text();
  // The stand-in does not forward to ITT as libtorch does: with its probes left out, nothing.
  EXPECT_TRUE(ReadIttCapture(out).tasks.empty());
}

}  // namespace xtrace

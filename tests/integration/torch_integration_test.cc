// Integration tests with a real PyTorch: Debian's python3-torch (1.13.1), an ITT client through
// the oneDNN it is built with (it is built without PyTorch's own ITT: emit_itt() raises, so its
// operator ranges are not there to capture). Every oneDNN primitive execution is an ITT task
// once INTEL_LIBITTNOTIFY64 names xtrace's collector; oneDNN loads that collector lazily, at its
// first ITT call, which is what these tests are about: the first task of a run, and every task
// from the moment a capture attaches to a running training loop. Primitives are counted apart
// from xtrace by oneDNN's own verbose output. The models are tests/workloads/torch_*.py.
// Needs root and python3-torch; skips with the reason elsewhere, fails under CI.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "log_contents.h"
#include "root_fixture.h"
#include "subprocess.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::LogContents;
using testing::NamedIttTask;
using testing::PidFromReadyLine;
using testing::ReadLogContents;
using testing::RootTest;
using testing::RunCommand;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kWithCollector = "INTEL_LIBITTNOTIFY64=" ITT_COLLECTOR_LIB;
const std::string kModelScript = TORCH_MODEL_SCRIPT;
const std::string kLoopScript = TORCH_LOOP_SCRIPT;
// Debian's python3-torch is for Debian's python3; another python3 on PATH may lack it.
const std::string kPython = "/usr/bin/python3";
const std::string kTorchPackage = "/usr/lib/python3/dist-packages/torch/__init__.py";
constexpr const char* kOneDnnDomain = "dnnl::primitive::execute";
// Importing torch reads ~1 GB of libraries: tens of seconds on a loaded machine.
constexpr auto kTorchStart = 180s;

// Executions per primitive kind, from oneDNN's verbose lines
// ("onednn_verbose,exec,cpu,<kind>,..."; "dnnl_verbose," before oneDNN 2.5).
std::map<std::string, int> VerboseExecutions(const std::string& out) {
  std::map<std::string, int> kinds;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    for (const char* prefix : {"onednn_verbose,exec,", "dnnl_verbose,exec,"}) {
      if (line.rfind(prefix, 0) != 0) continue;
      std::istringstream fields(line);
      std::string field, kind;
      for (int i = 0; i < 4 && std::getline(fields, field, ','); ++i) kind = field;
      ++kinds[kind];
    }
  }
  return kinds;
}

std::string Describe(const std::map<std::string, int>& counts) {
  std::string s;
  for (const auto& [name, n] : counts) s += name + "=" + std::to_string(n) + " ";
  return s;
}

uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// [start, end] of each iteration torch_train_loop.py logged ("<n>\t<start_ns>\t<end_ns>") that
// lies within [from_ns, to_ns].
std::vector<std::pair<uint64_t, uint64_t>> IterationWindows(const std::string& path,
                                                            uint64_t from_ns, uint64_t to_ns) {
  std::vector<std::pair<uint64_t, uint64_t>> windows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    uint64_t n = 0, begin = 0, end = 0;
    if ((fields >> n >> begin >> end) && begin >= from_ns && end <= to_ns)
      windows.emplace_back(begin, end);
  }
  return windows;
}

class TorchIntegrationTest : public RootTest {
 protected:
  TorchIntegrationTest() : RootTest("PyTorch capture", "torch") {}
  void SetUp() override {
    RootTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (access(kPython.c_str(), X_OK) != 0 || access(kTorchPackage.c_str(), R_OK) != 0) {
      if (getenv("CI")) FAIL() << "python3-torch is missing; scripts/install-deps.sh installs it";
      GTEST_SKIP() << "python3-torch is not installed (scripts/install-deps.sh installs it)";
    }
  }
};

// The command of the issue, as a user types it: `env` puts the collector in the environment and
// execs python3. oneDNN dlopens the collector at its first primitive, after the process started;
// that first primitive's task must arrive whole, as every other one. The process is named what
// it is once it exec'd: python3, not env.
TEST_F(TorchIntegrationTest, RecordGivesEveryOneDnnPrimitiveOfAModelAsATask) {
  const std::string out = Path("model.capnp");
  auto r = RunCommand(
      {kXtrace, "record", "-o", out, "--", "/usr/bin/env", kWithCollector, "ONEDNN_VERBOSE=1",
       kPython, kModelScript, "--iterations", "3", "--train-steps", "2"},
      {}, kTorchStart);
  ASSERT_EQ(r.exit_code(), 0) << r.err << r.out.substr(0, 2000);
  ASSERT_NE(r.out.find("torch_model: 3 iterations, 2 training steps"), std::string::npos) << r.out;
  const auto expected = VerboseExecutions(r.out);
  ASSERT_GT(expected.count("convolution") ? expected.at("convolution") : 0, 0)
      << "PyTorch ran no oneDNN convolution:\n"
      << r.out.substr(0, 2000);
  EXPECT_EQ(r.err.find("Unbalanced ITT input"), std::string::npos) << r.err;

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  std::map<std::string, int> got;
  std::vector<uint32_t> pids;
  for (const NamedIttTask& t : c.itt_tasks) {
    EXPECT_EQ(t.domain, kOneDnnDomain);
    EXPECT_TRUE(t.balanced()) << t.name << " at " << t.task.start_ns
                              << (t.task.begin_missing ? " ended without a begin" : "")
                              << (t.task.unfinished ? " never ended" : "");
    // One intra-op thread: every primitive runs on the calling thread, so one task each.
    if (t.balanced()) ++got[t.name];
    if (std::find(pids.begin(), pids.end(), t.task.pid) == pids.end()) pids.push_back(t.task.pid);
  }
  EXPECT_EQ(got, expected) << "captured: " << Describe(got)
                           << "\noneDNN ran: " << Describe(expected);
  ASSERT_EQ(pids.size(), 1u);
  ASSERT_TRUE(c.processes.count(pids[0])) << "no ProcessInfo for pid " << pids[0];
  EXPECT_EQ(c.processes.at(pids[0]).comm, "python3");
}

// `attach --pid` to a training loop that has run for a while (the collector is loaded, oneDNN
// has made thousands of ITT calls): every iteration that starts after xtrace says the process
// is attached carries all of its primitives, the first one as the last, and nothing is cut but
// the primitives the attach and the detach fell into.
TEST_F(TorchIntegrationTest, AttachToARunningTrainingLoopTracesEveryIterationFromThenOn) {
  const std::string out = Path("loop.capnp"), log = Path("iterations.tsv");
  Subprocess loop({kPython, kLoopScript, "--log", log, "--report-every", "0.5"}, {kWithCollector});
  const uint32_t pid = PidFromReadyLine(loop.WaitStdout("ready", kTorchStart));
  ASSERT_GT(pid, 0u) << loop.stderr_text();
  ASSERT_TRUE(loop.WaitStdout("torch_loop: iterations", 30s)) << loop.stderr_text();

  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  // Python frames are on by default, and this Python process's ITT calls still take the fast
  // path: reading their frames would cost a trap per call (only --python-frames asks it).
  ASSERT_TRUE(xtrace.WaitStderr(
      "pid " + std::to_string(pid) + ": ITT calls go through the in-process fast path", 60s))
      << xtrace.stderr_text();
  const uint64_t attached_ns = MonotonicNs();
  // Iterations under the capture: enough to compare, bounded in time on a loaded machine.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (IterationWindows(log, attached_ns, UINT64_MAX).size() < 20 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(200ms);
  const uint64_t stopping_ns = MonotonicNs();
  xtrace.Signal(SIGINT);
  auto status = xtrace.Wait(60s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
  // Queries are on, but a process without Level Zero has nothing to ask: never held for one.
  EXPECT_EQ(xtrace.stderr_text().find("queried"), std::string::npos) << xtrace.stderr_text();
  loop.Signal(SIGTERM);
  ASSERT_TRUE(loop.Wait(30s).has_value()) << loop.stderr_text();

  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  ASSERT_FALSE(c.itt_tasks.empty()) << xtrace.stderr_text();
  // The iterations wholly inside the capture, and the primitives each ran.
  const auto windows = IterationWindows(log, attached_ns, stopping_ns);
  ASSERT_GE(windows.size(), 3u) << "too few iterations under the capture";
  std::vector<std::map<std::string, int>> per_iteration(windows.size());
  for (const NamedIttTask& t : c.itt_tasks) {
    EXPECT_EQ(t.task.pid, pid);
    EXPECT_EQ(t.domain, kOneDnnDomain);
    for (size_t i = 0; i < windows.size(); ++i)
      if (t.task.start_ns >= windows[i].first && t.task.end_ns <= windows[i].second) {
        EXPECT_TRUE(t.balanced()) << t.name << " in iteration " << i;
        ++per_iteration[i][t.name];
      }
    // Only a primitive the attach or the detach cut in two may be unbalanced.
    if (t.task.begin_missing) {
      EXPECT_LT(t.task.end_ns, windows.front().first);
    }
    if (t.task.unfinished) {
      EXPECT_GT(t.task.start_ns, windows.back().second);
    }
  }
  const auto& first = per_iteration.front();
  EXPECT_GE(first.count("convolution") ? first.at("convolution") : 0, 4)
      << "a training step runs at least two forward and two backward convolutions: "
      << Describe(per_iteration.front());
  RecordProperty("primitives_per_iteration", Describe(per_iteration.front()));
  RecordProperty("iterations_compared", static_cast<int>(per_iteration.size()));
  for (size_t i = 1; i < per_iteration.size(); ++i)
    EXPECT_EQ(per_iteration[i], per_iteration.front())
        << "iteration " << i << " of " << per_iteration.size() << " after the attach";
}

}  // namespace
}  // namespace xtrace

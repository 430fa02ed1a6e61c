// Integration tests of Python frames on each CPython xtrace reads, checked against what the
// interpreter itself says: tests/workloads/py_frames_workload.py drives the simulated GPU
// through ctypes from two threads and logs, for every launch, copy, submission and
// synchronization, the stack of its line as sys._getframe gives it; xtrace's frames of each of
// those calls (by thread and order) must be exactly those, every frame's file, qualified name
// and line. On the host's python3.11 (a table of offsets) and on Debian trixie's python3.13
// under chroot (the interpreter's own _Py_DebugOffsets), under `record` and `attach`.
// Needs root; the trixie tree comes from scripts/trixie-rootfs.sh (the ctest fixture
// trixie_rootfs); skips saying why where either is missing, fails under CI.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "log/log_reader.h"
#include "root_fixture.h"
#include "subprocess.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::PidFromReadyLine;
using testing::RootTest;
using testing::RunCommand;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kSimze = SIMZE_LIB;
const std::string kWorkloadDir = WORKLOADS_DIR;
constexpr int kIterations = 6;

std::string TrixieDir() {
  const char* env = std::getenv("XTRACE_TRIXIE_ROOT");
  return env && *env ? env : "/var/cache/xtrace/trixie";
}

// Why the trixie tree is missing, as scripts/trixie-rootfs.sh left it in DIR.failed.
std::string WhyNoTrixie() {
  std::ifstream in(TrixieDir() + ".failed");
  std::string why((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (why.empty()) return "it was not built: run scripts/trixie-rootfs.sh as root (ctest runs it)";
  return "scripts/trixie-rootfs.sh could not build it: " + why;
}

struct Version {
  std::string name;
  bool trixie = false;    // under chroot in the trixie tree
  std::string python;     // as the process sees it
  std::string minor;      // "3.11"
  std::string source;     // where xtrace takes its offsets from, as it says with --verbose
};

void PrintTo(const Version& v, std::ostream* os) { *os << v.name; }

using Stack = std::vector<std::tuple<std::string, std::string, uint32_t>>;

std::string Describe(const Stack& s) {
  std::string out;
  for (const auto& [file, function, line] : s)
    out += "  " + file + "(" + std::to_string(line) + "): " + function + "\n";
  return out;
}

// (tid, call) -> the stacks of those calls in order.
using Calls = std::map<std::pair<uint32_t, std::string>, std::vector<Stack>>;

Calls ReadStackLog(const std::string& path) {
  Calls calls;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    Stack stack;
    for (const auto& f : j["stack"])
      stack.emplace_back(f[0].get<std::string>(), f[1].get<std::string>(), f[2].get<uint32_t>());
    calls[{j["tid"].get<uint32_t>(), j["call"].get<std::string>()}].push_back(stack);
  }
  return calls;
}

// The same calls as the capture has them, with xtrace's frames ({} where it has none).
Calls ReadCaptureCalls(const std::string& path, uint64_t* stacks_seen) {
  struct Call {
    uint32_t pid, tid;
    uint64_t start_ns;
    std::string what;
  };
  std::vector<Call> order;
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, Stack> stacks;
  auto reader = LogReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return {};
  Event e;
  while (true) {
    auto more = reader->Next(&e);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    const StringTable& s = reader->strings();
    if (const auto* l = std::get_if<KernelLaunch>(&e)) {
      order.push_back({l->pid, l->tid, l->start_ns, "launch"});
    } else if (const auto* a = std::get_if<ApiCall>(&e)) {
      const char* what = a->fn == XT_ZE_APPEND_MEMORY_COPY                    ? "copy"
                         : a->fn == XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS ? "execute"
                         : a->fn == XT_ZE_COMMAND_QUEUE_SYNCHRONIZE           ? "sync"
                                                                              : nullptr;
      if (what) order.push_back({a->pid, a->tid, a->start_ns, what});
    } else if (const auto* st = std::get_if<PythonStack>(&e)) {
      ++*stacks_seen;
      Stack stack;
      for (const PythonFrame& f : st->frames)
        stack.emplace_back(std::string(s.Get(f.file)), std::string(s.Get(f.function)), f.line);
      stacks[{st->pid, st->tid, st->start_ns}] = stack;
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Call& a, const Call& b) { return a.start_ns < b.start_ns; });
  Calls calls;
  for (const Call& c : order) {
    auto it = stacks.find({c.pid, c.tid, c.start_ns});
    calls[{c.tid, c.what}].push_back(it == stacks.end() ? Stack{} : it->second);
  }
  return calls;
}

class PythonVersionsTest : public RootTest, public ::testing::WithParamInterface<Version> {
 protected:
  PythonVersionsTest() : RootTest("Python frames per CPython version", "pyversions") {}

  void SetUp() override {
    RootTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const Version& v = GetParam();
    if (v.trixie) {
      root_ = TrixieDir();
      if (!fs::exists(root_ + "/.xtrace-stamp")) {
        if (std::getenv("CI")) FAIL() << "no Debian trixie tree in " << root_ << ": " << WhyNoTrixie();
        GTEST_SKIP() << "no Debian trixie tree in " << root_ << " (XTRACE_TRIXIE_ROOT): "
                     << WhyNoTrixie();
      }
      // The scripts and the simulated GPU built here, in a directory of the tree's own.
      std::string dir = root_ + "/tmp/xtrace-pyversions-XXXXXX";
      ASSERT_NE(mkdtemp(dir.data()), nullptr);
      tree_dir_ = dir;
      inside_ = dir.substr(root_.size());
      for (const char* f : {"py_frames_workload.py", "ze_python_workload.py"})
        fs::copy_file(kWorkloadDir + "/" + f, dir + "/" + f);
      fs::copy_file(kSimze, dir + "/libxtrace_simze.so");
      script_ = inside_ + "/py_frames_workload.py";
      simze_ = inside_ + "/libxtrace_simze.so";
      stack_log_ = inside_ + "/stacks.jsonl";
    } else {
      script_ = kWorkloadDir + "/py_frames_workload.py";
      simze_ = kSimze;
      stack_log_ = Path("stacks.jsonl");
    }
    if (access((root_ + v.python).c_str(), X_OK) != 0) {
      if (std::getenv("CI")) FAIL() << root_ + v.python << " is missing";
      GTEST_SKIP() << root_ + v.python << " is not installed";
    }
  }
  void TearDown() override {
    if (!tree_dir_.empty()) fs::remove_all(tree_dir_);
    RootTest::TearDown();
  }

  // The workload's command line, `extra` after its own arguments.
  std::vector<std::string> Workload(const std::vector<std::string>& extra) const {
    std::vector<std::string> argv;
    if (GetParam().trixie) argv = {"/usr/sbin/chroot", root_};
    for (const std::string& a :
         {std::string("/usr/bin/env"), "ZE_ENABLE_ALT_DRIVERS=" + simze_, GetParam().python,
          script_, std::string("--stack-log"), stack_log_, std::string("--iterations"),
          std::to_string(kIterations)})
      argv.push_back(a);
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  // Every call the workload logged carries exactly the stack it logged; xtrace said it read
  // the interpreter with the offsets it should.
  void ExpectTheInterpretersOwnStacks(const std::string& capture, const std::string& xtrace_err) {
    const Version& v = GetParam();
    EXPECT_NE(xtrace_err.find("CPython " + v.minor + " ("), std::string::npos) << xtrace_err;
    EXPECT_NE(xtrace_err.find("offsets from " + v.source + "): Python frames"), std::string::npos)
        << xtrace_err;
    EXPECT_EQ(xtrace_err.find("no Python frames"), std::string::npos) << xtrace_err;
    const Calls logged = ReadStackLog(root_ + stack_log_);
    // Two threads, each: per iteration 3 launches, a copy or a nested launch, a submission and
    // a synchronization.
    size_t n = 0;
    for (const auto& [key, stacks] : logged) n += stacks.size();
    ASSERT_EQ(n, 2u * kIterations * 5);
    uint64_t stacks_seen = 0;
    const Calls got = ReadCaptureCalls(capture, &stacks_seen);
    ASSERT_GT(stacks_seen, 0u);
    for (const auto& [key, stacks] : logged) {
      const auto it = got.find(key);
      ASSERT_NE(it, got.end()) << "no " << key.second << " calls of thread " << key.first;
      ASSERT_EQ(it->second.size(), stacks.size()) << key.second << " of thread " << key.first;
      for (size_t i = 0; i < stacks.size(); ++i)
        EXPECT_EQ(it->second[i], stacks[i])
            << key.second << " #" << i << " of thread " << key.first << "\nxtrace:\n"
            << Describe(it->second[i]) << "the interpreter:\n" << Describe(stacks[i]);
    }
  }

  std::string root_;       // "" or the trixie tree
  std::string tree_dir_;   // the test's directory in the tree, from the host
  std::string inside_;     // the same, as the process sees it
  std::string script_, simze_, stack_log_;  // as the process sees them
};

TEST_P(PythonVersionsTest, RecordGivesTheInterpretersOwnStacks) {
  const std::string out = Path("record.capnp");
  std::vector<std::string> argv = {kXtrace, "record", "--python-frames", "--verbose", "-o", out, "--"};
  for (const std::string& a : Workload({"--linger", "1"})) argv.push_back(a);
  auto r = RunCommand(argv, {}, 180s);
  ASSERT_EQ(r.exit_code(), 0) << r.err << r.out;
  ASSERT_NE(r.out.find("done " + std::to_string(2 * kIterations * 5)), std::string::npos) << r.out;
  ExpectTheInterpretersOwnStacks(out, r.err);
}

TEST_P(PythonVersionsTest, AttachGivesTheInterpretersOwnStacks) {
  Subprocess target(Workload({"--wait", "--linger", "3"}), {}, true);
  const uint32_t pid = PidFromReadyLine(target.WaitStdout("ready", 60s));
  ASSERT_GT(pid, 0u) << target.stderr_text();
  const std::string out = Path("attach.capnp");
  Subprocess xtrace({kXtrace, "attach", "--python-frames", "--verbose", "--pid",
                     std::to_string(pid), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("attached to pid " + std::to_string(pid), 60s))
      << xtrace.stderr_text();
  ASSERT_TRUE(target.Send("go"));
  ASSERT_TRUE(target.WaitStdout("done", 90s)) << target.stderr_text();
  std::this_thread::sleep_for(1s);  // the capture reads the last records while the target lingers
  xtrace.Signal(SIGINT);
  auto status = xtrace.Wait(60s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
  ASSERT_TRUE(target.Wait(30s).has_value());
  ExpectTheInterpretersOwnStacks(out, xtrace.stderr_text());
}

INSTANTIATE_TEST_SUITE_P(
    Interpreters, PythonVersionsTest,
    ::testing::Values(Version{"host_python311", false, "/usr/bin/python3.11", "3.11", "table"},
                      Version{"trixie_python313", true, "/usr/bin/python3.13", "3.13",
                              "debug offsets"}),
    [](const ::testing::TestParamInfo<Version>& info) { return info.param.name; });

}  // namespace
}  // namespace xtrace

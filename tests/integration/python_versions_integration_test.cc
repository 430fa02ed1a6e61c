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
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "log/log_reader.h"
#include "capture_steps.h"
#include "root_fixture.h"
#include "subprocess.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::AttachRunToDoneAndStop;
using testing::PidFromReadyLine;
using testing::RootTest;
using testing::RunCommand;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kSimze = SIMZE_LIB;
const std::string kWorkloadDir = WORKLOADS_DIR;
const std::string kItt = ITT_COLLECTOR_LIB;
constexpr int kIterations = 6;
// Calls a thread of py_frames_workload.py logs: per iteration 3 launches, a copy or a nested
// launch, a submission and a synchronization; once, a launch 24 levels down a recursion
// through C (48 frames of code under the interpreter's 24 entry frames in 3.12 on); once, a
// launch from a generator (its frame on the heap, not in the thread's data stack).
constexpr int kCallsPerThread = kIterations * 5 + 2;
constexpr size_t kThroughCFrames = 48;

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
    size_t n = 0, deepest = 0;
    for (const auto& [key, stacks] : logged) {
      n += stacks.size();
      for (const Stack& s : stacks) deepest = std::max(deepest, s.size());
    }
    ASSERT_EQ(n, 2u * kCallsPerThread);
    // Entry frames take no slot: this stack fits in 64 frames only without them.
    ASSERT_GT(deepest, kThroughCFrames);
    uint64_t stacks_seen = 0;
    const Calls got = ReadCaptureCalls(capture, &stacks_seen);
    ASSERT_GT(stacks_seen, 0u) << xtrace_err;
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
  ASSERT_NE(r.out.find("done " + std::to_string(2 * kCallsPerThread)), std::string::npos) << r.out;
  ExpectTheInterpretersOwnStacks(out, r.err);
}

TEST_P(PythonVersionsTest, AttachGivesTheInterpretersOwnStacks) {
  Subprocess target(Workload({"--wait", "--linger", "3"}), {}, true);
  const uint32_t pid = PidFromReadyLine(target.WaitStdout("ready", 60s));
  ASSERT_GT(pid, 0u) << target.stderr_text();
  const std::string out = Path("attach.capnp");
  auto said = AttachRunToDoneAndStop(
      target, pid,
      {kXtrace, "attach", "--python-frames", "--verbose", "--pid", std::to_string(pid), "-o", out},
      90s);
  ASSERT_TRUE(said.ok()) << said.status().message();
  ExpectTheInterpretersOwnStacks(out, *said);
}

// The check against PyTorch's own profiler: tests/workloads/torch_profiler_check.py in the
// trixie tree (Python 3.13, PyTorch 2.6, oneDNN inside, /proc mounted in a mount namespace of
// its own, which PyTorch needs), once under torch.profiler with with_stack=True and once
// attached by xtrace with frames. For every oneDNN primitive task xtrace saw, the innermost
// frame in the model's file; for every aten op of the profiler's that runs oneDNN
// (aten::mkldnn_*), the innermost python_function event of the model's file that encloses it.
// The profiler names a function's frame "file(line): name" with the file as imported (relative
// to sys.path), the code's name, and the line the function begins on (the line its frames were
// entered at); xtrace names it by its full path, qualified name and current line. So: the
// same file, the same functions in the same order, the profiler's line the first line of the
// function xtrace's frame is in, and xtrace's line the line of that function that runs the
// convolution (marked "# op" in the script).
class PythonTorchProfilerTest : public RootTest {
 protected:
  PythonTorchProfilerTest() : RootTest("Python frames against torch.profiler", "pytorchprof") {}
  void SetUp() override {
    RootTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    root_ = TrixieDir();
    if (!fs::exists(root_ + "/.xtrace-stamp")) {
      if (std::getenv("CI")) FAIL() << "no Debian trixie tree in " << root_ << ": " << WhyNoTrixie();
      GTEST_SKIP() << "no Debian trixie tree in " << root_ << " (XTRACE_TRIXIE_ROOT): "
                   << WhyNoTrixie();
    }
    std::string dir = root_ + "/tmp/xtrace-pytorchprof-XXXXXX";
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    tree_dir_ = dir;
    inside_ = dir.substr(root_.size());
    fs::copy_file(kWorkloadDir + "/torch_profiler_check.py", dir + "/torch_profiler_check.py");
    fs::copy_file(kItt, dir + "/libxtrace_itt.so");
    ReadScript(kWorkloadDir + "/torch_profiler_check.py");
  }
  void TearDown() override {
    if (!tree_dir_.empty()) fs::remove_all(tree_dir_);
    RootTest::TearDown();
  }

  // The script's functions: where each begins, and the lines in it marked "# op".
  void ReadScript(const std::string& path) {
    std::ifstream in(path);
    uint32_t n = 0;
    std::string current;
    for (std::string line; std::getline(in, line);) {
      ++n;
      const size_t def = line.find("def ");
      if (def != std::string::npos && line.find_first_not_of(' ') == def) {
        current = line.substr(def + 4, line.find('(') - def - 4);
        def_line_[current] = n;
      }
      if (line.size() >= 4 && line.compare(line.size() - 4, 4, "# op") == 0)
        op_lines_[current].insert(n);
    }
  }

  // The workload in the tree, with /proc, `args` after the script.
  std::vector<std::string> Workload(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {
        "/usr/bin/unshare", "--mount", "--fork", "--kill-child", "/bin/sh", "-c",
        "mount -t proc proc \"$0/proc\" && exec chroot \"$0\" \"$@\"", root_, "/usr/bin/env",
        "INTEL_LIBITTNOTIFY64=" + inside_ + "/libxtrace_itt.so", "/usr/bin/python3.13",
        inside_ + "/torch_profiler_check.py", "--iterations", "3"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  struct Frame {
    std::string file, function;
    uint32_t line = 0;
  };

  std::string root_, tree_dir_, inside_;
  std::map<std::string, uint32_t> def_line_;
  std::map<std::string, std::set<uint32_t>> op_lines_;
};

std::string Show(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + " ";
  return s;
}

// Consecutive equal entries as one: a convolution may run several oneDNN primitives (reorders).
std::vector<std::string> Collapsed(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const auto& x : v)
    if (out.empty() || out.back() != x) out.push_back(x);
  return out;
}

TEST_F(PythonTorchProfilerTest, InnermostModelFramesOfOneDnnTasksAreTheProfilers) {
  ASSERT_EQ(def_line_.count("block") + def_line_.count("forward") + def_line_.count("head"), 3u);
  const std::string script = "torch_profiler_check.py";

  // 1. PyTorch's profiler.
  auto prof = RunCommand(Workload({"--profile", inside_ + "/trace.json", "--linger", "0"}), {}, 240s);
  ASSERT_EQ(prof.exit_code(), 0) << prof.err << prof.out;
  std::vector<Frame> profiler;
  {
    std::ifstream in(tree_dir_ + "/trace.json");
    const auto trace = nlohmann::json::parse(in);
    struct Slice {
      double ts, end;
      uint64_t tid;
      std::string name;
    };
    std::vector<Slice> python, ops;
    for (const auto& e : trace["traceEvents"]) {
      const std::string cat = e.value("cat", "");
      if (cat != "python_function" && cat != "cpu_op") continue;
      const std::string name = e.value("name", "");
      const Slice s{e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>(),
                    e["tid"].is_number() ? e["tid"].get<uint64_t>() : 0, name};
      if (cat == "python_function" && name.rfind(script + "(", 0) == 0) python.push_back(s);
      if (cat == "cpu_op" && name.rfind("aten::mkldnn_", 0) == 0) ops.push_back(s);
    }
    std::sort(ops.begin(), ops.end(), [](const Slice& a, const Slice& b) { return a.ts < b.ts; });
    for (const Slice& op : ops) {
      const Slice* inner = nullptr;
      for (const Slice& p : python)
        if (p.tid == op.tid && p.ts <= op.ts && op.ts <= p.end && (!inner || p.ts > inner->ts))
          inner = &p;
      ASSERT_NE(inner, nullptr) << "no frame of " << script << " around " << op.name << " at " << op.ts;
      // "file(line): name"
      const size_t open = inner->name.find('('), close = inner->name.find("): ");
      profiler.push_back({inner->name.substr(0, open), inner->name.substr(close + 3),
                          static_cast<uint32_t>(std::stoul(inner->name.substr(open + 1, close - open - 1)))});
    }
  }
  ASSERT_FALSE(profiler.empty()) << "no aten::mkldnn_* ops in the profiler's trace";

  // 2. xtrace, attached to the same model running.
  Subprocess target(Workload({"--wait", "--linger", "3"}), {}, true);
  const uint32_t pid = PidFromReadyLine(target.WaitStdout("ready", 120s));
  ASSERT_GT(pid, 0u) << target.stderr_text();
  const std::string out = Path("attach.capnp");
  auto said = AttachRunToDoneAndStop(
      target, pid, {kXtrace, "attach", "--python-frames", "--pid", std::to_string(pid), "-o", out},
      120s);
  ASSERT_TRUE(said.ok()) << said.status().message();
  EXPECT_EQ(said->find("no Python frames"), std::string::npos) << *said;

  std::vector<Frame> traced;
  {
    auto reader = LogReader::Open(out);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    std::vector<std::tuple<uint64_t, uint32_t, std::string>> tasks;  // start, tid, name
    std::map<std::tuple<uint32_t, uint32_t, uint64_t>, std::vector<Frame>> stacks;
    Event e;
    while (true) {
      auto more = reader->Next(&e);
      ASSERT_TRUE(more.ok()) << more.status().message();
      if (!*more) break;
      const StringTable& s = reader->strings();
      if (const auto* t = std::get_if<IttTask>(&e)) {
        if (t->pid == pid && s.Get(t->domain) == "dnnl::primitive::execute")
          tasks.emplace_back(t->start_ns, t->tid, std::string(s.Get(t->name)));
      } else if (const auto* st = std::get_if<PythonStack>(&e)) {
        std::vector<Frame> frames;
        for (const PythonFrame& f : st->frames)
          frames.push_back({std::string(s.Get(f.file)), std::string(s.Get(f.function)), f.line});
        stacks[{st->pid, st->tid, st->start_ns}] = frames;
      }
    }
    std::sort(tasks.begin(), tasks.end());
    ASSERT_FALSE(tasks.empty()) << "no oneDNN tasks (domain dnnl::primitive::execute) of pid " << pid << "\n"
                                << *said;
    for (const auto& [start, tid, name] : tasks) {
      auto it = stacks.find({pid, tid, start});
      ASSERT_NE(it, stacks.end()) << "no Python frames for oneDNN task " << name;
      const Frame* user = nullptr;
      for (const Frame& f : it->second)
        if (f.file == inside_ + "/" + script) {
          user = &f;
          break;
        }
      ASSERT_NE(user, nullptr) << "no frame of " << script << " for oneDNN task " << name;
      traced.push_back(*user);
    }
  }

  // 3. The same functions in the same order, each frame of the same file and line.
  std::vector<std::string> by_profiler, by_xtrace;
  for (const Frame& f : profiler) {
    by_profiler.push_back(f.function);
    EXPECT_EQ(f.file, script);
    ASSERT_TRUE(def_line_.count(f.function)) << f.function;
    EXPECT_EQ(f.line, def_line_.at(f.function)) << f.function;
  }
  for (const Frame& f : traced) {
    // The qualified name's last part is the code's name the profiler gives.
    const std::string name = f.function.substr(f.function.rfind('.') + 1);
    by_xtrace.push_back(name);
    EXPECT_EQ(f.file, inside_ + "/" + script);
    EXPECT_EQ(f.function, "Model." + name);
    EXPECT_TRUE(op_lines_[name].count(f.line)) << f.function << " line " << f.line;
    EXPECT_GT(f.line, def_line_[name]) << f.function;
  }
  EXPECT_EQ(Show(Collapsed(by_xtrace)), Show(Collapsed(by_profiler)));
  EXPECT_EQ(Collapsed(by_profiler).size(), 9u) << Show(by_profiler);  // 3 convolutions x 3 iterations
}

INSTANTIATE_TEST_SUITE_P(
    Interpreters, PythonVersionsTest,
    ::testing::Values(Version{"host_python311", false, "/usr/bin/python3.11", "3.11", "table"},
                      // The same CPython linked as Fedora's or pyenv's: the executable needs
                      // libpython, which holds the interpreter.
                      Version{"host_python311_shared", false, SHARED_PYTHON_BIN, "3.11", "table"},
                      Version{"trixie_python313", true, "/usr/bin/python3.13", "3.13",
                              "debug offsets"}),
    [](const ::testing::TestParamInfo<Version>& info) { return info.param.name; });

}  // namespace
}  // namespace xtrace

// Integration tests for Python frames: a Python program drives the simulated GPU through ctypes
// on the real Level Zero loader (tests/workloads/ze_python_workload.py), under `record` and
// `attach` with --python-frames; every launch, copy, submission and synchronization must carry
// the Python frames of the lines that made them, which the script marks with "# xt:NAME"
// comments. Also: the frames reach the Chrome trace as python_function slices around the calls
// and the device slices name the launching line; without --python-frames there are none.
// Needs root and /usr/bin/python3.11; skips with the reason elsewhere.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <regex>
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

using namespace std::chrono_literals;
using testing::AttachRunToDoneAndStop;
using testing::PidFromReadyLine;
using testing::RootTest;
using testing::RunCommand;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kScript = ZE_PYTHON_WORKLOAD;
const std::string kSimulatedGpu = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;
const std::string kPython = "/usr/bin/python3.11";
constexpr int kIterations = 5;

// "xt:NAME" -> its line in the script.
std::map<std::string, uint32_t> MarkedLines() {
  std::map<std::string, uint32_t> lines;
  std::ifstream in(kScript);
  uint32_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    const size_t at = line.find("# xt:");
    if (at != std::string::npos) lines[line.substr(at + 5)] = n;
  }
  return lines;
}

struct Frame {
  std::string file, function;
  uint32_t line = 0;
};

struct Call {
  std::string what;  // kernel name, or the Level Zero function number
  uint32_t pid = 0, tid = 0;
  uint64_t start_ns = 0;
};

struct Capture {
  std::vector<Call> launches, copies, executes, syncs, itt_tasks;
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, std::vector<Frame>> stacks;
  uint64_t stack_events = 0;
};

Capture ReadCapture(const std::string& path) {
  Capture c;
  auto reader = LogReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return c;
  Event e;
  while (true) {
    auto more = reader->Next(&e);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    const StringTable& s = reader->strings();
    if (const auto* l = std::get_if<KernelLaunch>(&e)) {
      c.launches.push_back({std::string(s.Get(l->kernel_name)), l->pid, l->tid, l->start_ns});
    } else if (const auto* a = std::get_if<ApiCall>(&e)) {
      const Call call{std::to_string(a->fn), a->pid, a->tid, a->start_ns};
      if (a->fn == XT_ZE_APPEND_MEMORY_COPY) c.copies.push_back(call);
      if (a->fn == XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS) c.executes.push_back(call);
      if (a->fn == XT_ZE_COMMAND_QUEUE_SYNCHRONIZE) c.syncs.push_back(call);
    } else if (const auto* t = std::get_if<IttTask>(&e)) {
      c.itt_tasks.push_back({std::string(s.Get(t->name)), t->pid, t->tid, t->start_ns});
    } else if (const auto* st = std::get_if<PythonStack>(&e)) {
      ++c.stack_events;
      std::vector<Frame> frames;
      for (const PythonFrame& f : st->frames)
        frames.push_back({std::string(s.Get(f.file)), std::string(s.Get(f.function)), f.line});
      c.stacks[{st->pid, st->tid, st->start_ns}] = frames;
    }
  }
  return c;
}

std::string Describe(const std::vector<Frame>& frames) {
  std::string s;
  for (const Frame& f : frames) s += f.file + "(" + std::to_string(f.line) + "): " + f.function + "\n";
  return s;
}

class PythonIntegrationTest : public RootTest {
 protected:
  PythonIntegrationTest() : RootTest("Python frames", "python") {}
  void SetUp() override {
    RootTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (access(kPython.c_str(), X_OK) != 0) {
      if (getenv("CI")) FAIL() << kPython << " is missing; scripts/install-deps.sh installs it";
      GTEST_SKIP() << kPython << " is not installed";
    }
    lines_ = MarkedLines();
    ASSERT_EQ(lines_.size(), 11u) << "markers in " << kScript;
  }

  // The calls of `calls` each carry the stack whose innermost frames are `expected` (function,
  // marker) pairs, innermost first; the launches' second frame depends on the kernel.
  void ExpectStacks(const Capture& c, const std::vector<Call>& calls, size_t count,
                    const std::vector<std::pair<std::string, std::string>>& expected,
                    const std::map<std::string, std::string>& second_by_kernel = {}) {
    ASSERT_EQ(calls.size(), count);
    std::map<uint32_t, size_t> second_lines;
    for (const Call& call : calls) {
      auto it = c.stacks.find({call.pid, call.tid, call.start_ns});
      ASSERT_NE(it, c.stacks.end()) << "no Python frames for call " << call.what << " at "
                                    << call.start_ns;
      const std::vector<Frame>& frames = it->second;
      ASSERT_GE(frames.size(), expected.size() + 1) << Describe(frames);  // and <module>
      for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(frames[i].file, kScript) << Describe(frames);
        EXPECT_EQ(frames[i].function, expected[i].first) << Describe(frames);
        if (i == 1 && !second_by_kernel.empty()) {
          // A kernel created before an attach is not named: its launch is from either line,
          // and the lines are counted below.
          if (second_by_kernel.count(call.what)) {
            EXPECT_EQ(frames[i].line, lines_.at(second_by_kernel.at(call.what))) << Describe(frames);
          }
          ++second_lines[frames[i].line];
          continue;
        }
        EXPECT_EQ(frames[i].line, lines_.at(expected[i].second))
            << expected[i].second << "\n" << Describe(frames);
      }
      EXPECT_EQ(frames.back().function, "<module>") << Describe(frames);
    }
    if (second_by_kernel.empty()) return;
    std::map<uint32_t, size_t> each;
    for (const auto& [kernel, marker] : second_by_kernel) each[lines_.at(marker)] = count / 2;
    EXPECT_EQ(second_lines, each);
  }

  void ExpectEveryCallPlaced(const Capture& c) {
    const std::map<std::string, std::string> step_line = {{"xt_py_scale", "step-scale"},
                                                          {"xt_py_gemm", "step-gemm"}};
    ExpectStacks(c, c.launches, 2 * kIterations,
                 {{"Gpu.launch", "launch"}, {"step", ""}, {"run", "run-step"}, {"main", "main-run"}},
                 step_line);
    ExpectStacks(c, c.copies, kIterations,
                 {{"Gpu.copy", "copy"}, {"step", "step-copy"}, {"run", "run-step"}});
    ExpectStacks(c, c.executes, kIterations,
                 {{"Gpu.submit_and_wait", "execute"}, {"run", "run-wait"}, {"main", "main-run"}});
    ExpectStacks(c, c.syncs, kIterations,
                 {{"Gpu.submit_and_wait", "sync"}, {"run", "run-wait"}, {"main", "main-run"}});
  }

  std::map<std::string, uint32_t> lines_;
};

// Frames are on by default: nothing asks for them here.
TEST_F(PythonIntegrationTest, RecordPlacesEveryCallUnderTheLineThatMadeIt) {
  const std::string out = Path("record.capnp");
  auto r = RunCommand({kXtrace, "record", "-o", out, "--", "/usr/bin/env",
                       kSimulatedGpu, kPython, kScript, "--iterations", std::to_string(kIterations)},
                      {}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err << r.out;
  ASSERT_NE(r.out.find("done " + std::to_string(kIterations)), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("no Python frames"), std::string::npos) << r.err;
  const Capture c = ReadCapture(out);
  ExpectEveryCallPlaced(c);
  // The summary says how many stacks were resolved (each launch's among them).
  std::smatch said;
  ASSERT_TRUE(std::regex_search(r.err, said, std::regex(" Python frames: ([0-9]+) stacks resolved[,;]")))
      << r.err;
  EXPECT_GE(std::stoul(said[1]), static_cast<size_t>(kIterations)) << r.err;
  // The calls of an iteration are made a frame or two apart under the same outer frames, which
  // BPF writes once per thread rather than with every stack (63 of 115 frames when written).
  ASSERT_TRUE(std::regex_search(r.err, said, std::regex("; ([0-9]+) frames in the stacks, ([0-9]+) of "
                                                        "them the same as in their thread's stack before")))
      << r.err;
  EXPECT_GT(3 * std::stoul(said[2]), std::stoul(said[1])) << r.err;

  // The Chrome trace: the frames as python_function slices, the innermost around each launch.
  const std::string json = Path("record.json");
  auto conv = RunCommand({kXtrace, "convert", out, "-o", json});
  ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  std::ifstream in(json);
  const auto trace = nlohmann::json::parse(in);
  const std::string launch_name =
      kScript + "(" + std::to_string(lines_.at("launch")) + "): Gpu.launch";
  std::vector<std::pair<double, double>> launch_slices;
  std::vector<double> launch_calls;
  std::set<std::string> device_lines;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") == "python_function" && e.value("name", "") == launch_name)
      launch_slices.emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
    if (e.value("ph", "") == "X" && e.value("name", "") == "xt_py_gemm" && e.contains("args")) {
      if (e["args"].contains("stream")) device_lines.insert(e["args"].value("python", ""));
      else launch_calls.push_back(e["ts"].get<double>());
    }
  }
  ASSERT_EQ(launch_calls.size(), static_cast<size_t>(kIterations));
  for (double ts : launch_calls) {
    bool enclosed = false;
    for (const auto& [b, e] : launch_slices) enclosed = enclosed || (b <= ts && ts <= e);
    EXPECT_TRUE(enclosed) << "launch at " << ts << " outside every " << launch_name << " slice";
  }
  // The device slice names the innermost user frame: the launch line inside Gpu.launch.
  EXPECT_EQ(device_lines, (std::set<std::string>{launch_name})) << json;
}

TEST_F(PythonIntegrationTest, AttachPlacesEveryCallUnderTheLineThatMadeIt) {
  Subprocess target({"/usr/bin/env", kSimulatedGpu, kPython, kScript, "--iterations",
                     std::to_string(kIterations), "--wait", "--linger", "3"},
                    {}, true);
  const uint32_t pid = PidFromReadyLine(target.WaitStdout("ready", 60s));
  ASSERT_GT(pid, 0u) << target.stderr_text();
  const std::string out = Path("attach.capnp");
  auto said = AttachRunToDoneAndStop(
      target, pid, {kXtrace, "attach", "--python-frames", "--pid", std::to_string(pid), "-o", out},
      60s);
  ASSERT_TRUE(said.ok()) << said.status().message();
  EXPECT_EQ(said->find("no Python frames"), std::string::npos) << *said;
  ExpectEveryCallPlaced(ReadCapture(out));
}

// Real PyTorch (Debian's python3-torch on python3.11): every oneDNN primitive's ITT task carries
// the model's line that ran it, past the frames inside torch/.
TEST_F(PythonIntegrationTest, OneDnnTasksOfRealPyTorchCarryTheModelsLines) {
  if (access("/usr/lib/python3/dist-packages/torch/__init__.py", R_OK) != 0) {
    if (getenv("CI")) FAIL() << "python3-torch is missing; scripts/install-deps.sh installs it";
    GTEST_SKIP() << "python3-torch is not installed";
  }
  // The lines of torch_model.py that run the model: inference, forward, backward.
  std::set<uint32_t> model_lines;
  {
    std::ifstream in(TORCH_MODEL_SCRIPT);
    uint32_t n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      if (line.find("model(x)") != std::string::npos || line.find("loss.backward()") != std::string::npos)
        model_lines.insert(n);
    }
  }
  ASSERT_EQ(model_lines.size(), 3u);
  const std::string out = Path("torch.capnp");
  auto r = RunCommand({kXtrace, "record", "--python-frames", "-o", out, "--", "/usr/bin/env",
                       "INTEL_LIBITTNOTIFY64=" ITT_COLLECTOR_LIB, kPython, "-c",
                       "import runpy, sys, time\n"
                       "sys.argv = ['torch_model.py', '--iterations', '3', '--train-steps', '2']\n"
                       "runpy.run_path('" TORCH_MODEL_SCRIPT "', run_name='__main__')\n"
                       "time.sleep(1)\n"},
                      {}, 240s);
  ASSERT_EQ(r.exit_code(), 0) << r.err << r.out;
  const Capture c = ReadCapture(out);
  ASSERT_FALSE(c.itt_tasks.empty()) << r.err;
  std::set<uint32_t> seen;
  for (const Call& task : c.itt_tasks) {
    auto it = c.stacks.find({task.pid, task.tid, task.start_ns});
    ASSERT_NE(it, c.stacks.end()) << "no Python frames for task " << task.what;
    const Frame* user = nullptr;
    for (const Frame& f : it->second) {
      if (f.file.find("torch/") == std::string::npos && f.file.find("runpy") == std::string::npos) {
        user = &f;
        break;
      }
    }
    ASSERT_NE(user, nullptr) << Describe(it->second);
    EXPECT_EQ(user->file, TORCH_MODEL_SCRIPT) << Describe(it->second);
    EXPECT_EQ(user->function, "main") << Describe(it->second);
    EXPECT_TRUE(model_lines.count(user->line)) << Describe(it->second);
    seen.insert(user->line);
  }
  EXPECT_EQ(seen, model_lines);
}

// --no-python-frames: none.
TEST_F(PythonIntegrationTest, NoPythonFramesWhenTurnedOff) {
  const std::string out = Path("off.capnp");
  auto r = RunCommand({kXtrace, "record", "--no-python-frames", "-o", out, "--", "/usr/bin/env",
                       kSimulatedGpu, kPython, kScript, "--iterations", "2", "--linger", "0.3"},
                      {}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err << r.out;
  const Capture c = ReadCapture(out);
  EXPECT_EQ(c.launches.size(), 4u);
  EXPECT_EQ(c.stack_events, 0u);
  EXPECT_EQ(r.err.find("Python frames:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace xtrace

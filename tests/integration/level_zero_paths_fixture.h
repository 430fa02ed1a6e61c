// What the Level Zero paths tests share: the two workloads (ze_sycl_v2, shaped like SYCL's v2
// adapter; ze_sycl_legacy, like its legacy adapter) run under `record` or attached to with
// `attach`, on the host's loader (Debian bookworm, 1.8.12) or Debian trixie's 1.20.6 in the
// root file system scripts/trixie-rootfs.sh builds (under chroot, in a podman container,
// under Charliecloud), and what each run must show (level_zero_paths_checks.cc). The tests
// are in level_zero_paths_integration_test.cc (the v2 shape) and
// level_zero_paths_tables_integration_test.cc (the legacy shape: the exports and the tables).
// Needs root; skips with the reason elsewhere, fails under CI.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "capture_reader.h"
#include "log_contents.h"
#include "root_fixture.h"
#include "subprocess.h"
#include "trixie_tree.h"
#include "xtrace/records.h"

namespace xtrace::zepaths_test {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::Capture;
using testing::PidFromReadyLine;
using testing::ReadLaunchLog;
using testing::ReadWholeCapture;
using testing::RootTest;
using testing::RunCommand;
using testing::RunResult;
using testing::Sorted;
using testing::Subprocess;
using testing::TrixieDir;
using testing::TrixieRoot;
using testing::WhyNoTrixie;

inline const std::string kXtrace = XTRACE_BIN;
inline const std::string kWorkload = ZE_SYCL_V2_BIN;
inline const std::string kLegacy = ZE_SYCL_LEGACY_BIN;
inline const std::string kSimze = SIMZE_LIB;
constexpr int kIterations = 3;
// 3 with arguments, 1 in the appended list, 2 in the replayed graph
constexpr size_t kLaunchesPerIteration = 6;  // (of the 3, the last with parameters)
constexpr size_t kGraphLaunches = 2;
// ze_sycl_legacy: 2 on the queue, 1 on the immediate list, 1 in the batched list
constexpr size_t kLegacyLaunchesPerIteration = 4;
// and a multiple-indirect launch in the queue's list, one device operation named after the call
constexpr const char* kMultipleIndirect = "zeCommandListAppendLaunchMultipleKernelsIndirect";
// Calls ze_sycl_legacy makes every iteration where the loader has
// zeCommandListImmediateAppendCommandListsExp (without it, one more execution and fence wait).
inline const std::map<uint16_t, size_t> kLegacyCallsPerIteration = {
    {XT_ZE_COMMAND_LIST_RESET, 2},
    {XT_ZE_COMMAND_LIST_CLOSE, 2},
    {XT_ZE_APPEND_LAUNCH_MULTIPLE_KERNELS_INDIRECT, 1},
    {XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, 1},
    {XT_ZE_FENCE_HOST_SYNCHRONIZE, 1},
    {XT_ZE_EVENT_HOST_SYNCHRONIZE, 4},
    {XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP, 4},
    {XT_ZE_EVENT_HOST_RESET, 4},
    {XT_ZE_DEVICE_GET_GLOBAL_TIMESTAMPS, 1},
};

// Kernels appended once and run every iteration: the appended regular list's (gemm) and the
// graph's (softmax); the launch log lists them at every run.
inline bool InRegularList(const std::string& launch) { return launch.find("gemm") != std::string::npos; }
inline bool InGraph(const std::string& launch) { return launch.find("softmax") != std::string::npos; }
inline bool Replayed(const std::string& launch) { return InRegularList(launch) || InGraph(launch); }

inline size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class LevelZeroPathsTest : public RootTest {
 protected:
  LevelZeroPathsTest() : RootTest("Level Zero paths", "zepaths") {}

  // A run of the workload under `record`: `prefix` goes before it (e.g. chroot DIR), `log`
  // is its launch log as the workload names it, `host_log` the same file from here. xtrace
  // (and so the workload, unless `prefix` says otherwise) runs with the simulated GPU built
  // here, which xtrace also reads the device clock through.
  struct Run {
    RunResult result;
    uint32_t pid = 0;
    Capture capture;
    std::vector<std::string> expected;  // its launch log, sorted, without tids
  };
  Run Record(const std::vector<std::string>& prefix, const std::string& workload,
             const std::string& log, const std::string& host_log,
             const std::vector<std::string>& env = {},
             const std::vector<std::string>& options = {},
             const std::vector<std::string>& xtrace_options = {}) {
    Run run;
    const std::string out = Path("run.capnp");
    std::vector<std::string> argv = {kXtrace, "record", "-o", out};
    argv.insert(argv.end(), xtrace_options.begin(), xtrace_options.end());
    argv.push_back("--");
    argv.insert(argv.end(), prefix.begin(), prefix.end());
    for (const std::string& a : {workload, std::string("--iterations"), std::to_string(kIterations),
                                 std::string("--launch-log"), log})
      argv.push_back(a);
    argv.insert(argv.end(), options.begin(), options.end());
    std::vector<std::string> full_env = env;
    full_env.push_back("ZE_ENABLE_ALT_DRIVERS=" + kSimze);
    run.result = RunCommand(argv, full_env, 120s);
    const size_t ready = run.result.out.find("ready ");
    if (ready != std::string::npos)
      run.pid = PidFromReadyLine(run.result.out.substr(ready, run.result.out.find('\n', ready) - ready));
    run.capture = ReadWholeCapture(out);
    run.expected = ReadLaunchLog(host_log, /*strip_tid=*/true);
    return run;
  }

  // A run of the workload that makes every lookup and object, says ready and waits; xtrace
  // attaches to it then (`attach --pid`), and the workload launches once signalled. `prefix`,
  // `workload`, `log` and `host_log` as for Record; result.out is the workload's output,
  // result.err xtrace's. With `bystanders`, that many more processes of the workload, started
  // after it and waiting before their zeInit, are given to the same attach, and the workload
  // is signalled as soon as the attach's first scan has probed it (the scan's line about its
  // DRM ioctls), while the scan still goes on to them; they are killed once it is done.
  Run Attach(const std::vector<std::string>& prefix, const std::string& workload,
             const std::string& log, const std::string& host_log,
             const std::vector<std::string>& options = {},
             const std::vector<std::string>& xtrace_options = {}, int bystanders = 0) {
    Run run;
    const std::string out = Path("run.capnp");
    std::vector<std::string> argv = prefix;
    for (const std::string& a : {workload, std::string("--wait-for-signal"), std::string("--iterations"),
                                 std::to_string(kIterations), std::string("--launch-log"), log})
      argv.push_back(a);
    argv.insert(argv.end(), options.begin(), options.end());
    Subprocess target(argv, {"ZE_ENABLE_ALT_DRIVERS=" + kSimze});
    const auto ready = target.WaitStdout("ready ", 60s);
    run.pid = ready ? PidFromReadyLine(*ready) : 0;
    if (run.pid == 0) {
      ADD_FAILURE() << "the workload never said ready: " << target.stderr_text();
      return run;
    }
    std::vector<std::string> xtrace_argv = {kXtrace, "attach", "--pid", std::to_string(run.pid),
                                            "-o", out};
    std::vector<std::unique_ptr<Subprocess>> others;
    for (int i = 0; i < bystanders; ++i) {
      others.push_back(std::make_unique<Subprocess>(
          std::vector<std::string>{workload, "--wait-before-init"},
          std::vector<std::string>{"ZE_ENABLE_ALT_DRIVERS=" + kSimze}));
      const auto line = others.back()->WaitStdout("ready ", 60s);
      const uint32_t pid = line ? PidFromReadyLine(*line) : 0;
      if (pid == 0) {
        ADD_FAILURE() << "a bystander never said ready: " << others.back()->stderr_text();
        return run;
      }
      xtrace_argv.insert(xtrace_argv.end(), {"--pid", std::to_string(pid)});
    }
    xtrace_argv.insert(xtrace_argv.end(), xtrace_options.begin(), xtrace_options.end());
    Subprocess xtrace(xtrace_argv, {"ZE_ENABLE_ALT_DRIVERS=" + kSimze});
    const std::string go = bystanders ? "tracing the DRM ioctls of pid " + std::to_string(run.pid)
                                      : "attached to pid " + std::to_string(run.pid);
    EXPECT_TRUE(xtrace.WaitStderr(go, 60s)) << xtrace.stderr_text();
    kill(static_cast<pid_t>(run.pid), SIGUSR1);  // the workload itself (chroot execs it)
    const auto status = target.Wait(120s);
    for (auto& other : others) {
      other->Signal(SIGKILL);
      EXPECT_TRUE(other->Wait(60s).has_value());
    }
    run.result.status = status ? *status : -1;
    run.result.out = target.stdout_text();
    // xtrace ends when its one target has exited; SIGINT in case it has not seen it yet.
    if (!xtrace.Wait(10s)) {
      xtrace.Signal(SIGINT);
      EXPECT_TRUE(xtrace.Wait(60s).has_value()) << xtrace.stderr_text();
    }
    run.result.err = xtrace.stderr_text();
    run.capture = ReadWholeCapture(out);
    run.expected = ReadLaunchLog(host_log, /*strip_tid=*/true);
    return run;
  }

  // Every launch named as the workload logged it; every device operation of the process on
  // the one immediate list's engine; the launches with events measured, the rest bounded; the
  // graph's kernels at every replay, tied to it. `attached`: xtrace attached after the regular
  // list (gemm) and the graph were recorded, so the list's executions are not seen (what a
  // list recorded before the capture holds is not known), and each replay of the graph is one
  // operation that says its contents are unknown.
  void ExpectEveryLaunch(const Run& run, bool attached = false,
                         uint16_t host_function_fn = XT_ZE_APPEND_HOST_FUNCTION);

  // ExpectEveryLaunch on trixie's loader 1.20, seen by xtrace at `root` + its path (the tree's
  // directory under chroot; "" where the process's own root is the tree): that loader was
  // probed, and the entry points bookworm's lacks were captured through it.
  void ExpectEveryLaunchOnTrixiesLoader(const Run& run, const std::string& root);

  // ze_sycl_legacy's run: every launch named once (cooperative and plain as launched), each
  // kernel on its engine (the queue's list's two on the queue, the cooperative one on the
  // immediate list, the batched list's on the immediate list where
  // zeCommandListImmediateAppendCommandListsExp exists, else on the queue), measured from the
  // pooled timestamp events, seen complete, and tied to the call that submitted it and the
  // one that saw it done (the trace's flows).
  void ExpectEveryLegacyLaunch(const Run& run, bool immediate_append);

  // ze_sycl_legacy attached after it took its tables, with --verbose: the copy the capture
  // says it found ("... before xtrace saw it: one is at 0x..."), which of the copy finder's
  // rules took it (table_copies.h: a run from a table's first function, or a whole copy of
  // the dispatch beyond the loader's own) as its --verbose line for that copy says, and that
  // it lies in the tables the workload says it keeps ("tables_at=0x...-0x...").
  static void ExpectFoundInTheTablesItKeeps(const Run& run) {
    const std::string said = "before xtrace saw it: one is at ";
    const size_t at = run.result.err.find(said);
    ASSERT_NE(at, std::string::npos) << run.result.err;
    const uint64_t found = std::strtoull(run.result.err.c_str() + at + said.size(), nullptr, 16);
    const size_t kept = run.result.out.find("tables_at=");
    ASSERT_NE(kept, std::string::npos) << run.result.out;
    char* end = nullptr;
    const uint64_t start = std::strtoull(run.result.out.c_str() + kept + 10, &end, 16);
    const uint64_t stop = std::strtoull(end + 1, nullptr, 16);
    EXPECT_GE(found, start) << run.result.out << run.result.err;
    EXPECT_LT(found, stop) << run.result.out << run.result.err;
    char hex[32];
    std::snprintf(hex, sizeof(hex), "%#llx", static_cast<unsigned long long>(found));
    const size_t line = run.result.err.find(std::string("in its order, at ") + hex + " (");
    ASSERT_NE(line, std::string::npos) << "no --verbose line for the copy: " << run.result.err;
    const std::string text = run.result.err.substr(line, run.result.err.find('\n', line) - line);
    EXPECT_EQ(text.find("a whole copy"), std::string::npos)
        << "taken for a whole copy of the dispatch, not a table from its start: " << text;
  }

  // Calls of `fn` the process made, successful or not.
  static size_t CallCount(const Run& run, uint16_t fn) {
    size_t n = 0;
    for (const ApiCall& c : run.capture.calls) n += c.pid == run.pid && c.fn == fn ? 1 : 0;
    return n;
  }

  // The trixie tree, or "" once the test is skipped (failed under CI) for want of it.
  std::string TrixieRootOrSkip() {
    const std::string root = TrixieRoot();
    if (root.empty())
      SkipWithout("Debian trixie tree in " + TrixieDir() + " (XTRACE_TRIXIE_ROOT)", WhyNoTrixie());
    return root;
  }

  // Whether podman and runc are installed; when not, the test is skipped (failed under CI).
  bool PodmanOrSkip() {
    if (access("/usr/bin/podman", X_OK) == 0 &&
        (access("/usr/sbin/runc", X_OK) == 0 || access("/usr/bin/runc", X_OK) == 0))
      return true;
    SkipWithout("podman and runc", "scripts/install-deps.sh installs them");
    return false;
  }

  // `workload` and the simulated GPU built here, copied into a directory of the trixie tree
  // of this test's own (removed when the test ends). `dir` is its path here, `inside` in the
  // tree.
  struct TreeCopy {
    std::string dir, inside;
  };
  TreeCopy CopyIntoTrixieTree(const std::string& root, const std::string& workload) {
    std::string dir = root + "/tmp/xtrace-zepaths-XXXXXX";
    if (!mkdtemp(dir.data())) {
      ADD_FAILURE() << "mkdtemp in " << root << "/tmp: " << std::strerror(errno);
      return {};
    }
    tree_dirs_.push_back(dir);
    CopyBinaries(dir, workload);
    return {dir, dir.substr(root.size())};
  }

  // The same copies in the test's own directory "xt", to bind-mount into a container.
  std::string CopyToBind(const std::string& workload) {
    const std::string dir = Path("xt");
    EXPECT_TRUE(fs::create_directory(dir)) << dir;
    CopyBinaries(dir, workload);
    return dir;
  }

  // `podman run` of a container whose root is the trixie tree (over an overlay, so the tree
  // stays as built) with `dir` at /xt, the simulated GPU there its driver, and `options`; the
  // command to put before the workload. The container is removed when the test ends.
  std::vector<std::string> PodmanRun(const std::string& root, const std::string& dir,
                                     const std::vector<std::string>& options = {}) {
    const std::string conf = Path("containers.conf");
    { std::ofstream(conf) << "[containers]\ndefault_ulimits = []\n"; }
    setenv("CONTAINERS_CONF", conf.c_str(), 1);
    container_ = "xtrace-zepaths-" + std::to_string(getpid());
    std::vector<std::string> argv = {"/usr/bin/podman", "--runtime", "runc", "run", "--rm",
                                     "--cgroup-manager=cgroupfs", "--network=none"};
    argv.insert(argv.end(), options.begin(), options.end());
    for (const std::string& a : {std::string("--name"), container_, std::string("-v"), dir + ":/xt",
                                 std::string("-e"), std::string("ZE_ENABLE_ALT_DRIVERS=/xt/libxtrace_simze.so"),
                                 std::string("--rootfs"), root + ":O"})
      argv.push_back(a);
    return argv;
  }

  void TearDown() override {
    if (!container_.empty()) {
      (void)RunCommand({"/usr/bin/podman", "rm", "-f", "-t", "0", container_}, {});
      unsetenv("CONTAINERS_CONF");
    }
    for (const std::string& d : tree_dirs_) fs::remove_all(d);
    RootTest::TearDown();
  }

  static bool Called(const Run& run, uint16_t fn) {
    for (const ApiCall& c : run.capture.calls)
      if (c.pid == run.pid && c.fn == fn && c.result == 0) return true;
    return false;
  }

 private:
  void SkipWithout(const std::string& what, const std::string& why) {
    if (std::getenv("CI")) FAIL() << "no " << what << ": " << why;
    GTEST_SKIP() << "no " << what << ": " << why;
  }

  static void CopyBinaries(const std::string& dir, const std::string& workload) {
    fs::copy_file(workload, dir + "/" + fs::path(workload).filename().string());
    fs::copy_file(kSimze, dir + "/libxtrace_simze.so");
  }

  std::vector<std::string> tree_dirs_;
  std::string container_;
};

}  // namespace xtrace::zepaths_test

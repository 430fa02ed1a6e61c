// What the daemon's integration tests share: the programs they run, `xtrace ctl` as root or as
// another user, and the fixture that starts a daemon on a socket and output directory of its
// own. The tests are in daemon_integration_test.cc (control, rotation, targets that die,
// descriptors and BPF objects left behind) and daemon_access_integration_test.cc (who may
// control it, whose processes a user captures, hostile clients).
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "log_contents.h"
#include "process_resources.h"
#include "root_fixture.h"
#include "subprocess.h"

namespace xtrace::daemon_test {

using namespace std::chrono_literals;
using testing::BpfDescriptors;
using testing::CountOpenFds;
using testing::LogContents;
using testing::ReadLaunchLog;
using testing::ReadLogContents;
using testing::PidFromReadyLine;
using testing::RootTest;
using testing::RunCommand;
using testing::RunResult;
using testing::SettledFdCount;
using testing::Subprocess;


inline const std::string kXtrace = XTRACE_BIN;
inline const std::string kWorkload = ZE_WORKLOAD_BIN;
inline const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;

// A number following `label` in `text` ("links 4" -> 4), or -1.
inline long NumberAfter(const std::string& text, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(label + " (\\d+)"))) return -1;
  return std::stol(m[1]);
}


// `xtrace ctl ARGS` as another user: setpriv's uid, gid and supplementary groups ("" none).
inline RunResult CtlAs(uid_t uid, gid_t gid, const std::string& groups, const std::string& socket,
                const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/setpriv", "--reuid=" + std::to_string(uid),
                                   "--regid=" + std::to_string(gid)};
  argv.push_back(groups.empty() ? "--clear-groups" : "--groups=" + groups);
  argv.insert(argv.end(), {kXtrace, "ctl", "--socket", socket});
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, {}, 60s);
}

class DaemonTest : public RootTest {
 protected:
  DaemonTest() : RootTest("daemon", "daemontest") {}
  void SetUp() override {
    RootTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    socket_ = dir_ + "/run/xtrace.sock";
    out_dir_ = dir_ + "/captures";
  }
  void TearDown() override {
    if (HasFailure() && daemon_) {
      daemon_->Wait(0ms);  // collect what it said
      std::fprintf(stderr, "daemon's stderr:\n%s\n", daemon_->stderr_text().c_str());
    }
    daemon_.reset();
    RootTest::TearDown();
  }

  void StartDaemon(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {kXtrace, "daemon", "--socket", socket_, "--output-dir", out_dir_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    daemon_ = std::make_unique<Subprocess>(argv, std::vector<std::string>{kSimDriver});
    ASSERT_TRUE(daemon_->WaitStderr("listening on", 30s)) << daemon_->stderr_text();
  }
  RunResult Ctl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kXtrace, "ctl", "--socket", socket_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, {}, 120s);
  }
  bool DaemonAlive() { return daemon_ && kill(daemon_->pid(), 0) == 0 && !daemon_->Wait(0ms); }
  // Polls `ctl status` until `done(text)`; returns the last text.
  std::string StatusUntil(const std::function<bool(const std::string&)>& done,
                          std::chrono::seconds timeout = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string text;
    do {
      text = Ctl({"status"}).out;
      if (done(text)) break;
      std::this_thread::sleep_for(200ms);
    } while (std::chrono::steady_clock::now() < deadline);
    return text;
  }
  // A copy of the workload under a name of its own, so that a capture selecting it by name
  // sees only this test's processes, whatever else runs on the machine.
  std::string PrivateWorkload() {
    const std::string name = "xtw" + std::to_string(getpid() % 1000000);
    const std::string path = dir_ + "/" + name;
    std::filesystem::copy_file(kWorkload, path);
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }
  std::vector<std::string> CaptureFiles() const {
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(out_dir_)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
  }

  // A workload of our own making launches every 20 ms for a minute, captured by pid, and
  // events already counted; returns its pid (0 on failure).
  uint32_t StartCapturingAWorkload() {
    workload_ = std::make_unique<Subprocess>(
        std::vector<std::string>{kWorkload, "--duration", "60", "--sleep-us", "20000"},
        std::vector<std::string>{kSimDriver});
    const uint32_t pid = PidFromReadyLine(workload_->WaitStdout("ready", 30s));
    if (pid == 0) return 0;
    auto started = Ctl({"start", "--pid", std::to_string(pid)});
    EXPECT_EQ(started.exit_code(), 0) << started.err;
    StatusUntil([&](const std::string& s) { return NumberAfter(s, "Level Zero") > 20; });
    return pid;
  }
  long Events() { return NumberAfter(Ctl({"status"}).out, "events"); }
  // The launches of `pid` in the one capture file, which must be a complete log.
  size_t LaunchesInTheOnlyLog(uint32_t pid) {
    const auto files = CaptureFiles();
    EXPECT_EQ(files.size(), 1u);
    if (files.size() != 1) return 0;
    const LogContents c = ReadLogContents(files[0]);
    EXPECT_TRUE(c.readable) << files[0] << ": " << c.error;
    EXPECT_TRUE(c.complete) << files[0];
    return c.launches.count(pid) ? c.launches.at(pid).size() : 0;
  }

  std::string socket_, out_dir_;
  std::unique_ptr<Subprocess> daemon_;
  std::unique_ptr<Subprocess> workload_;
};

}  // namespace xtrace::daemon_test

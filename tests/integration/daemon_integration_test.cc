// Integration tests of `xtrace daemon` driven by `xtrace ctl` over its control socket: who may
// use it, start/status/list/stop, rotated files that each read as a complete log, SIGTERM
// finishing the open file, a target killed mid-capture, and hundreds of short-lived processes
// leaving no BPF link or descriptor behind. Real BPF; needs root (skips elsewhere, fails
// under CI).
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <filesystem>
#include <random>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "daemon_cycles.h"
#include "log_contents.h"
#include "process_resources.h"
#include "root_fixture.h"
#include "subprocess.h"

namespace xtrace {
namespace {

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

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;

// A number following `label` in `text` ("links 4" -> 4), or -1.
long NumberAfter(const std::string& text, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(label + " (\\d+)"))) return -1;
  return std::stol(m[1]);
}

// A raw connection to the control socket, for clients that do not speak the protocol.
int ConnectRaw(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), std::min(path.size(), sizeof(addr.sun_path) - 1));
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

// Writes what the socket takes (the daemon may have closed it already).
void SendSome(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Everything the daemon sends until it closes the connection (at most `timeout`).
std::string ReadUntilClosed(int fd, std::chrono::milliseconds timeout) {
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

// The stream framing of a one-segment Cap'n Proto message of `words` words (the body not
// included): segment count - 1, then the segment's size in words.
std::string FrameHeader(uint32_t words) {
  const uint32_t header[2] = {0, words};
  return std::string(reinterpret_cast<const char*>(header), sizeof(header));
}

// The daemon's limit on a control message (kMaxControlMessageBytes, daemon/control_server.h).
constexpr uint32_t kControlMessageLimitBytes = 1u << 20;

// `xtrace ctl ARGS` as another user: setpriv's uid, gid and supplementary groups ("" none).
RunResult CtlAs(uid_t uid, gid_t gid, const std::string& groups, const std::string& socket,
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

TEST_F(DaemonTest, ControlledByRootAloneRotatesAndFinishesItsFileOnSigterm) {
  StartDaemon({"--max-file-age", "1s"});
  struct stat st {};
  ASSERT_EQ(::stat(socket_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, 0u);

  auto idle = Ctl({"status"});
  ASSERT_EQ(idle.exit_code(), 0) << idle.err;
  EXPECT_NE(idle.out.find("idle"), std::string::npos) << idle.out;
  // No capture, no cost: not a single BPF object is loaded.
  EXPECT_EQ(BpfDescriptors(static_cast<uint32_t>(daemon_->pid())), 0u);

  // Nobody else may use it: the socket's mode stops them, and should it be loosened, the
  // daemon checks who is calling.
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((dir_ + "/run").c_str(), 0755), 0);
  const std::vector<std::string> as_nobody = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                              "--clear-groups", kXtrace, "ctl", "--socket", socket_};
  auto denied = RunCommand([&] { auto a = as_nobody; a.push_back("status"); return a; }());
  EXPECT_EQ(denied.exit_code(), 1);
  EXPECT_NE(denied.err.find("xtrace ctl: permission denied: cannot connect to " + socket_ +
                            ": only root may control the xtrace daemon"),
            std::string::npos)
      << denied.err;
  ASSERT_EQ(::chmod(socket_.c_str(), 0666), 0);
  auto refused = RunCommand([&] { auto a = as_nobody; a.push_back("start"); a.push_back("--system"); return a; }());
  EXPECT_EQ(refused.exit_code(), 1);
  EXPECT_NE(refused.err.find("xtrace ctl: permission denied: uid 65534 may not control this "
                             "xtrace daemon: only root may"),
            std::string::npos)
      << refused.err;
  ASSERT_EQ(::chmod(socket_.c_str(), 0600), 0);
  EXPECT_NE(Ctl({"status"}).out.find("idle"), std::string::npos) << "a refused start started something";

  // By name, so that other GPU programs running on this machine meanwhile stay out of it.
  const std::string workload_bin = PrivateWorkload();
  const std::string comm = std::filesystem::path(workload_bin).filename();
  auto started = Ctl({"start", "--comm", comm});
  ASSERT_EQ(started.exit_code(), 0) << started.err;
  EXPECT_NE(started.out.find("capturing every process named " + comm), std::string::npos)
      << started.out;
  EXPECT_GT(BpfDescriptors(static_cast<uint32_t>(daemon_->pid())), 0u);
  auto again = Ctl({"start", "--comm", comm});
  EXPECT_EQ(again.exit_code(), 1);
  EXPECT_NE(again.err.find("already running"), std::string::npos) << again.err;

  // Rounds spread over more than a second, so that a file is rotated in between; the first
  // waits until the probes are in (the loader's first user races them otherwise).
  const std::string log = dir_ + "/launches.tsv";
  Subprocess workload({workload_bin, "--wait-for-signal", "--recreate-kernels", "--iterations", "2",
                       "--launch-log", log},
                      {kSimDriver});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();
  ASSERT_TRUE(daemon_->WaitStderr("attached to pid " + std::to_string(pid), 30s))
      << daemon_->stderr_text();
  for (int round = 1; round <= 6; ++round) {
    workload.Signal(SIGUSR1);
    ASSERT_TRUE(workload.WaitStdout("round " + std::to_string(round), 60s)) << workload.stderr_text();
    std::this_thread::sleep_for(250ms);
  }
  const std::regex traced("pid " + std::to_string(pid) + " \\(" + comm + "\\):.* Level Zero [0-9]+");
  const std::string status =
      StatusUntil([&](const std::string& s) { return std::regex_search(s, traced); });
  EXPECT_NE(status.find("capturing"), std::string::npos) << status;
  EXPECT_TRUE(std::regex_search(status, traced)) << status;

  workload.Signal(SIGTERM);
  workload.Wait(30s);
  auto list = Ctl({"list"});
  ASSERT_EQ(list.exit_code(), 0) << list.err;
  EXPECT_NE(list.out.find("being written"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("complete"), std::string::npos) << "no file was rotated: " << list.out;

  daemon_->Signal(SIGTERM);
  auto exit_status = daemon_->Wait(60s);
  ASSERT_TRUE(exit_status && WIFEXITED(*exit_status) && WEXITSTATUS(*exit_status) == 0)
      << daemon_->stderr_text();
  EXPECT_FALSE(std::filesystem::exists(socket_));

  // Every file is a finished, complete log of its own; together they hold every launch, each
  // named (process and kernel names are repeated in every file).
  std::vector<std::string> got;
  const auto files = CaptureFiles();
  ASSERT_GE(files.size(), 2u);
  for (const auto& f : files) {
    ASSERT_EQ(f.substr(f.size() - 6), ".capnp") << f;
    const LogContents c = ReadLogContents(f);
    ASSERT_TRUE(c.readable) << f << ": " << c.error;
    EXPECT_TRUE(c.complete) << f;
    if (c.launches.count(pid)) {
      EXPECT_TRUE(c.processes.count(pid)) << f << " does not name the process";
      got.insert(got.end(), c.launches.at(pid).begin(), c.launches.at(pid).end());
    }
  }
  EXPECT_EQ(testing::Sorted(got), ReadLaunchLog(log));
}

// Users that are not root: with --allow-users each may capture their own processes alone
// (real, effective and saved uid theirs), running ones and later ones, into a directory of
// theirs written as themselves; naming another user's process is refused before anything is
// loaded, and another user's processes of the same name stay out of the capture.
TEST_F(DaemonTest, AUserCapturesTheirOwnProcessesAndNobodyElses) {
  constexpr uid_t kUser = 65534;   // nobody
  constexpr uid_t kOther = 65533;  // a uid of nobody's: another user
  StartDaemon({"--allow-users"});
  struct stat st {};
  ASSERT_EQ(::stat(socket_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  const std::string home = dir_ + "/home";
  ASSERT_EQ(::mkdir(home.c_str(), 0755), 0);
  ASSERT_EQ(::chown(home.c_str(), kUser, kUser), 0);
  const std::string out = home + "/trace";
  const std::string workload_bin = PrivateWorkload();
  std::filesystem::permissions(workload_bin, std::filesystem::perms::all &
                                                 ~std::filesystem::perms::others_write &
                                                 ~std::filesystem::perms::group_write);
  const std::string comm = std::filesystem::path(workload_bin).filename();
  const auto as = [&](uid_t uid, std::vector<std::string> argv) {
    argv.insert(argv.begin(), {"/usr/bin/setpriv", "--reuid=" + std::to_string(uid),
                               "--regid=" + std::to_string(uid), "--clear-groups"});
    return argv;
  };
  const std::vector<std::string> workload_args = {workload_bin, "--duration", "60", "--sleep-us",
                                                  "20000"};
  auto start_workload = [&](uid_t uid) {
    auto w = std::make_unique<Subprocess>(as(uid, workload_args), std::vector<std::string>{kSimDriver});
    const uint32_t pid = PidFromReadyLine(w->WaitStdout("ready", 30s));
    EXPECT_GT(pid, 0u) << w->stderr_text();
    return std::make_pair(std::move(w), pid);
  };
  auto [mine_before, mine_before_pid] = start_workload(kUser);
  auto [other_before, other_before_pid] = start_workload(kOther);
  ASSERT_GT(mine_before_pid, 0u);
  ASSERT_GT(other_before_pid, 0u);

  // Another user's process by pid: refused, naming its owner; nothing loaded, nothing made.
  auto refused = CtlAs(kUser, kUser, "", socket_,
                       {"start", "--pid", std::to_string(other_before_pid), "-o", out});
  EXPECT_EQ(refused.exit_code(), 1);
  EXPECT_NE(refused.err.find("xtrace ctl: pid " + std::to_string(other_before_pid) +
                             " belongs to uid 65533: this capture may cover only the processes "
                             "of nobody (uid 65534)"),
            std::string::npos)
      << refused.err;
  auto as_other = CtlAs(kUser, kUser, "", socket_, {"start", "--system", "--user", "65533", "-o", out});
  EXPECT_EQ(as_other.exit_code(), 1);
  EXPECT_NE(as_other.err.find("permission denied: nobody (uid 65534) may capture only its own "
                              "processes, not those of user 65533"),
            std::string::npos)
      << as_other.err;
  auto nowhere = CtlAs(kUser, kUser, "", socket_, {"start", "--system"});
  EXPECT_NE(nowhere.err.find("needs --output-dir DIR"), std::string::npos) << nowhere.err;
  EXPECT_EQ(BpfDescriptors(static_cast<uint32_t>(daemon_->pid())), 0u);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_NE(Ctl({"status"}).out.find("idle"), std::string::npos);

  // By name: both users run it; only the user's processes are captured, the one running now
  // and one started later (selected in BPF at its exec), not the other user's.
  auto started = CtlAs(kUser, kUser, "", socket_, {"start", "--comm", comm, "-o", out});
  ASSERT_EQ(started.exit_code(), 0) << started.err;
  EXPECT_NE(started.out.find("every process named " + comm + " owned by nobody (uid 65534)"),
            std::string::npos)
      << started.out;
  auto [mine_after, mine_after_pid] = start_workload(kUser);
  auto [other_after, other_after_pid] = start_workload(kOther);
  // Both of the user's processes show records: the one started later at once (its set-up
  // calls), the one running before at its next call, which may be a whole --sleep-us period
  // after the capture started, so the status is asked until both are there.
  const auto traced = [&](uint32_t pid) {
    return std::regex("pid " + std::to_string(pid) + " \\(" + comm + "\\):.* Level Zero [0-9]+");
  };
  const std::regex before_traced = traced(mine_before_pid), after_traced = traced(mine_after_pid);
  StatusUntil([&](const std::string& s) {
    return std::regex_search(s, before_traced) && std::regex_search(s, after_traced);
  });
  const std::string status = CtlAs(kUser, kUser, "", socket_, {"status"}).out;
  EXPECT_TRUE(std::regex_search(status, before_traced)) << status;
  EXPECT_TRUE(std::regex_search(status, after_traced)) << status;
  EXPECT_EQ(status.find("pid " + std::to_string(other_before_pid)), std::string::npos) << status;
  EXPECT_EQ(status.find("pid " + std::to_string(other_after_pid)), std::string::npos) << status;

  // The other user sees that a capture runs, not what it captures, and may not stop it.
  auto peek = CtlAs(kOther, kOther, "", socket_, {"status"});
  EXPECT_NE(peek.out.find("capturing for another user"), std::string::npos) << peek.out;
  EXPECT_EQ(peek.out.find(comm), std::string::npos) << peek.out;
  auto stop_other = CtlAs(kOther, kOther, "", socket_, {"stop"});
  EXPECT_EQ(stop_other.exit_code(), 1);
  EXPECT_NE(stop_other.err.find("permission denied: the running capture is not uid 65533's"),
            std::string::npos)
      << stop_other.err;
  auto stopped = CtlAs(kUser, kUser, "", socket_, {"stop"});
  ASSERT_EQ(stopped.exit_code(), 0) << stopped.err;

  // The user's files, in the user's directory, written as the user.
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(out)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  ASSERT_EQ(::stat(files[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kUser);
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kUser);
  const LogContents c = ReadLogContents(files[0]);
  ASSERT_TRUE(c.readable) << c.error;
  EXPECT_TRUE(c.complete);
  EXPECT_GT(c.launches.count(mine_before_pid) ? c.launches.at(mine_before_pid).size() : 0, 0u);
  EXPECT_GT(c.launches.count(mine_after_pid) ? c.launches.at(mine_after_pid).size() : 0, 0u);
  EXPECT_EQ(c.launches.count(other_before_pid), 0u);
  EXPECT_EQ(c.launches.count(other_after_pid), 0u);
  EXPECT_EQ(c.processes.count(other_before_pid), 0u);
  EXPECT_EQ(c.processes.count(other_after_pid), 0u);
  auto listed = CtlAs(kUser, kUser, "", socket_, {"list"});
  EXPECT_NE(listed.out.find(std::filesystem::path(files[0]).filename().string()), std::string::npos)
      << listed.out;
}

// A process of the user's, captured, that execs another user's set-user-ID program becomes
// that user's process: the capture lets go of it at the exec (BPF sees the new credentials
// there), so nothing it does afterwards is recorded. Beside it, the same program without the
// set-user-ID bit, exec'd the same way, is captured.
TEST_F(DaemonTest, AProcessThatExecsAnotherUsersSetUidProgramLeavesTheCapture) {
  constexpr uid_t kUser = 65534;   // nobody
  constexpr uid_t kOther = 65533;  // the set-user-ID program's owner
  StartDaemon({"--allow-users"});
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  const std::string home = dir_ + "/home";
  ASSERT_EQ(::mkdir(home.c_str(), 0755), 0);
  ASSERT_EQ(::chown(home.c_str(), kUser, kUser), 0);
  const std::string out = home + "/trace";
  // Two copies of the workload: one the user may run as itself, one that runs as kOther.
  const std::string plain = PrivateWorkload(), setuid = dir_ + "/setuid-workload";
  ASSERT_EQ(::chmod(plain.c_str(), 0755), 0);
  std::filesystem::copy_file(plain, setuid);
  ASSERT_EQ(::chown(setuid.c_str(), kOther, kOther), 0);
  ASSERT_EQ(::chmod(setuid.c_str(), 04755), 0);  // after chown, which clears the bit

  // Each a shell of the user's, captured by pid before it execs the workload on "go".
  const auto shell_then = [&](const std::string& program) {
    return std::make_unique<Subprocess>(
        std::vector<std::string>{"/usr/bin/setpriv", "--reuid=" + std::to_string(kUser),
                                 "--regid=" + std::to_string(kUser), "--clear-groups", "/bin/sh",
                                 "-c", "echo shell $$; read go; exec " + program +
                                           " --duration 60 --sleep-us 20000"},
        std::vector<std::string>{kSimDriver}, /*pipe_stdin=*/true);
  };
  auto mine = shell_then(plain), turned = shell_then(setuid);
  const uint32_t mine_pid = PidFromReadyLine(mine->WaitStdout("shell", 30s));
  const uint32_t turned_pid = PidFromReadyLine(turned->WaitStdout("shell", 30s));
  ASSERT_GT(mine_pid, 0u);
  ASSERT_GT(turned_pid, 0u);
  auto started = CtlAs(kUser, kUser, "", socket_,
                       {"start", "--pid", std::to_string(mine_pid), "--pid",
                        std::to_string(turned_pid), "-o", out});
  ASSERT_EQ(started.exit_code(), 0) << started.err;
  ASSERT_TRUE(mine->Send("go"));
  ASSERT_TRUE(turned->Send("go"));
  // Both run the workload now, and launch: the set-user-ID one as kOther.
  ASSERT_TRUE(mine->WaitStdout("round 3", 60s)) << mine->stderr_text();
  ASSERT_TRUE(turned->WaitStdout("round 3", 60s)) << turned->stderr_text();
  std::ifstream status_file("/proc/" + std::to_string(turned_pid) + "/status");
  std::string line, uids;
  while (std::getline(status_file, line))
    if (line.rfind("Uid:", 0) == 0) uids = line;
  EXPECT_NE(uids.find(std::to_string(kOther)), std::string::npos) << uids;
  const std::regex traced("pid " + std::to_string(mine_pid) + " \\(.*Level Zero [0-9]+");
  const std::string status =
      StatusUntil([&](const std::string& s) { return std::regex_search(s, traced); });
  EXPECT_TRUE(std::regex_search(status, traced)) << status;
  auto stopped = CtlAs(kUser, kUser, "", socket_, {"stop"});
  ASSERT_EQ(stopped.exit_code(), 0) << stopped.err;

  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(out)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  const LogContents c = ReadLogContents(files[0]);
  ASSERT_TRUE(c.readable) << c.error;
  EXPECT_GT(c.launches.count(mine_pid) ? c.launches.at(mine_pid).size() : 0, 0u);
  EXPECT_EQ(c.launches.count(turned_pid), 0u);
  EXPECT_EQ(c.api_calls.count(turned_pid), 0u);
}

TEST_F(DaemonTest, KillingATargetMidCaptureLeavesTheDaemonRunningAndTheLogValid) {
  StartDaemon();
  Subprocess workload({kWorkload, "--duration", "60", "--sleep-us", "20000"}, {kSimDriver});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u);
  auto started = Ctl({"start", "--pid", std::to_string(pid)});
  ASSERT_EQ(started.exit_code(), 0) << started.err;
  StatusUntil([&](const std::string& s) { return NumberAfter(s, "Level Zero") > 20; });

  workload.Signal(SIGKILL);
  workload.Wait(30s);
  // Its only target gone, the capture ends by itself; the daemon stays.
  const std::string idle = StatusUntil([](const std::string& s) { return s.find("idle") != std::string::npos; });
  EXPECT_NE(idle.find("last capture: xtrace: captured"), std::string::npos) << idle;
  EXPECT_TRUE(DaemonAlive()) << daemon_->stderr_text();

  EXPECT_GT(LaunchesInTheOnlyLog(pid), 0u);

  // And it takes the next request.
  ASSERT_EQ(Ctl({"start", "--system"}).exit_code(), 0);
  auto stopped = Ctl({"stop"});
  EXPECT_EQ(stopped.exit_code(), 0) << stopped.err;
  EXPECT_NE(stopped.out.find("stopped: xtrace: captured"), std::string::npos) << stopped.out;
}

// Polls until the daemon holds `expected` descriptors (at most 5 s); the last count.
size_t FdCountOnceSettled(uint32_t pid, size_t expected) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  size_t n = CountOpenFds(pid);
  while (n != expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
    n = CountOpenFds(pid);
  }
  return n;
}

TEST_F(DaemonTest, ShortLivedProcessesLeaveNoLinksOrDescriptorsBehind) {
  StartDaemon({"-q"});
  const uint32_t daemon_pid = static_cast<uint32_t>(daemon_->pid());
  const size_t idle_fds = SettledFdCount(daemon_pid);

  // Probes are taken off a library as soon as no traced process uses it (--detach-after), so
  // each process is attached and detached in turn.
  const std::string workload_bin = PrivateWorkload();
  auto started = Ctl({"start", "--comm", std::filesystem::path(workload_bin).filename().string(),
                      "--detach-after", "1ms"});
  ASSERT_EQ(started.exit_code(), 0) << started.err;
  const std::string before = Ctl({"status"}).out;
  const long links_before = NumberAfter(before, "links");
  ASSERT_GT(links_before, 0) << before;
  const size_t capturing_fds = SettledFdCount(daemon_pid);

  constexpr int kProcesses = 200;
  constexpr int kAtOnce = 4;
  for (int i = 0; i < kProcesses; i += kAtOnce) {
    std::vector<std::unique_ptr<Subprocess>> batch;
    for (int j = 0; j < kAtOnce; ++j)
      batch.push_back(std::make_unique<Subprocess>(
          std::vector<std::string>{workload_bin, "--iterations", "2", "--sleep-us", "20000"},
          std::vector<std::string>{kSimDriver}));
    for (auto& p : batch) {
      auto st = p->Wait(60s);
      ASSERT_TRUE(st && WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << p->stderr_text();
    }
  }
  const std::string after = StatusUntil([&](const std::string& s) {
    return NumberAfter(s, "links") == links_before && NumberAfter(s, "filter entries") == 0 &&
           s.find(" 0 followed now") != std::string::npos;
  });
  EXPECT_EQ(NumberAfter(after, "links"), links_before) << after;
  EXPECT_EQ(NumberAfter(after, "filter entries"), 0) << after;
  EXPECT_NE(after.find(" 0 followed now"), std::string::npos) << after;
  EXPECT_EQ(FdCountOnceSettled(daemon_pid, capturing_fds), capturing_fds);

  auto stopped = Ctl({"stop"});
  ASSERT_EQ(stopped.exit_code(), 0) << stopped.err;
  EXPECT_EQ(FdCountOnceSettled(daemon_pid, idle_fds), idle_fds);
  // The processes were traced (whatever else ran meanwhile is not counted on).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(stopped.out, m, std::regex("from (\\d+) process"))) << stopped.out;
  EXPECT_GE(std::stol(m[1]), kProcesses / 2) << stopped.out;
}

TEST_F(DaemonTest, AGroupGivenToTheDaemonMayControlItAndNoOneElse) {
  group* nogroup = getgrnam("nogroup");
  ASSERT_NE(nogroup, nullptr) << "this test uses Debian's group nogroup";
  const gid_t member_gid = nogroup->gr_gid;
  constexpr gid_t kOtherGid = 100;  // users
  StartDaemon({"--group", "nogroup"});
  struct stat st {};
  ASSERT_EQ(::stat(socket_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_gid, member_gid);
  ASSERT_EQ(::stat((dir_ + "/run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0710u) << "the group may pass through the daemon's directory only";
  EXPECT_EQ(st.st_gid, member_gid);
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);  // the test's scratch directory

  // Members may: by their primary group, or by a supplementary one (SO_PEERGROUPS).
  auto member = CtlAs(65534, member_gid, "", socket_, {"status"});
  EXPECT_EQ(member.exit_code(), 0) << member.err;
  EXPECT_NE(member.out.find("idle"), std::string::npos) << member.out;
  auto supplementary = CtlAs(65534, kOtherGid, std::to_string(member_gid), socket_, {"list"});
  EXPECT_EQ(supplementary.exit_code(), 0) << supplementary.err;

  // Anyone else is stopped by the directory's and the socket's modes...
  auto outsider = CtlAs(65534, kOtherGid, "", socket_, {"start", "--system"});
  EXPECT_EQ(outsider.exit_code(), 1);
  EXPECT_NE(outsider.err.find("xtrace ctl: permission denied: cannot connect to " + socket_ +
                              ": only root or group nogroup may control the xtrace daemon"),
            std::string::npos)
      << outsider.err;
  // ...and by the daemon's check of its credentials once those modes are loosened.
  ASSERT_EQ(::chmod((dir_ + "/run").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(socket_.c_str(), 0666), 0);
  auto refused = CtlAs(65534, kOtherGid, "", socket_, {"start", "--system"});
  EXPECT_EQ(refused.exit_code(), 1);
  EXPECT_NE(refused.err.find("xtrace ctl: permission denied: uid 65534 may not control this "
                             "xtrace daemon: only root or group nogroup may"),
            std::string::npos)
      << refused.err;
  EXPECT_TRUE(daemon_->WaitStderr("refused a control connection from uid 65534", 10s))
      << daemon_->stderr_text();

  // Nothing was started.
  EXPECT_NE(Ctl({"status"}).out.find("idle"), std::string::npos);
  EXPECT_EQ(BpfDescriptors(static_cast<uint32_t>(daemon_->pid())), 0u);
  EXPECT_TRUE(!std::filesystem::exists(out_dir_) || CaptureFiles().empty());
}

TEST_F(DaemonTest, HostileClientsStopNeitherTheDaemonNorItsCapture) {
  StartDaemon({"-q"});
  const uint32_t pid = StartCapturingAWorkload();
  ASSERT_GT(pid, 0u);
  const long events_before = Events();
  ASSERT_GT(events_before, 0);

  // A client that stalls in the middle of a message's framing, connected throughout.
  const int slow = ConnectRaw(socket_);
  ASSERT_GE(slow, 0);
  SendSome(slow, FrameHeader(64).substr(0, 5));

  // A message over the limit is refused from its header, with an error sent back.
  const int oversized = ConnectRaw(socket_);
  ASSERT_GE(oversized, 0);
  SendSome(oversized, FrameHeader(2 * kControlMessageLimitBytes / 8));
  const std::string reply = ReadUntilClosed(oversized, 10s);
  ::close(oversized);
  EXPECT_NE(reply.find("too large"), std::string::npos)
      << "no error reply to an oversized message (" << reply.size() << " bytes back)";

  // 100 clients at once, more than the daemon keeps (it closes the oldest): they connect and
  // send nothing, garbage, a truncated message or an oversized one; half vanish at once, half
  // only after a good client was served while they were still connected.
  std::mt19937 random(15);
  std::vector<int> held;
  for (int i = 0; i < 100; ++i) {
    const int fd = ConnectRaw(socket_);
    ASSERT_GE(fd, 0) << "client " << i << " could not connect: " << std::strerror(errno);
    switch (i % 4) {
      case 0: break;  // nothing at all
      case 1: {
        std::string garbage(1 + random() % 8192, '\0');
        for (char& c : garbage) c = static_cast<char>(random());
        SendSome(fd, garbage);
        break;
      }
      case 2: SendSome(fd, FrameHeader(64) + std::string(100, '\x5a')); break;  // 512 promised
      case 3: SendSome(fd, FrameHeader(UINT32_MAX)); break;
    }
    if (i % 2) held.push_back(fd);
    else ::close(fd);
  }
  auto served = Ctl({"status"});
  EXPECT_EQ(served.exit_code(), 0) << served.err;
  EXPECT_NE(served.out.find("capturing"), std::string::npos) << served.out;
  for (int fd : held) ::close(fd);

  // The daemon is up, answers the next client, and its capture went on counting.
  EXPECT_TRUE(DaemonAlive()) << daemon_->stderr_text();
  const std::string after = StatusUntil(
      [&](const std::string& s) { return NumberAfter(s, "events") > events_before; });
  EXPECT_GT(NumberAfter(after, "events"), events_before) << after;
  SendSome(slow, FrameHeader(64).substr(5));  // the slow client finishes its header, vanishes
  ::close(slow);
  auto stopped = Ctl({"stop"});
  ASSERT_EQ(stopped.exit_code(), 0) << stopped.err;

  EXPECT_GT(LaunchesInTheOnlyLog(pid), 20u);
}

TEST_F(DaemonTest, StartStopCyclesLeaveNoDescriptorsMemoryOrBpfObjectsBehind) {
  // The benchmark's daemon section runs 1000 (tests/bench); this many keep `make test` short.
  const char* env = getenv("XTRACE_DAEMON_CYCLES");
  const int cycles = env ? std::atoi(env) : 40;
  StartDaemon({"-q"});
  Subprocess workload({kWorkload, "--duration", "7200", "--sleep-us", "20000"}, {kSimDriver});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u);

  // Each capture attaches every probe to the workload and takes them all off again.
  const uint32_t daemon_pid = static_cast<uint32_t>(daemon_->pid());
  const testing::CycleFigures f = testing::RunStartStopCycles(
      kXtrace, socket_, daemon_pid, {"--pid", std::to_string(pid)}, cycles, /*progress_every=*/50);
  std::printf("%s", Describe(f).c_str());
  ASSERT_EQ(f.error, "");
  ASSERT_EQ(f.cycles, cycles);
  EXPECT_EQ(f.after.fds, f.before.fds);
  EXPECT_EQ(f.before.bpf_fds, 0u);
  EXPECT_EQ(f.after.bpf_fds, 0u);
  // Allocator caches move by a few pages; a leak per cycle would show as much more.
  EXPECT_LT(f.after.rss_bytes, f.before.rss_bytes + (4u << 20)) << Describe(f);
  EXPECT_TRUE(DaemonAlive());
}

}  // namespace
}  // namespace xtrace

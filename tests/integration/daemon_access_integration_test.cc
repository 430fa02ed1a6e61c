// Integration tests of who may use `xtrace daemon`: root alone or a group given to it
// controls it, a user captures their own processes and nobody else's (a set-uid exec leaves
// the capture), and clients that do not speak the protocol, or abuse it, stop neither the
// daemon nor its capture. Real BPF; needs root (skips elsewhere, fails under CI).

#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "daemon_test_fixture.h"
#include "log_contents.h"
#include "process_resources.h"
#include "subprocess.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using namespace daemon_test;

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
  auto ahead = CtlAs(kUser, kUser, "", socket_, {"start", "--system", "--nice", "-15", "-o", out});
  EXPECT_EQ(ahead.exit_code(), 1);
  EXPECT_NE(ahead.err.find("permission denied: nobody (uid 65534) may not ask for --nice -15 "
                           "(-10 at the lowest, what captures take by default)"),
            std::string::npos)
      << ahead.err;
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

}  // namespace
}  // namespace xtrace

// Faults injected into a capture's output, with real BPF and the simulated GPU: a disk that
// fills up (a 512 KiB tmpfs), a directory made read-only or removed, a log file cut short by
// someone else. Each must end the capture with one line naming the file and the cause, keep
// every complete batch written before it readable, and leave the target untouched; `record`
// keeps waiting for its command and exits with its status. Needs root (mount, BPF).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "capture_steps.h"
#include "log_contents.h"
#include "root_fixture.h"
#include "subprocess.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::LogContents;
using testing::LinesWith;
using testing::PidFromReadyLine;
using testing::ReadLaunchLog;
using testing::ReadLogContents;
using testing::RootTest;
using testing::RunCommand;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;


// Every launch the log holds happened (it is in the workload's own launch log), and the log
// converts and reports as an incomplete capture.
void ExpectReadablePrefix(const std::string& log, const std::string& launch_log,
                          const std::string& json) {
  const LogContents c = ReadLogContents(log);
  ASSERT_TRUE(c.readable) << c.error;
  EXPECT_FALSE(c.complete);
  std::vector<std::string> launched = ReadLaunchLog(launch_log);
  size_t captured = 0;
  for (const auto& [pid, launches] : c.launches) {
    for (const auto& l : launches) {
      EXPECT_TRUE(std::binary_search(launched.begin(), launched.end(), l)) << l;
      ++captured;
    }
  }
  EXPECT_GT(captured, 0u);
  auto conv = RunCommand({kXtrace, "convert", log, "-o", json});
  EXPECT_EQ(conv.exit_code(), 0) << conv.err;
  auto salvage = RunCommand({kXtrace, "convert", "--salvage", log, "-o", json});
  EXPECT_EQ(salvage.exit_code(), 0) << salvage.err;
  auto report = RunCommand({kXtrace, "report", log});
  EXPECT_EQ(report.exit_code(), 0) << report.err;
}

class OutputFaultTest : public RootTest {
 protected:
  OutputFaultTest() : RootTest("output fault", "outfault") {}
  void TearDown() override {
    // Lazily, so a capture still holding a file there cannot keep it mounted.
    if (!mounted_.empty()) ::umount2(mounted_.c_str(), MNT_DETACH);
    RootTest::TearDown();
  }
  // A directory on a tmpfs of `size` ("512k"), unmounted at the end of the test.
  std::string SmallDisk(const std::string& size) {
    const std::string dir = Path("disk");
    std::filesystem::create_directory(dir);
    const std::string opts = "size=" + size + ",mode=0700";
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
      ADD_FAILURE() << "mount tmpfs on " << dir << ": " << std::strerror(errno);
      return {};
    }
    mounted_ = dir;
    return dir;
  }

  std::string mounted_;
};

TEST_F(OutputFaultTest, DiskFullStopsTheCaptureKeepsItsBatchesAndRecordStillWaitsForItsCommand) {
  const std::string disk = SmallDisk("512k");
  ASSERT_FALSE(disk.empty());
  const std::string out = disk + "/run.capnp", launch_log = Path("launches.tsv");
  // Launches until the test ends them: far more than 512 KiB of log. The command runs on
  // whatever time the capture takes to stop (seconds, on a loaded machine), so record is
  // still its parent, waiting, when the capture has ended.
  Subprocess xtrace({kXtrace, "record", "-o", out, "--", kWorkload, "--duration", "120",
                     "--threads", "2", "--iterations", "20", "--launch-log", launch_log},
                    {kSimDriver});
  const uint32_t pid = PidFromReadyLine(xtrace.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << xtrace.stderr_text();

  // The capture stops on the first failed write; record stays the command's parent.
  ASSERT_TRUE(xtrace.WaitStderr("waiting for", 30s)) << xtrace.stderr_text();
  const std::string err = xtrace.stderr_text();
  const auto errors = LinesWith(err, "No space left on device");
  ASSERT_EQ(errors.size(), 1u) << err;
  EXPECT_NE(errors[0].find("xtrace record: capture stopped early: writing " + out + ": No space"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(err.find(out + " keeps its first"), std::string::npos) << err;
  EXPECT_TRUE(std::regex_search(err, std::regex("[1-9][0-9]* events captured after them were not written")))
      << err;
  // The command runs on, untouched: no probe is left in it while record waits.
  EXPECT_EQ(kill(static_cast<pid_t>(pid), 0), 0);
  auto breakpoints = testing::WaitForNoLoaderBreakpoints(pid, 5s);
  ASSERT_TRUE(breakpoints.ok()) << breakpoints.status().message();
  EXPECT_EQ(*breakpoints, 0u);

  // record returns only when its command does, with its status.
  EXPECT_FALSE(xtrace.Wait(500ms).has_value()) << "record returned before its command";
  ASSERT_EQ(kill(static_cast<pid_t>(pid), SIGTERM), 0);  // the workload's own way to stop
  auto status = xtrace.Wait(60s);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
  EXPECT_NE(xtrace.stdout_text().find("exit rounds="), std::string::npos) << xtrace.stdout_text();

  ExpectReadablePrefix(out, launch_log, Path("run.json"));
}

TEST_F(OutputFaultTest, RecordExitsWithItsCommandsStatusHoweverTheCaptureEnds) {
  // A command that fails: record says so with the same status.
  auto failing = RunCommand({kXtrace, "record", "-q", "-o", Path("f.capnp"), "--", "/bin/sh",
                             "-c", "exit 3"});
  EXPECT_EQ(failing.exit_code(), 3) << failing.err;
  // --duration ends the capture, not the command: record waits for it (the command exits
  // only once the test has seen record say so).
  Subprocess timed({kXtrace, "record", "--duration", "200ms", "-o", Path("d.capnp"), "--",
                    "/bin/sh", "-c", "read line; exit 5"},
                   {}, /*pipe_stdin=*/true);
  ASSERT_TRUE(timed.WaitStderr("waiting for /bin/sh", 60s)) << timed.stderr_text();
  std::this_thread::sleep_for(300ms);
  siginfo_t info{};  // looked at, not reaped
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(timed.pid()), &info, WEXITED | WNOHANG | WNOWAIT), 0);
  EXPECT_EQ(info.si_pid, 0) << "record returned before its command";
  ASSERT_TRUE(timed.Send("exit"));
  const auto timed_status = timed.Wait(30s);
  ASSERT_TRUE(timed_status.has_value());
  EXPECT_TRUE(WIFEXITED(*timed_status) && WEXITSTATUS(*timed_status) == 5) << timed.stderr_text();
  // SIGTERM sent to xtrace alone ends the capture and is passed on to the command.
  Subprocess xtrace({kXtrace, "record", "-o", Path("t.capnp"), "--", "/bin/sleep", "30"});
  ASSERT_TRUE(xtrace.WaitStderr("pid", 30s)) << xtrace.stderr_text();
  std::this_thread::sleep_for(300ms);
  xtrace.Signal(SIGTERM);
  auto status = xtrace.Wait(30s);
  ASSERT_TRUE(status.has_value()) << "record did not pass SIGTERM on";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 128 + SIGTERM) << xtrace.stderr_text();
  EXPECT_NE(xtrace.stderr_text().find("killed by signal 15"), std::string::npos) << xtrace.stderr_text();
}

// A workload launching from two threads until the test ends it (SIGTERM: it finishes its
// round and exits 0), its pid from its "ready" line. Never for a fixed time: xtrace's start-up
// takes from under a second to several on a loaded machine, and a workload that ended before
// the capture began left these tests nothing to capture.
struct RunningWorkload {
  std::unique_ptr<Subprocess> process;
  uint32_t pid = 0;
  void End() { testing::EndWorkloads({process.get()}); }
};
RunningWorkload StartWorkload(const std::string& launch_log) {
  RunningWorkload w;
  w.process = std::make_unique<Subprocess>(
      std::vector<std::string>{kWorkload, "--duration", "300", "--threads", "2", "--iterations",
                               "20", "--launch-log", launch_log},
      std::vector<std::string>{kSimDriver});
  w.pid = PidFromReadyLine(w.process->WaitStdout("ready", 30s));
  return w;
}

TEST_F(OutputFaultTest, DaemonOnAFullDiskKeepsItsCompleteFilesAndSaysWhatItDropped) {
  const std::string disk = SmallDisk("512k");
  ASSERT_FALSE(disk.empty());
  const std::string captures = disk + "/captures", launch_log = Path("launches.tsv");
  RunningWorkload w = StartWorkload(launch_log);
  ASSERT_GT(w.pid, 0u) << w.process->stderr_text();
  Subprocess daemon({kXtrace, "daemon", "--socket", Path("xtrace.sock"), "--output-dir", captures,
                     "--max-file-size", "100k", "--max-files", "3", "--pid", std::to_string(w.pid)},
                    {kSimDriver});
  ASSERT_TRUE(daemon.WaitStderr("capture stopped early", 30s)) << daemon.stderr_text();
  const std::string err = daemon.stderr_text();
  EXPECT_EQ(LinesWith(err, "No space left on device").size(), 1u) << err;
  EXPECT_TRUE(std::regex_search(
      err, std::regex("xtrace daemon: capture stopped early: writing " + captures +
                      "/xtrace-[0-9-]+\\.capnp\\.part: No space left on device")))
      << err;
  EXPECT_TRUE(std::regex_search(err, std::regex("[1-9][0-9]* events captured after them were not written")))
      << err;
  // It stays up, idle, for the next request; the target ran on.
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(daemon.Wait(0ms).has_value()) << err;
  EXPECT_EQ(kill(static_cast<pid_t>(w.pid), 0), 0);

  // Every finished file is a complete log; the one being written holds complete batches.
  size_t complete = 0, partial = 0;
  for (const auto& e : std::filesystem::directory_iterator(captures)) {
    const std::string path = e.path();
    if (std::filesystem::file_size(path) == 0) {  // created, but not even its header fitted
      ++partial;
      continue;
    }
    const LogContents c = ReadLogContents(path);
    EXPECT_TRUE(c.readable) << path << ": " << c.error;
    if (path.ends_with(".capnp")) {
      EXPECT_TRUE(c.complete) << path;
      ++complete;
    } else {
      EXPECT_TRUE(path.ends_with(".capnp.part")) << path;
      EXPECT_FALSE(c.complete) << path;
      ++partial;
    }
  }
  EXPECT_LE(complete, 3u);
  EXPECT_GE(partial, 1u);  // the file being written (and one whose summary found no room)
  daemon.Signal(SIGTERM);
  auto status = daemon.Wait(30s);
  EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << daemon.stderr_text();
  w.End();
}

// The daemon's files in `dir`: complete logs (*.capnp) and the rest (*.capnp.part), by name.
struct DaemonFiles {
  std::set<std::string> complete, partial;
};
DaemonFiles ListDaemonFiles(const std::string& dir) {
  DaemonFiles f;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename();
    if (name.ends_with(".capnp")) f.complete.insert(name);
    else if (name.ends_with(".capnp.part")) f.partial.insert(name);
  }
  return f;
}

TEST_F(OutputFaultTest, DaemonRotatingOntoADirectoryMadeReadOnlyKeepsItsFilesAndServesOn) {
  // Root writes through mode bits, so the directory is made read-only the way an admin or a
  // failing disk does it: a read-only mount on top of it (the file already open stays on the
  // writable mount beneath, as a remounted disk's open file would until its next write).
  const std::string captures = Path("captures"), socket = Path("xtrace.sock");
  std::filesystem::create_directory(captures);
  RunningWorkload w = StartWorkload(Path("launches.tsv"));
  ASSERT_GT(w.pid, 0u) << w.process->stderr_text();
  Subprocess daemon({kXtrace, "daemon", "--socket", socket, "--output-dir", captures,
                     "--max-file-size", "100k", "--max-files", "1000", "--pid",
                     std::to_string(w.pid)},
                    {kSimDriver});
  // A few files finished, then the directory goes read-only.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (ListDaemonFiles(captures).complete.size() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  ASSERT_GE(ListDaemonFiles(captures).complete.size(), 2u) << daemon.stderr_text();
  ASSERT_EQ(::mount(captures.c_str(), captures.c_str(), nullptr, MS_BIND, nullptr), 0)
      << std::strerror(errno);
  mounted_ = captures;
  ASSERT_EQ(::mount(nullptr, captures.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr), 0)
      << std::strerror(errno);

  // The next rotation cannot create its file: one line naming it and the cause.
  ASSERT_TRUE(daemon.WaitStderr("capture stopped early", 30s)) << daemon.stderr_text();
  const std::string err = daemon.stderr_text();
  const auto errors = LinesWith(err, "Read-only file system");
  ASSERT_EQ(errors.size(), 1u) << err;
  EXPECT_TRUE(std::regex_search(
      errors[0], std::regex("^xtrace daemon: capture stopped early: " + captures +
                            "/xtrace-[0-9-]+\\.capnp\\.part: cannot create: Read-only file system$")))
      << errors[0];

  // Every file finished before the fault is a complete log, the one finished at the fault
  // too (left .part: the directory takes no rename), and each holds all it is said to.
  const DaemonFiles files = ListDaemonFiles(captures);
  EXPECT_GE(files.complete.size(), 2u);
  ASSERT_EQ(files.partial.size(), 1u) << err;
  uint64_t on_disk = 0;
  for (const std::string& name : files.complete) {
    const LogContents c = ReadLogContents(captures + "/" + name);
    EXPECT_TRUE(c.readable && c.complete) << name << ": " << c.error;
    on_disk += c.events;
  }
  const std::string part = captures + "/" + *files.partial.begin();
  const LogContents p = ReadLogContents(part);
  ASSERT_TRUE(p.readable) << p.error;
  EXPECT_TRUE(p.complete) << part;
  on_disk += p.events;
  // Nothing is said to be written that is not on disk.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(err, m, std::regex(" ([0-9]+) events written to "))) << err;
  EXPECT_EQ(std::stoull(m[1]), on_disk) << err;
  ASSERT_TRUE(std::regex_search(err, m, std::regex(part + " is complete with ([0-9]+) events and its summary")))
      << err;
  EXPECT_EQ(std::stoull(m[1]), p.events) << err;
  std::printf("%zu complete files, %s with %llu events; %llu events on disk\n", files.complete.size(),
              part.c_str(), static_cast<unsigned long long>(p.events),
              static_cast<unsigned long long>(on_disk));

  // The daemon stays up and serves; the target runs on, with no probe left in it.
  EXPECT_FALSE(daemon.Wait(0ms).has_value()) << err;
  EXPECT_EQ(kill(static_cast<pid_t>(w.pid), 0), 0);
  auto breakpoints = testing::WaitForNoLoaderBreakpoints(w.pid, 5s);
  ASSERT_TRUE(breakpoints.ok()) << breakpoints.status().message();
  EXPECT_EQ(*breakpoints, 0u);
  auto status = RunCommand({kXtrace, "ctl", "--socket", socket, "status"});
  EXPECT_EQ(status.exit_code(), 0) << status.err;
  EXPECT_NE(status.out.find("last capture: capture stopped early"), std::string::npos) << status.out;

  // Writable again: a new capture starts and finishes a complete file.
  ASSERT_EQ(::umount2(captures.c_str(), 0), 0) << std::strerror(errno);
  mounted_.clear();
  auto start = RunCommand({kXtrace, "ctl", "--socket", socket, "start", "--pid", std::to_string(w.pid)});
  ASSERT_EQ(start.exit_code(), 0) << start.err << daemon.stderr_text();
  std::this_thread::sleep_for(1500ms);
  auto stop = RunCommand({kXtrace, "ctl", "--socket", socket, "stop"});
  EXPECT_EQ(stop.exit_code(), 0) << stop.err;
  size_t new_files = 0;
  for (const std::string& name : ListDaemonFiles(captures).complete) {
    if (files.complete.count(name)) continue;
    ++new_files;
    const LogContents c = ReadLogContents(captures + "/" + name);
    EXPECT_TRUE(c.readable && c.complete) << name << ": " << c.error;
  }
  EXPECT_GE(new_files, 1u);
  daemon.Signal(SIGTERM);
  auto exited = daemon.Wait(30s);
  EXPECT_TRUE(exited && WIFEXITED(*exited) && WEXITSTATUS(*exited) == 0) << daemon.stderr_text();
  w.End();
}

// Attaches to a running workload with its log in `out`, and waits until a few batches are on
// disk (the log is flushed every second).
std::unique_ptr<Subprocess> AttachAndWaitForBatches(uint32_t pid, const std::string& out) {
  auto xtrace = std::make_unique<Subprocess>(
      std::vector<std::string>{kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  if (!xtrace->WaitStderr("attached to pid", 30s)) return xtrace;
  std::this_thread::sleep_for(2500ms);
  return xtrace;
}

TEST_F(OutputFaultTest, OutputDirectoryMadeReadOnlyMidCapture) {
  // A file already open for writing: permissions are checked at open, so the capture goes on
  // and finishes its file, complete: nothing is lost.
  const std::string dir = Path("out"), out = dir + "/run.capnp", launch_log = Path("l.tsv");
  std::filesystem::create_directory(dir);
  RunningWorkload w = StartWorkload(launch_log);
  ASSERT_GT(w.pid, 0u);
  auto xtrace = AttachAndWaitForBatches(w.pid, out);
  ASSERT_EQ(::chmod(dir.c_str(), 0500), 0);
  std::this_thread::sleep_for(1500ms);  // a flush or more after it
  w.End();
  auto status = xtrace->Wait(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace->stderr_text();
  const LogContents c = ReadLogContents(out);
  ASSERT_TRUE(c.readable) << c.error;
  EXPECT_TRUE(c.complete);
}

TEST_F(OutputFaultTest, OutputDirectoryRemovedMidCaptureStopsItAtTheNextWrite) {
  // The removed log is still open: writing on would fill a file no one can ever open. The
  // next write (within a second, the flush interval) stops the capture with one line.
  const std::string dir = Path("out"), out = dir + "/run.capnp", launch_log = Path("l.tsv");
  std::filesystem::create_directory(dir);
  RunningWorkload w = StartWorkload(launch_log);
  ASSERT_GT(w.pid, 0u);
  auto xtrace = AttachAndWaitForBatches(w.pid, out);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(xtrace->WaitStderr("capture stopped early", 30s)) << xtrace->stderr_text();
  auto status = xtrace->Wait(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1) << xtrace->stderr_text();
  EXPECT_EQ(LinesWith(xtrace->stderr_text(),
                      "xtrace attach: capture stopped early: writing " + out +
                          ": the file was removed during the capture; everything written to it is lost")
                .size(),
            1u)
      << xtrace->stderr_text();
  EXPECT_EQ(kill(static_cast<pid_t>(w.pid), 0), 0);  // the target runs on
  w.End();
}

TEST_F(OutputFaultTest, LogCutShortBySomeoneElseMidCaptureStopsItAndKeepsWhatPrecedesTheCut) {
  // Someone cuts the log in half while the capture appends to it: appending on would leave a
  // hole of zeros no reader can tell from frames. The next write stops the capture with one
  // line; the batches before the cut still convert with --salvage.
  const std::string out = Path("run.capnp"), launch_log = Path("l.tsv");
  RunningWorkload w = StartWorkload(launch_log);
  ASSERT_GT(w.pid, 0u);
  auto xtrace = AttachAndWaitForBatches(w.pid, out);
  const auto size = std::filesystem::file_size(out);
  ASSERT_GT(size, 4096u);
  ASSERT_EQ(::truncate(out.c_str(), static_cast<off_t>(size / 2)), 0);
  ASSERT_TRUE(xtrace->WaitStderr("capture stopped early", 30s)) << xtrace->stderr_text();
  auto status = xtrace->Wait(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1) << xtrace->stderr_text();
  const auto errors = LinesWith(xtrace->stderr_text(), "cut short by someone else");
  ASSERT_EQ(errors.size(), 1u) << xtrace->stderr_text();
  EXPECT_NE(errors[0].find("writing " + out + ": the file was cut short by someone else (" +
                           std::to_string(size / 2) + " of the "),
            std::string::npos)
      << errors[0];
  EXPECT_EQ(std::filesystem::file_size(out), size / 2);  // nothing written past the cut
  EXPECT_EQ(kill(static_cast<pid_t>(w.pid), 0), 0);
  w.End();
  auto salvage = RunCommand({kXtrace, "convert", "--salvage", out, "-o", Path("cut.json")});
  EXPECT_EQ(salvage.exit_code(), 0) << salvage.err;
  EXPECT_TRUE(std::regex_search(salvage.err, std::regex("converted the [1-9][0-9]* events")))
      << salvage.err;
}

}  // namespace
}  // namespace xtrace

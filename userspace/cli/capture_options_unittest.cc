// Tests for cli/capture_options: the capture option table sets what each option says, rejects
// bad values naming the option, and shows every option in --help.
#include "cli/capture_options.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cli/capture_command.h"
#include "cli/daemon_command.h"

namespace xtrace {
namespace {

struct Parsed {
  CaptureOptions options;
  std::string error;
  bool ok = true;
};

Parsed Parse(std::vector<std::string> args) {
  Parsed p;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  auto r = ParseCommandLine(CaptureOptionTable(p.options), argv, Positionals::kAnywhere);
  if (!r.ok()) p.error = r.status().message();
  p.ok = r.ok();
  return p;
}

// A log's header names its capture by xtrace's command line; one command line run once per
// rank (`mpirun -n 4 xtrace record -o 'run.%r.capnp'`) still gives each rank's capture a line
// of its own, naming the file the template gave it.
TEST(CaptureOptions, ATemplatedOutputIsNamedInTheCapturesCommandLine) {
  std::vector<std::string> args = {"record", "-o", "run.%p.capnp", "--", "/bin/true"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  auto line = ParseCaptureCommandLine(static_cast<int>(argv.size()), argv.data());
  ASSERT_TRUE(line.ok()) << line.status().message();
  const std::string file = "run." + std::to_string(getpid()) + ".capnp";
  EXPECT_EQ(line->options.output_path, file);
  EXPECT_EQ(line->options.xtrace_command_line,
            "xtrace record -o run.%p.capnp -- /bin/true (output " + file + ")");

  std::vector<std::string> plain = {"record", "-o", "run.capnp", "--", "/bin/true"};
  argv.clear();
  for (auto& a : plain) argv.push_back(a.data());
  line = ParseCaptureCommandLine(static_cast<int>(argv.size()), argv.data());
  ASSERT_TRUE(line.ok()) << line.status().message();
  EXPECT_EQ(line->options.xtrace_command_line, "xtrace record -o run.capnp -- /bin/true");
}

TEST(CaptureOptions, TargetsAccumulate) {
  auto p = Parse({"-p", "1", "--pid", "2", "--comm", "python3", "--cgroup", "/a", "--system",
                  "--no-follow-children", "--duration", "30s", "--detach-after", "2s",
                  "--buffer-size", "64M", "--itt-ring-size", "16M", "--probes-per-process"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.options.pids, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(p.options.comm, "python3");
  EXPECT_EQ(p.options.cgroup, "/a");
  EXPECT_TRUE(p.options.system);
  EXPECT_EQ(p.options.follow_children, false);
  EXPECT_EQ(p.options.duration_ns, 30'000'000'000ull);
  EXPECT_EQ(p.options.library_grace_ns, 2'000'000'000ull);
  EXPECT_EQ(p.options.itt_ring_bytes, 16u << 20);
  EXPECT_EQ(p.options.ring_bytes, 64ull << 20);
  EXPECT_TRUE(p.options.probes_per_process);
  EXPECT_FALSE(Parse({"--comm", "python3"}).options.probes_per_process);
}

// Python frames by default on the calls that trap anyway; the ITT fast path is given up for
// them only when asked.
TEST(CaptureOptions, PythonFramesOnByDefaultWithoutTakingIttsFastPath) {
  const CaptureOptions by_default = Parse({"--pid", "1"}).options;
  EXPECT_TRUE(by_default.wants_python_frames());
  EXPECT_FALSE(by_default.python_frames_over_itt_fast_path());
  const CaptureOptions asked = Parse({"--python-frames"}).options;
  EXPECT_TRUE(asked.wants_python_frames());
  EXPECT_TRUE(asked.python_frames_over_itt_fast_path());
  const CaptureOptions off = Parse({"--no-python-frames"}).options;
  EXPECT_FALSE(off.wants_python_frames());
  EXPECT_FALSE(off.python_frames_over_itt_fast_path());
}

// Probes per process are the default; per library file is asked for, and not with the other.
TEST(CaptureOptions, ProbesPerFileIsAskedFor) {
  EXPECT_FALSE(Parse({"--comm", "python3"}).options.probes_per_file);
  auto p = Parse({"--comm", "python3", "--probes-per-file"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_TRUE(p.options.probes_per_file);
  EXPECT_FALSE(p.options.probes_per_process);
  EXPECT_EQ(Parse({"--probes-per-file", "--probes-per-process"}).error,
            "--probes-per-process and --probes-per-file exclude each other");
  EXPECT_EQ(Parse({"--probes-per-process", "--probes-per-file"}).error,
            "--probes-per-process and --probes-per-file exclude each other");
}

TEST(CaptureOptions, SourcesAndAdvancedSwitches) {
  auto p = Parse({"--drm-only", "--start-paused", "--single-uprobes", "--drm-syscall-tracepoints",
                  "-v", "--follow-children", "-d", "500ms"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.options.drm, DrmCapture::kOnly);
  EXPECT_TRUE(p.options.start_paused);
  EXPECT_TRUE(p.options.single_uprobes);
  EXPECT_EQ(p.options.drm_hook, DrmHook::kSyscallTracepoints);
  EXPECT_TRUE(p.options.verbose);
  EXPECT_EQ(p.options.follow_children, true);
  EXPECT_EQ(p.options.duration_ns, 500'000'000ull);
  EXPECT_EQ(Parse({"--no-drm", "--no-drm"}).options.drm, DrmCapture::kOff);
  EXPECT_EQ(Parse({}).options.drm, DrmCapture::kAlongside);
}

TEST(CaptureOptions, Nice) {
  EXPECT_EQ(Parse({}).options.nice, std::nullopt);
  EXPECT_EQ(Parse({"--nice", "-10"}).options.nice, std::optional<int>(-10));
  EXPECT_EQ(Parse({"--nice=0"}).options.nice, std::optional<int>(0));
  EXPECT_EQ(Parse({"--nice", "+19"}).options.nice, std::optional<int>(19));
  EXPECT_EQ(Parse({"--nice", "-20"}).options.nice, std::optional<int>(-20));
  for (const char* bad : {"20", "-21", "", "-", "x", "1.5", "-0x3", "0019"})
    EXPECT_EQ(Parse({"--nice", bad}).error,
              std::string("--nice: '") + bad + "' is not a nice value (-20 to 19)")
        << bad;
}

TEST(CaptureOptions, DrmHook) {
  EXPECT_EQ(Parse({}).options.drm_hook, DrmHook::kAuto);
  EXPECT_EQ(Parse({"--drm-hook", "auto"}).options.drm_hook, DrmHook::kAuto);
  EXPECT_EQ(Parse({"--drm-hook", "fentry"}).options.drm_hook, DrmHook::kFentry);
  EXPECT_EQ(Parse({"--drm-hook=ioctl-tracepoints"}).options.drm_hook, DrmHook::kIoctlTracepoints);
  EXPECT_EQ(Parse({"--drm-hook", "syscall-tracepoints"}).options.drm_hook,
            DrmHook::kSyscallTracepoints);
  // The older spelling, alone or with the same hook asked by name.
  EXPECT_EQ(Parse({"--drm-syscall-tracepoints", "--drm-hook", "syscall-tracepoints"}).options.drm_hook,
            DrmHook::kSyscallTracepoints);
  EXPECT_EQ(Parse({"--drm-hook", "kprobe"}).error,
            "--drm-hook: 'kprobe' is not a DRM hook (auto, fentry, ioctl-tracepoints, "
            "syscall-tracepoints)");
  EXPECT_EQ(Parse({"--drm-hook", "fentry", "--drm-syscall-tracepoints"}).error,
            "DRM hook asked for twice: 'fentry', then 'syscall-tracepoints' "
            "(--drm-syscall-tracepoints)");
}

TEST(CaptureOptions, BadValuesSayWhichOption) {
  EXPECT_EQ(Parse({"--pid", "x"}).error, "--pid: 'x' is not a process id (a positive number)");
  EXPECT_EQ(Parse({"-p", "0"}).error, "-p: '0' is not a process id (a positive number)");
  EXPECT_EQ(Parse({"--container"}).error, "--container needs a value (ID)");
  EXPECT_EQ(Parse({"--comm", ""}).error, "--comm: '' is not a process name");
  EXPECT_NE(Parse({"--buffer-size", "3M"}).error.find("--buffer-size: '3M' must be a power of two"),
            std::string::npos);
  for (const char* size : {"3M", "32K", "128M"})
    EXPECT_EQ(Parse({"--itt-ring-size", size}).error,
              std::string("--itt-ring-size: '") + size + "' must be a power of two from 64K to 64M (e.g. 1M, 16M)");
  EXPECT_EQ(Parse({}).options.itt_ring_bytes, uint32_t{XT_ITT_RING_BYTES});
  EXPECT_NE(Parse({"--detach-after", "soon"}).error.find("--detach-after: 'soon'"), std::string::npos);
  EXPECT_NE(Parse({"-d", "-5"}).error.find("-d: '-5' is not a duration"), std::string::npos);
  EXPECT_EQ(Parse({"--no-drm", "--drm-only"}).error, "--no-drm and --drm-only exclude each other");
  EXPECT_EQ(Parse({"--frobnicate"}).error, "unknown option '--frobnicate'");
}

// Every option of attach, record, daemon and ctl start is in that command's --help, in a group.
TEST(CaptureOptions, EveryCommandsHelpShowsEveryCaptureOption) {
  CaptureOptions unused;
  const std::vector<std::pair<std::string, std::string>> helps = {
      {"attach", CaptureCommandHelp("attach")},
      {"record", CaptureCommandHelp("record")},
      {"daemon", DaemonCommandHelp()},
      {"ctl", CtlCommandHelp()},
  };
  for (const auto& [command, help] : helps) {
    for (const Option& o : CaptureOptionTable(unused)) {
      std::string flags = o.long_flag + (o.value_name.empty() ? "" : " " + o.value_name);
      if (o.short_flag) flags = std::string("-") + o.short_flag + ", " + flags;
      EXPECT_NE(help.find("  " + flags), std::string::npos) << command << " lacks " << flags;
      // The first words of its help follow.
      EXPECT_NE(help.find(o.help.substr(0, o.help.find(' ', 12))), std::string::npos)
          << command << " lacks the help of " << o.long_flag;
    }
    for (const char* section : {"Usage: xtrace ", "\nTARGET (", "\nSOURCES (", "\nCAPTURE",
                                "\nADVANCED", "\nExamples:\n", "\nExit status: "})
      EXPECT_NE(help.find(section), std::string::npos) << command << " lacks " << section;
    for (size_t start = 0, end; (end = help.find('\n', start)) != std::string::npos; start = end + 1)
      EXPECT_LE(end - start, 95u) << command << ": " << help.substr(start, end - start);
  }
  for (const Option& o : LocalOutputOptionTable(unused)) {
    EXPECT_NE(helps[0].second.find(o.long_flag), std::string::npos) << o.long_flag;
    EXPECT_NE(helps[1].second.find(o.long_flag), std::string::npos) << o.long_flag;
  }
}

}  // namespace
}  // namespace xtrace

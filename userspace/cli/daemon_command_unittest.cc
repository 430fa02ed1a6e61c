// Tests for cli/daemon_command: `xtrace daemon` and `xtrace ctl` command lines, and that
// `ctl start` accepts every capture option `attach` does and carries it to the daemon.
#include "cli/daemon_command.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/capture_command.h"
#include "cli/capture_options.h"
#include "daemon/control_codec.h"

namespace xtrace {
namespace {

// Options of attach that ctl start does not take, and why: the daemon chooses its output
// files and its stderr once, for every capture (`xtrace daemon --output-dir`, `-q`).
const std::vector<std::string> kAttachOnly = {"--output", "--quiet"};

// A valid value for each value name the capture options use.
const std::map<std::string, std::string> kSampleValues = {
    {"PID", "4242"}, {"NAME", "python3"}, {"PATH", "/sys/fs/cgroup/x"}, {"ID", "3f2a9c1b7e"},
    {"TIME", "3s"},  {"SIZE", "64M"}, {"MS", "20"},     {"JOBID", "4242"},
    {"USER", "root"},   {"NODE", "n1"},     {"CLUSTER", "c1"}, {"HOOK", "ioctl-tracepoints"}, {"N", "-5"},
};

// Every CaptureOptions field a capture request carries, as text. A new capture option that
// sets a field not listed here fails EveryAttachOptionReachesTheDaemon until it is added here
// (and so checked to travel through the control protocol).
std::string RequestFields(const CaptureOptions& o) {
  std::ostringstream out;
  out << "pids";
  for (uint32_t pid : o.pids) out << " " << pid;
  out << "; system " << o.system << "; comm " << o.comm << "; cgroup " << o.cgroup
      << "; container " << o.container << "; follow_children "
      << (o.follow_children ? (*o.follow_children ? "yes" : "no") : "default")
      << "; duration " << (o.duration_ns ? std::to_string(*o.duration_ns) : "none")
      << "; ring_bytes " << o.ring_bytes << "; itt_ring_bytes " << o.itt_ring_bytes
      << "; library_grace " << o.library_grace_ns
      << "; start_paused " << o.start_paused << "; drm " << static_cast<int>(o.drm)
      << "; single_uprobes " << o.single_uprobes << "; probes_per_process "
      << o.probes_per_process << "; probes_per_file " << o.probes_per_file
      << "; drm_hook " << static_cast<int>(o.drm_hook)
      << "; nice " << (o.nice ? std::to_string(*o.nice) : "default")
      << "; verbose " << o.verbose << "; hold " << o.hold << "; hold_terminal_jobs " << o.hold_terminal_jobs << "; hold_max " << o.hold_max_ns
      << "; query " << o.query << "; query_max " << o.query_max_ns << "; user " << o.user << "; slurm_job " << o.slurm_job
      << "; python_frames " << (o.python_frames ? (*o.python_frames ? "yes" : "no") : "default")
      << "; slurm_node " << o.slurm_node << "; driver_tables " << o.driver_tables
      << "; slurm_cluster " << o.slurm_cluster;
  return out.str();
}

std::vector<char*> Argv(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return argv;
}

Result<CaptureOptions> Attach(std::vector<std::string> options) {
  std::vector<std::string> args = {"attach"};
  args.insert(args.end(), options.begin(), options.end());
  auto argv = Argv(args);
  auto line = ParseCaptureCommandLine(static_cast<int>(argv.size()), argv.data());
  if (!line.ok()) return line.status();
  return line->options;
}

Result<CtlCommandLine> Ctl(std::vector<std::string> options) {
  std::vector<std::string> args = {"ctl"};
  args.insert(args.end(), options.begin(), options.end());
  auto argv = Argv(args);
  return ParseCtlCommandLine(static_cast<int>(argv.size()), argv.data(), "/run/default.sock");
}

// What the daemon decodes from the request `ctl start` sends.
CaptureOptions ThroughTheControlProtocol(const CaptureOptions& request) {
  capnp::MallocMessageBuilder message;
  auto built = message.initRoot<control_schema::CaptureRequest>();
  control_codec::EncodeRequest(request, built);
  return control_codec::DecodeRequest(built.asReader());
}

// Iterates attach's own option table: every option it accepts (but the output ones, which the
// daemon owns) is accepted by ctl start, changes the request, and arrives in the daemon's
// CaptureOptions unchanged. An option added to attach alone, or a field the control protocol
// does not carry, fails here.
TEST(CtlStart, EveryAttachOptionReachesTheDaemon) {
  const std::vector<std::string> base = {"--pid", "1"};
  auto plain = Attach(base);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  CaptureOptions table_target;
  const OptionTable attach_table =
      Concat(CaptureOptionTable(table_target), LocalOutputOptionTable(table_target));
  int checked = 0;
  for (const Option& o : attach_table) {
    if (std::find(kAttachOnly.begin(), kAttachOnly.end(), o.long_flag) != kAttachOnly.end()) continue;
    std::vector<std::string> args = base;
    args.push_back(o.long_flag);
    if (!o.value_name.empty()) {
      auto sample = kSampleValues.find(o.value_name);
      ASSERT_NE(sample, kSampleValues.end()) << "give a sample " << o.value_name << " for " << o.long_flag;
      args.push_back(sample->second);
    }
    auto attach = Attach(args);
    ASSERT_TRUE(attach.ok()) << o.long_flag << ": " << attach.status().message();
    EXPECT_NE(RequestFields(*attach), RequestFields(*plain))
        << o.long_flag << " sets a field RequestFields does not list";

    args.insert(args.begin(), "start");
    auto ctl = Ctl(args);
    ASSERT_TRUE(ctl.ok()) << "ctl start rejects " << o.long_flag << ": " << ctl.status().message();
    EXPECT_EQ(ctl->verb, ControlVerb::kStart);
    EXPECT_EQ(RequestFields(ctl->request), RequestFields(*attach)) << o.long_flag;
    EXPECT_EQ(RequestFields(ThroughTheControlProtocol(ctl->request)), RequestFields(*attach))
        << o.long_flag << " does not travel through the control protocol";
    ++checked;
  }
  EXPECT_GE(checked, 17);
}

TEST(CtlStart, AllOptionsTogetherArriveUnchanged) {
  const std::vector<std::string> options = {
      "-p", "7", "--comm", "app", "--container", "abc", "--no-follow-children", "--no-drm",
      "--start-paused", "--single-uprobes", "--drm-syscall-tracepoints", "-v", "-d", "1m",
      "--buffer-size", "1M", "--itt-ring-size", "256K", "--detach-after", "1s",
      "--probes-per-process", "--no-hold", "--hold-max", "20", "--no-query"};
  auto attach = Attach(options);
  ASSERT_TRUE(attach.ok()) << attach.status().message();
  std::vector<std::string> args = {"start"};
  args.insert(args.end(), options.begin(), options.end());
  auto ctl = Ctl(args);
  ASSERT_TRUE(ctl.ok()) << ctl.status().message();
  EXPECT_EQ(RequestFields(ThroughTheControlProtocol(ctl->request)), RequestFields(*attach));
}

TEST(CtlCommand, VerbsSocketAndErrors) {
  auto status = Ctl({"status"});
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->verb, ControlVerb::kStatus);
  EXPECT_EQ(status->socket_path, "/run/default.sock");
  auto stop = Ctl({"--socket", "/tmp/s.sock", "stop"});
  ASSERT_TRUE(stop.ok());
  EXPECT_EQ(stop->verb, ControlVerb::kStop);
  EXPECT_EQ(stop->socket_path, "/tmp/s.sock");
  EXPECT_TRUE(Ctl({"--help"})->help);
  EXPECT_TRUE(Ctl({"start", "--help"})->help);

  EXPECT_EQ(Ctl({}).status().message(), "give a command: start, stop, status or list");
  EXPECT_EQ(Ctl({"restart"}).status().message(), "unknown command 'restart' (start, stop, status, list)");
  EXPECT_EQ(Ctl({"list", "--system"}).status().message(), "list takes no options ('--system')");
  EXPECT_EQ(Ctl({"start", "--no-drm"}).status().message(),
            "start needs a target: --pid, --system, --comm, --cgroup, --container or --slurm-job");
  EXPECT_EQ(Ctl({"start", "--pid", "x"}).status().message(),
            "--pid: 'x' is not a process id (a positive number)");
  // -o names a directory of the requester's, which the daemon is given as an absolute path.
  auto to_dir = Ctl({"start", "--system", "-o", "traces/../mine"});
  ASSERT_TRUE(to_dir.ok()) << to_dir.status().message();
  EXPECT_EQ(to_dir->request.output_dir, (std::filesystem::current_path() / "mine").string());
  EXPECT_EQ(ThroughTheControlProtocol(to_dir->request).output_dir, to_dir->request.output_dir);
  EXPECT_EQ(Ctl({"start", "--system", "--output", "x.capnp"}).status().message(),
            "unknown option '--output'");
  EXPECT_EQ(Ctl({"--socket"}).status().message(), "--socket needs a value (PATH)");
}

Result<DaemonCommandLine> Daemon(std::vector<std::string> options) {
  std::vector<std::string> args = {"daemon"};
  args.insert(args.end(), options.begin(), options.end());
  auto argv = Argv(args);
  return ParseDaemonCommandLine(static_cast<int>(argv.size()), argv.data());
}

TEST(DaemonCommand, DefaultsRotationAndACaptureAtOnce) {
  auto idle = Daemon({});
  ASSERT_TRUE(idle.ok());
  EXPECT_EQ(idle->options.socket_path, kDefaultControlSocket);
  EXPECT_EQ(idle->options.config.output_dir, "/var/lib/xtrace");
  EXPECT_EQ(idle->options.config.rotation.max_file_bytes, 256ull << 20);
  EXPECT_EQ(idle->options.config.rotation.max_file_age_ns, 3600'000'000'000ull);
  EXPECT_FALSE(idle->options.start_with.has_value());
  EXPECT_EQ(idle->options.group, "") << "root alone unless a group is given";

  auto agent = Daemon({"--socket", "/s", "--output-dir", "/o", "--max-file-size", "1M",
                       "--max-file-age", "5m", "--max-files", "3", "-q", "--system", "--drm-only",
                       "--start-paused", "--single-uprobes"});
  ASSERT_TRUE(agent.ok()) << agent.status().message();
  const DaemonOptions& d = agent->options;
  EXPECT_EQ(d.socket_path, "/s");
  EXPECT_EQ(d.config.output_dir, "/o");
  EXPECT_EQ(d.config.rotation.max_file_bytes, 1u << 20);
  EXPECT_EQ(d.config.rotation.max_file_age_ns, 300'000'000'000ull);
  EXPECT_EQ(d.config.rotation.max_files, 3u);
  EXPECT_TRUE(d.config.quiet);
  ASSERT_TRUE(d.start_with.has_value());
  EXPECT_TRUE(d.start_with->system);
  EXPECT_EQ(d.start_with->drm, DrmCapture::kOnly);
  EXPECT_TRUE(d.start_with->start_paused);
  EXPECT_TRUE(d.start_with->single_uprobes);

  EXPECT_EQ(Daemon({"--max-files", "0"}).status().message(),
            "--max-files: '0' is not a count from 1 to 1000000");
  EXPECT_EQ(Daemon({"--output-dir", ""}).status().message(), "--output-dir: '' is not a path");
  EXPECT_EQ(Daemon({"now"}).status().message(), "unexpected argument 'now'");
}

TEST(DaemonCommand, AGroupMayBeGivenControlAndHelpSaysSo) {
  auto grouped = Daemon({"--group", "xtrace"});
  ASSERT_TRUE(grouped.ok()) << grouped.status().message();
  EXPECT_EQ(grouped->options.group, "xtrace");
  EXPECT_EQ(Daemon({"--group", ""}).status().message(), "--group: '' is not a group");
  const std::string help = DaemonCommandHelp();
  EXPECT_NE(help.find("--group NAME"), std::string::npos) << help;
  EXPECT_NE(help.find("members of group NAME control captures too"), std::string::npos) << help;
}

}  // namespace
}  // namespace xtrace

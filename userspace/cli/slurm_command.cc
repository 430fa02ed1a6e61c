// The Slurm trigger: the command a user runs, and the step it runs on every node.
#include "cli/slurm_command.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "capture/discovery/slurm_job.h"
#include "cli/args.h"
#include "cli/daemon_command.h"
#include "cli/option_table.h"
#include "daemon/control_client.h"

namespace xtrace {
namespace {

using Flag = const std::string&;
using Value = const std::string&;

uint64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

OptionTable SlurmOptionTable(SlurmCommandLine& l) {
  return {
      {'d', "--duration", "TIME", "CAPTURE", "how long every node captures (default 10s)",
       StoreParsed(l.duration_ns, ParseDuration)},
      {0, "--start-in", "TIME", "CAPTURE",
       "the common start: this long from now (default 3s), time enough for srun to reach every "
       "node; each daemon then attaches to the job's processes on its node",
       StoreParsed(l.start_in_ns, ParseDuration)},
      {'o', "--output-dir", "DIR", "OUTPUT",
       "where the logs go, DIR/NODE/ for each node (default xtrace-slurm-JOBID); on a file "
       "system every node shares, e.g. the job's working directory",
       [&l](Flag flag, Value value) {
         if (value.empty()) return Status::Error(flag + ": '' is not a directory");
         l.output_dir = value;
         return Status::Ok();
       }},
      {0, "--socket", "PATH", "CONTROL",
       "the node daemons' control socket (default /run/xtrace/xtrace.sock); %n in it is the "
       "node's Slurm name, for several slurmd (slurmd -N) on one host each with a daemon",
       [&l](Flag flag, Value value) {
         if (value.empty()) return Status::Error(flag + ": '' is not a path");
         l.socket_path = value;
         return Status::Ok();
       }},
      {0, "--node-step", "", "INTERNAL", "run as the step on one node (what srun starts)",
       SetTrue(l.node_step)},
      {0, "--start-at", "NS", "INTERNAL", "the common start, in CLOCK_REALTIME nanoseconds",
       StoreParsed(l.start_at_realtime_ns, [](Flag flag, Value value) {
         return ParseCount(flag, value, 1, UINT64_MAX);
       })},
  };
}

CommandDoc SlurmDoc() {
  return {
      .command = "slurm",
      .usage = {"JOBID [options]"},
      .description = R"(Captures every rank of a running Slurm job, on every node of it, for one window, without
restarting it and without root: Slurm runs a step on each node of the job
(srun --jobid=JOBID --overlap --ntasks-per-node=1), which asks the node's xtrace daemon
(started by the admin with --allow-users, see scripts/deploy/) to capture the job's processes
on that node from a common start time. The daemon captures only processes of yours (their
real, effective and saved uid are yours), and writes DIR/NODE/*.capnp as you. Then
`xtrace convert DIR` gives one timeline with every rank on one clock, and `xtrace report DIR`
the per-rank tables with the slowest rank per kernel.
)",
      .groups = {{"CAPTURE", ""}, {"OUTPUT", ""}, {"CONTROL", ""},
                 {"INTERNAL", "used by the step this command starts on each node"}},
      .notes = "The xtrace binary must be at the same path on every node (as srun runs it there).\n",
      .examples = {
          "xtrace slurm 4242 --duration 10s -o $HOME/trace-4242",
          "xtrace convert $HOME/trace-4242 -o trace-4242.json     # one timeline, ranks in order",
          "xtrace report $HOME/trace-4242                         # per-rank tables, the straggler",
      },
      .exit_status = "Exit status: 0 when every node captured, 1 otherwise, 2 on a usage error.\n",
  };
}

// Runs argv and returns its standard output; an error if it cannot run or fails.
Result<std::string> RunForOutput(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::Error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) return Status::Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) out.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status::Error(argv[0] + (WIFEXITED(status) && WEXITSTATUS(status) == 127
                                        ? std::string(" cannot be run (is Slurm installed?)")
                                        : " failed"));
  return out;
}

// The step on one node: waits for the common start, asks its daemon, waits for the end.
int RunNodeStep(const SlurmCommandLine& l) {
  const char* node_env = std::getenv("SLURMD_NODENAME");
  if (!node_env || !*node_env) {
    std::fprintf(stderr, "xtrace slurm: --node-step runs as a Slurm step (no SLURMD_NODENAME)\n");
    return 1;
  }
  const std::string node = node_env;
  const std::string socket = NodeSocketPath(l.socket_path, node);
  CaptureOptions request;
  request.slurm_job = l.job;
  request.slurm_node = node;
  request.output_dir = (std::filesystem::path(l.output_dir) / node).string();
  request.duration_ns = l.duration_ns;
  const uint64_t now = RealtimeNs();
  if (l.start_at_realtime_ns > now)
    std::this_thread::sleep_for(std::chrono::nanoseconds(l.start_at_realtime_ns - now));
  auto started = CallDaemon(socket, ControlVerb::kStart, request);
  if (!started.ok()) {
    std::fprintf(stderr, "xtrace slurm: %s: %s\n", node.c_str(), started.status().message().c_str());
    return 1;
  }
  // From the common start, also when this step reached the node after it: how far apart the
  // nodes' windows are is what a user reading the merged timeline needs to know.
  const uint64_t at = RealtimeNs();
  const uint64_t late_ms = (at - std::min(at, l.start_at_realtime_ns)) / 1'000'000;
  std::fprintf(stderr, "xtrace slurm: %s: capturing job %s (started %llu ms after the common start%s)\n",
               node.c_str(), l.job.c_str(), static_cast<unsigned long long>(late_ms),
               now > l.start_at_realtime_ns ? "; this node's step arrived after it" : "");
  auto ended = WaitForCaptureEnd(socket, l.duration_ns + 120'000'000'000ull);
  if (!ended.ok()) {
    std::fprintf(stderr, "xtrace slurm: %s: %s\n", node.c_str(), ended.status().message().c_str());
    return 1;
  }
  std::fprintf(stderr, "xtrace slurm: %s: %s -> %s\n", node.c_str(), ended->c_str(),
               request.output_dir.c_str());
  return 0;
}

int RunCoordinator(SlurmCommandLine l) {
  if (l.output_dir.empty()) l.output_dir = "xtrace-slurm-" + l.job;
  l.output_dir = std::filesystem::absolute(l.output_dir).lexically_normal().string();
  std::error_code ec;
  std::filesystem::create_directories(l.output_dir, ec);
  if (ec) {
    std::fprintf(stderr, "xtrace slurm: %s: cannot create: %s\n", l.output_dir.c_str(), ec.message().c_str());
    return 1;
  }
  auto nodes = RunForOutput({"squeue", "--noheader", "--jobs=" + l.job, "--states=RUNNING", "--format=%D"});
  if (!nodes.ok()) {
    std::fprintf(stderr, "xtrace slurm: squeue: %s\n", nodes.status().message().c_str());
    return 1;
  }
  const long node_count = std::strtol(nodes->c_str(), nullptr, 10);
  if (node_count <= 0) {
    std::fprintf(stderr, "xtrace slurm: job %s is not running (squeue lists no running job of that id)\n",
                 l.job.c_str());
    return 1;
  }
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof(self) - 1) <= 0) {
    std::fprintf(stderr, "xtrace slurm: cannot find its own binary: %s\n", std::strerror(errno));
    return 1;
  }
  const std::string n = std::to_string(node_count);
  const uint64_t start_at = RealtimeNs() + l.start_in_ns;
  // --overlap: the step shares the job's resources instead of waiting for them; one task per
  // node; --mpi=none: no MPI plugin for a step that is not an MPI program.
  std::vector<std::string> argv = {
      "srun",        "--jobid=" + l.job,  "--overlap", "--nodes=" + n, "--ntasks=" + n,
      "--ntasks-per-node=1", "--mpi=none", "--job-name=xtrace", self, "slurm", l.job,
      "--node-step", "--start-at", std::to_string(start_at), "--duration",
      std::to_string(l.duration_ns / 1'000'000) + "ms", "--output-dir", l.output_dir,
      "--socket", l.socket_path};
  std::fprintf(stderr, "xtrace slurm: job %s on %ld node(s): capturing for %.1f s from %.1f s from now\n",
               l.job.c_str(), node_count, l.duration_ns / 1e9, l.start_in_ns / 1e9);
  const pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "xtrace slurm: fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "xtrace slurm: cannot run srun: %s\n", std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  size_t logs = 0, node_dirs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(l.output_dir, ec)) {
    if (!entry.is_directory()) continue;
    ++node_dirs;
    for (const auto& file : std::filesystem::directory_iterator(entry.path(), ec))
      if (file.path().extension() == ".capnp") ++logs;
  }
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::fprintf(stderr, "xtrace slurm: %zu log(s) from %zu node(s) in %s%s\n", logs, node_dirs,
               l.output_dir.c_str(), ok ? "" : " (some nodes failed: see above)");
  if (logs)
    std::fprintf(stderr, "  xtrace convert %s -o %s.json   # one timeline\n  xtrace report %s   # per-rank tables\n",
                 l.output_dir.c_str(), l.output_dir.c_str(), l.output_dir.c_str());
  return ok && logs ? 0 : 1;
}

}  // namespace

std::string NodeSocketPath(const std::string& pattern, const std::string& node) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'n') {
      out += node;
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

std::string SlurmCommandHelp() {
  SlurmCommandLine unused;
  return RenderHelp(SlurmDoc(), SlurmOptionTable(unused));
}

Result<SlurmCommandLine> ParseSlurmCommandLine(int argc, char** argv) {
  SlurmCommandLine l;
  l.socket_path = kDefaultControlSocket;
  auto parsed = ParseCommandLine(SlurmOptionTable(l), std::span(argv + 1, argc - 1), Positionals::kAnywhere);
  if (!parsed.ok()) return parsed.status();
  if (parsed->help) {
    l.help = true;
    return l;
  }
  if (parsed->positionals.size() != 1) return Status::Error("give one Slurm job id");
  l.job = parsed->positionals[0];
  if (Status st = CheckSlurmJobId(l.job); !st.ok()) return st;
  if (l.node_step && (l.start_at_realtime_ns == 0 || l.output_dir.empty()))
    return Status::Error("--node-step needs --start-at and --output-dir");
  return l;
}

int RunSlurmCommand(int argc, char** argv) {
  auto line = ParseSlurmCommandLine(argc, argv);
  if (!line.ok()) return UsageError("slurm", line.status().message());
  if (line->help) {
    std::fputs(SlurmCommandHelp().c_str(), stdout);
    return 0;
  }
  return line->node_step ? RunNodeStep(*line) : RunCoordinator(*line);
}

}  // namespace xtrace

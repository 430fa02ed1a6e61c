// The Slurm trigger: the command a user runs, and the step it runs on every node.
#include "cli/slurm_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
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
      {0, "--cluster", "NAME", "INTERNAL",
       "the job's cluster, for a step whose environment has no SLURM_CLUSTER_NAME",
       [&l](Flag, Value value) {
         l.cluster = value;
         return Status::Ok();
       }},
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
on that node from a common start time. A job's processes are those with its SLURM_JOB_ID,
SLURMD_NODENAME and SLURM_CLUSTER_NAME (a job id is unique within its cluster only). The
daemon captures only processes of yours (their real, effective and saved uid are yours; any
other it leaves out and names), and writes DIR/NODE/*.capnp as you. Ctrl-C (or SIGTERM,
SIGHUP) stops every node's capture early, each with a complete log. Then
`xtrace convert DIR` gives one timeline with every rank on one clock, and `xtrace report DIR`
the per-rank tables with the slowest rank per kernel.
)",
      .groups = {{"CAPTURE", ""}, {"OUTPUT", ""}, {"CONTROL", ""},
                 {"INTERNAL", "used by the step this command starts on each node"}},
      .notes = "The xtrace binary must be at the same path on every node (as srun runs it there).\n",
      .examples = {
          "xtrace slurm 4242 --duration 10s -o $HOME/trace-4242",
          "xtrace slurm 4242 -d 10m -o $HOME/trace-4242       # Ctrl-C stops every node early",
          "xtrace slurm 4242 -d 60s --start-in 10s -o /shared/$USER/t   # srun slow to reach the nodes",
          "xtrace slurm 4242 --socket '/run/xtrace/%n.sock'     # a daemon per slurmd -N node name",
          "xtrace convert $HOME/trace-4242 -o trace-4242.json     # one timeline, ranks in order",
          "xtrace report $HOME/trace-4242                         # per-rank tables, the straggler",
      },
      .exit_status = "Exit status: 0 when every node captured (also when stopped early), 1 otherwise, 2 on a\n"
                     "usage error.\n",
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

// The signals that end a node's capture early: SIGUSR1, what the command sends through srun
// (which forwards it to the step's tasks as it is); SIGTERM, a step cancelled (scancel, the
// job's end: slurmstepd sends SIGKILL KillWait seconds later); SIGINT and SIGHUP.
sigset_t NodeStepStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGUSR1, SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, sig);
  return set;
}

// Waits at most `ns` for one of `set` (blocked); the signal, or 0.
int WaitForSignal(const sigset_t& set, uint64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000ull), static_cast<long>(ns % 1'000'000'000ull)};
  const int sig = sigtimedwait(&set, nullptr, &ts);
  return sig > 0 ? sig : 0;
}

// The step on one node: waits for the common start, asks its daemon, waits for the end; a
// stop signal meanwhile stops the capture it started (and no other), or starts none.
int RunNodeStep(const SlurmCommandLine& l) {
  const char* node_env = std::getenv("SLURMD_NODENAME");
  if (!node_env || !*node_env) {
    std::fprintf(stderr, "xtrace slurm: --node-step runs as a Slurm step (no SLURMD_NODENAME)\n");
    return 1;
  }
  // Blocked from here on, and taken with sigtimedwait: a signal that comes between two looks
  // stays pending until the next, never lost.
  const sigset_t stop_signals = NodeStepStopSignals();
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  const std::string node = node_env;
  const std::string socket = NodeSocketPath(l.socket_path, node);
  CaptureOptions request;
  request.slurm_job = l.job;
  request.slurm_node = node;
  request.slurm_cluster = NodeStepCluster(std::getenv("SLURM_CLUSTER_NAME"), l.cluster);
  request.output_dir = (std::filesystem::path(l.output_dir) / node).string();
  request.duration_ns = l.duration_ns;
  const uint64_t now = RealtimeNs();
  for (uint64_t t = now; t < l.start_at_realtime_ns; t = RealtimeNs()) {
    if (const int sig = WaitForSignal(stop_signals, l.start_at_realtime_ns - t)) {
      std::fprintf(stderr, "xtrace slurm: %s: stopped (%s) before the common start: nothing captured\n",
                   node.c_str(), strsignal(sig));
      return 0;
    }
  }
  const uint64_t asked = RealtimeNs();
  auto started = CallDaemon(socket, ControlVerb::kStart, request);
  if (!started.ok()) {
    std::fprintf(stderr, "xtrace slurm: %s: %s\n", node.c_str(), started.status().message().c_str());
    return 1;
  }
  // Which capture is this step's: the one running now, asked for this job by this user. A
  // stop is sent only while that one runs (the daemon lets a user stop only their own
  // captures; this keeps the step from stopping another of the user's after its own ended).
  auto ours = AskCaptureState(socket);
  const uint64_t our_start = ours.ok() && ours->capturing && ours->slurm_job == l.job &&
                                     ours->owner_uid == getuid()
                                 ? ours->started_realtime_ns
                                 : 0;
  // From the common start, also when this step reached the node after it: how far apart the
  // nodes' windows are is what a user reading the merged timeline needs to know, and what
  // made this node's late — its daemon attaching its probes (the daemon answers once they
  // are in place), or the step reaching the node after the common start.
  const uint64_t at = RealtimeNs();
  auto ms = [](uint64_t from, uint64_t to) {
    return std::to_string((to - std::min(to, from)) / 1'000'000);
  };
  std::string why = "the daemon took " + ms(asked, at) + " ms to attach";
  if (now > l.start_at_realtime_ns)
    why += "; this node's step arrived " + ms(l.start_at_realtime_ns, now) + " ms after it";
  std::fprintf(stderr, "xtrace slurm: %s: capturing job %s%s (from %s ms after the common start: %s)\n",
               node.c_str(), l.job.c_str(),
               request.slurm_cluster.empty() ? "" : (" of cluster " + request.slurm_cluster).c_str(),
               ms(l.start_at_realtime_ns, at).c_str(), why.c_str());
  const uint64_t give_up = RealtimeNs() + l.duration_ns + 120'000'000'000ull;
  bool stopped = false;
  while (true) {
    auto state = AskCaptureState(socket);
    if (!state.ok()) {
      std::fprintf(stderr, "xtrace slurm: %s: %s\n", node.c_str(), state.status().message().c_str());
      return 1;
    }
    if (!state->capturing || state->started_realtime_ns != our_start) {
      // A capture ends with its summary ("xtrace: captured ..."); anything else is its error.
      if (state->last_result.rfind("xtrace:", 0) != 0) {
        std::fprintf(stderr, "xtrace slurm: %s: %s\n", node.c_str(), state->last_result.c_str());
        return 1;
      }
      std::fprintf(stderr, "xtrace slurm: %s: %s%s -> %s\n", node.c_str(), stopped ? "stopped early: " : "",
                   state->last_result.substr(0, state->last_result.find('\n')).c_str(),
                   request.output_dir.c_str());
      return 0;
    }
    if (RealtimeNs() >= give_up) {
      std::fprintf(stderr, "xtrace slurm: %s: the capture still runs after the time it was given\n", node.c_str());
      return 1;
    }
    const int sig = WaitForSignal(stop_signals, 250'000'000ull);
    if (!sig || stopped) continue;
    stopped = true;
    std::fprintf(stderr, "xtrace slurm: %s: %s: stopping the capture of job %s\n", node.c_str(),
                 strsignal(sig), l.job.c_str());
    // Stop returns once the capture's last file is finished; its summary is read above.
    if (auto done = CallDaemon(socket, ControlVerb::kStop, request); !done.ok()) {
      std::fprintf(stderr, "xtrace slurm: %s: stop: %s\n", node.c_str(), done.status().message().c_str());
      return 1;
    }
  }
}

// Set by the command's signal handler: the signal that asked it to stop, or 0.
volatile std::sig_atomic_t g_slurm_stop_signal = 0;

void OnStopSignal(int sig) { g_slurm_stop_signal = sig; }

// The job's cluster name from Slurm's configuration ("" if it cannot be read).
std::string ClusterOfThisSlurm() {
  if (const char* env = std::getenv("SLURM_CLUSTER_NAME"); env && *env) return env;  // in a job
  auto config = RunForOutput({"scontrol", "show", "config"});
  return config.ok() ? ClusterNameInConfig(*config) : "";
}

int RunCoordinator(SlurmCommandLine l) {
  if (l.output_dir.empty()) l.output_dir = "xtrace-slurm-" + l.job;
  l.output_dir = std::filesystem::absolute(l.output_dir).lexically_normal().string();
  // The job first: a mistyped job id leaves no empty directory behind.
  auto nodes = RunForOutput({"squeue", "--noheader", "--jobs=" + l.job, "--states=RUNNING", "--format=%D"});
  if (!nodes.ok()) {
    // squeue said why above (an id Slurm does not know, a job long ended, no controller).
    // RunForOutput names the program first ("squeue failed"); where squeue never ran (pipe,
    // fork) the message is about that and is kept whole.
    const std::string why = nodes.status().message();
    const std::string_view outcome =
        why.starts_with("squeue ") ? std::string_view(why).substr(std::string_view("squeue ").size()) : why;
    std::fprintf(stderr, "xtrace slurm: job %s: squeue --jobs=%s %.*s; nothing captured\n", l.job.c_str(),
                 l.job.c_str(), static_cast<int>(outcome.size()), outcome.data());
    return 1;
  }
  const long node_count = std::strtol(nodes->c_str(), nullptr, 10);
  if (node_count <= 0) {
    std::fprintf(stderr, "xtrace slurm: job %s is not running (squeue lists no running job of that id)\n",
                 l.job.c_str());
    return 1;
  }
  std::error_code ec;
  std::filesystem::create_directories(l.output_dir, ec);
  if (ec) {
    std::fprintf(stderr, "xtrace slurm: %s: cannot create: %s\n", l.output_dir.c_str(), ec.message().c_str());
    return 1;
  }
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof(self) - 1) <= 0) {
    std::fprintf(stderr, "xtrace slurm: cannot find its own binary: %s\n", std::strerror(errno));
    return 1;
  }
  const std::string cluster = ClusterOfThisSlurm();
  const std::string n = std::to_string(node_count);
  const uint64_t start_at = RealtimeNs() + l.start_in_ns;
  // --overlap: the step shares the job's resources instead of waiting for them; one task per
  // node; --mpi=none: no MPI plugin for a step that is not an MPI program; --input=none: srun
  // runs in a process group of its own (below) and must not read the terminal.
  std::vector<std::string> argv = {
      "srun",        "--jobid=" + l.job,  "--overlap", "--nodes=" + n, "--ntasks=" + n,
      "--ntasks-per-node=1", "--mpi=none", "--input=none", "--job-name=xtrace", self, "slurm", l.job,
      "--node-step", "--start-at", std::to_string(start_at), "--duration",
      std::to_string(l.duration_ns / 1'000'000) + "ms", "--output-dir", l.output_dir,
      "--socket", l.socket_path};
  if (!cluster.empty()) argv.insert(argv.end(), {"--cluster", cluster});
  std::fprintf(stderr, "xtrace slurm: job %s%s on %ld node(s): capturing for %.1f s from %.1f s from now\n",
               l.job.c_str(), cluster.empty() ? "" : (" of cluster " + cluster).c_str(), node_count,
               l.duration_ns / 1e9, l.start_in_ns / 1e9);
  // Ctrl-C, SIGTERM, SIGHUP: every node's capture is stopped, not left to run its duration.
  // srun is no help by itself: it answers SIGTERM by killing the step's tasks (SIGKILL), and
  // a first Ctrl-C with a status line. So srun runs in a process group of its own, out of the
  // terminal's reach, and this command, when told to stop, sends it SIGUSR1, which srun
  // forwards to every task as it is: each node's step stops the capture it started.
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &action, nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "xtrace slurm: fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "xtrace slurm: cannot run srun: %s\n", std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);  // as the child does: whichever runs first
  int status = 0;
  bool announced = false;
  auto last_sent = std::chrono::steady_clock::time_point{};
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (const int sig = g_slurm_stop_signal) {
      if (!announced) {
        std::fprintf(stderr, "xtrace slurm: %s: stopping the capture on every node\n", strsignal(sig));
        announced = true;
      }
      // Again each second: a task that srun started after the first one still gets it.
      const auto now = std::chrono::steady_clock::now();
      if (now - last_sent >= std::chrono::seconds(1)) {
        kill(pid, SIGUSR1);
        last_sent = now;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  size_t logs = 0, node_dirs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(l.output_dir, ec)) {
    if (!entry.is_directory()) continue;
    ++node_dirs;
    for (const auto& file : std::filesystem::directory_iterator(entry.path(), ec))
      if (file.path().extension() == ".capnp") ++logs;
  }
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::fprintf(stderr, "xtrace slurm: %zu log(s) from %zu node(s) in %s%s%s\n", logs, node_dirs,
               l.output_dir.c_str(), announced ? ", stopped early on every node" : "",
               ok ? "" : " (some nodes failed: see above)");
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

std::string NodeStepCluster(const char* env, const std::string& passed) {
  return env && *env ? std::string(env) : passed;
}

std::string ClusterNameInConfig(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    constexpr std::string_view kKey = "ClusterName";
    if (line.rfind(kKey, 0) != 0) continue;
    const size_t eq = line.find_first_not_of(' ', kKey.size());
    if (eq == std::string::npos || line[eq] != '=') continue;
    const size_t from = line.find_first_not_of(' ', eq + 1);
    if (from == std::string::npos) return "";
    const size_t to = line.find_last_not_of(" \r");
    return line.substr(from, to - from + 1);
  }
  return "";
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

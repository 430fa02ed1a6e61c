// Start/stop cycles against a daemon, and what they leave behind.
#include "daemon_cycles.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "subprocess.h"

namespace xtrace::testing {

ProcessResources SettledResources(uint32_t pid) {
  ProcessResources least = ReadProcessResources(pid);
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const ProcessResources now = ReadProcessResources(pid);
    if (now.fds < least.fds) least = now;
  }
  return least;
}

CycleFigures RunStartStopCycles(const std::string& xtrace, const std::string& socket,
                                uint32_t daemon_pid, const std::vector<std::string>& start_args,
                                int cycles, int progress_every, int warm_up) {
  CycleFigures f;
  auto ctl = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {xtrace, "ctl", "--socket", socket};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = RunCommand(argv, {}, std::chrono::seconds(120));
    if (r.exit_code() != 0 && f.error.empty())
      f.error = "xtrace ctl " + args[0] + " exited " + std::to_string(r.exit_code()) + ": " + r.err;
    return r.exit_code() == 0;
  };
  std::vector<std::string> start = {"start"};
  start.insert(start.end(), start_args.begin(), start_args.end());
  auto cycle = [&] { return ctl(start) && ctl({"stop"}); };

  for (int i = 0; i < warm_up; ++i)
    if (!cycle()) return f;
  f.before = SettledResources(daemon_pid);
  f.system_before = SystemBpfObjects();
  const auto t0 = std::chrono::steady_clock::now();
  while (f.cycles < cycles && cycle()) {
    ++f.cycles;
    if (progress_every > 0 && f.cycles % progress_every == 0 && f.cycles < cycles) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "after %d cycles (%.0f s): daemon %s; machine's BPF objects %s\n",
                   f.cycles, s, Describe(ReadProcessResources(daemon_pid)).c_str(),
                   Describe(SystemBpfObjects()).c_str());
    }
  }
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.after = SettledResources(daemon_pid);
  f.system_after = SystemBpfObjects();
  return f;
}

std::string Describe(const CycleFigures& f) {
  char line[160];
  std::snprintf(line, sizeof(line), "%d start/stop cycles in %.1f s (%.0f ms per cycle)\n",
                f.cycles, f.seconds, f.cycles ? 1000 * f.seconds / f.cycles : 0.0);
  std::string text = line;
  text += "daemon before: " + Describe(f.before) + "\n";
  text += "daemon after:  " + Describe(f.after) + "\n";
  text += "machine's BPF objects before: " + Describe(f.system_before) + "\n";
  text += "machine's BPF objects after:  " + Describe(f.system_after) + "\n";
  return text;
}

}  // namespace xtrace::testing

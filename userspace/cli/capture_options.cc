// Target and tuning option parsing.
#include "cli/capture_options.h"

#include <unistd.h>

#include "cli/args.h"

namespace xtrace {

const char* const kTargetOptionsHelp = R"(TARGET (combine freely; --cgroup/--container narrow the others)
  -p, --pid PID          process to trace (repeatable)
      --system           every process that uses Level Zero (or another probed library),
                         including ones started later and libraries loaded late
      --comm NAME        processes named NAME (as in /proc/PID/comm), now and later
      --cgroup PATH      only processes in this cgroup v2 and below it: a directory under
                         the cgroup2 mount, or a path as /proc/PID/cgroup shows it; alone,
                         every process in it
      --container ID     only processes of this container (id or unique prefix), found in
                         the cgroup hierarchy (Docker, containerd, CRI-O, Podman)
      --follow-children  trace new children of traced processes too (default for record)
      --no-follow-children
      --probes-per-process
                         with --comm, --cgroup, --container or children: probes go into each
                         selected process alone, so processes outside the selection that use
                         the same libraries pay nothing; a process that starts later is
                         probed once its libraries are seen (its first calls may be missed).
                         Default: probes per library file, which every process mapping the
                         file traps on and the filter then drops
)";

const char* const kDurationHelp =
    "  -d, --duration TIME    stop after TIME (e.g. 10, 30s, 500ms, 5m)\n";

const char* const kTuningHelp = R"(      --buffer-size SIZE BPF ring buffer size, a power of two (default 16M); raise it when
                         the summary reports dropped events
      --detach-after TIME
                         how long probes stay on a library no traced process uses any more
                         (default 10s), so that processes started one after another are
                         traced from their first call
)";

OptionMatch ParseTuningOption(int argc, char** argv, int& i, CaptureOptions& options,
                              std::string* error) {
  const std::string a = argv[i];
  auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
  if (a == "-d" || a == "--duration" || a == "--detach-after") {
    const char* v = value();
    if (!v) return *error = a + " needs a time (e.g. 30s)", OptionMatch::kError;
    auto d = ParseDuration(a, v);
    if (!d.ok()) return *error = d.status().message(), OptionMatch::kError;
    if (a == "--detach-after") options.library_grace_ns = *d;
    else options.duration_ns = *d;
  } else if (a == "--buffer-size") {
    const char* v = value();
    if (!v) return *error = a + " needs a size (e.g. 64M)", OptionMatch::kError;
    auto s = ParseSize(a, v);
    if (!s.ok()) return *error = s.status().message(), OptionMatch::kError;
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    if ((*s & (*s - 1)) != 0 || *s < page)
      return *error = a + ": " + v + " must be a power of two of at least " +
                      std::to_string(page) + " bytes (e.g. 16M, 64M)",
             OptionMatch::kError;
    options.ring_bytes = *s;
  } else {
    return OptionMatch::kNotMine;
  }
  return OptionMatch::kTaken;
}

OptionMatch ParseTargetOption(int argc, char** argv, int& i, CaptureOptions& options,
                              std::string* error) {
  const std::string a = argv[i];
  auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
  if (a == "-p" || a == "--pid") {
    const char* v = value();
    if (!v) return *error = a + " needs a process id", OptionMatch::kError;
    auto pid = ParsePid(a, v);
    if (!pid.ok()) return *error = pid.status().message(), OptionMatch::kError;
    options.pids.push_back(*pid);
  } else if (a == "--system") {
    options.system = true;
  } else if (a == "--comm") {
    const char* v = value();
    if (!v || !*v) return *error = a + " needs a process name", OptionMatch::kError;
    options.comm = v;
  } else if (a == "--cgroup") {
    const char* v = value();
    if (!v || !*v) return *error = a + " needs a cgroup path", OptionMatch::kError;
    options.cgroup = v;
  } else if (a == "--container") {
    const char* v = value();
    if (!v || !*v) return *error = a + " needs a container id", OptionMatch::kError;
    options.container = v;
  } else if (a == "--follow-children") {
    options.follow_children = true;
  } else if (a == "--no-follow-children") {
    options.follow_children = false;
  } else if (a == "--probes-per-process") {
    options.probes_per_process = true;
  } else {
    return OptionMatch::kNotMine;
  }
  return OptionMatch::kTaken;
}

}  // namespace xtrace

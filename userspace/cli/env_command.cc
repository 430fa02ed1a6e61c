// `xtrace env`: locating the collector and printing the lines that load it.
#include "cli/env_command.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "capture/discovery/elf_symbols.h"
#include "capture/discovery/library_resolver.h"
#include "cli/option_table.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

// Where the collector is bind-mounted inside containers (the host path may not exist there).
constexpr const char* kContainerPath = "/opt/xtrace/libxtrace_itt.so";

// True when `path` needs quoting in a shell word or a systemd assignment.
bool NeedsQuotes(const std::string& path) {
  for (char ch : path)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && !std::strchr("/._+-", ch)) return true;
  return false;
}

std::string ShellWord(const std::string& path) {
  if (!NeedsQuotes(path)) return path;
  std::string quoted = "'";
  for (char ch : path) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

std::string Shell(const std::string& c) { return "export INTEL_LIBITTNOTIFY64=" + ShellWord(c) + "\n"; }
std::string Systemd(const std::string& c) {
  const std::string assignment = "INTEL_LIBITTNOTIFY64=" + c;
  return "Environment=" + (NeedsQuotes(c) ? "\"" + assignment + "\"" : assignment) + "\n";
}
std::string Docker(const std::string& c) {
  return std::string("-v ") + c + ":" + kContainerPath + ":ro -e INTEL_LIBITTNOTIFY64=" +
         kContainerPath + "\n";
}
std::string Kubernetes(const std::string& c) {
  return std::string(
             "# container:\n"
             "    env:\n"
             "    - name: INTEL_LIBITTNOTIFY64\n"
             "      value: ") + kContainerPath + "\n" +
         "    volumeMounts:\n"
         "    - name: xtrace-itt\n"
         "      mountPath: " + kContainerPath + "\n" +
         "      readOnly: true\n"
         "# pod:\n"
         "  volumes:\n"
         "  - name: xtrace-itt\n"
         "    hostPath:\n"
         "      path: " + c + "\n" +
         "      type: File\n";
}

Status CheckCollector(const std::string& path) {
  static constexpr std::array<std::string_view, 1> kSite = {XT_ITT_PROBE_SYMBOL};
  auto exports = ElfExports(path, kSite);
  if (!exports.ok()) return exports.status();
  if (!(*exports)[0]) return Status::Error(path + " is not xtrace's ITT collector (no " XT_ITT_PROBE_SYMBOL ")");
  return Status::Ok();
}

struct EnvArguments {
  EnvFormat format = EnvFormat::kAll;
  std::string collector;
};

CommandDoc EnvDoc() {
  return {
      .command = "env",
      .usage = {"[--shell | --systemd | --docker | --kubernetes] [--collector PATH]"},
      .description = R"(Prints what to add so that processes start with xtrace's ITT collector loaded
(INTEL_LIBITTNOTIFY64=<path of libxtrace_itt.so>). ITT clients read the variable once, when
the process starts: set it where your workloads are launched, then 'xtrace attach' or
'xtrace record' captures their ITT labels (oneDNN primitives, TBB algorithms, __itt_* calls).
With no capture attached the collector costs a few ns per ITT call, so it can stay set.
)",
      .groups = {{"OUTPUT", "default: all, each under a comment saying where it goes"},
                 {"ADVANCED", ""}},
      .notes = "",
      .examples = {
          "eval \"$(xtrace env --shell)\"; python train.py &       # then: sudo xtrace attach -p $!",
          "sudo systemctl edit inference.service                 # paste the --systemd line",
      },
      .exit_status = "Exit status: 0 printed, 1 no collector found, 2 bad usage.\n",
  };
}

OptionTable EnvOptionTable(EnvArguments& args) {
  auto format = [&args](EnvFormat chosen) {
    return [&args, chosen](const std::string&, const std::string&) {
      if (args.format != EnvFormat::kAll && args.format != chosen)
        return Status::Error("choose one of --shell, --systemd, --docker, --kubernetes");
      args.format = chosen;
      return Status::Ok();
    };
  };
  return {
      {0, "--shell", "", "OUTPUT", "the export line only, e.g. eval \"$(xtrace env --shell)\"",
       format(EnvFormat::kShell)},
      {0, "--systemd", "", "OUTPUT", "the Environment= line for a unit's [Service] section",
       format(EnvFormat::kSystemd)},
      {0, "--docker", "", "OUTPUT",
       "docker/podman run options (bind-mounts the collector read-only)", format(EnvFormat::kDocker)},
      {0, "--kubernetes", "", "OUTPUT", "pod spec fragments (env, volumeMounts, volumes)",
       format(EnvFormat::kKubernetes)},
      {0, "--collector", "PATH", "ADVANCED",
       "use this collector instead of the one installed with xtrace",
       [&args](const std::string& flag, const std::string& value) {
         if (value.empty()) return Status::Error(flag + ": '' is not a path");
         args.collector = value;
         return Status::Ok();
       }},
  };
}

}  // namespace

std::string EnvText(const std::string& collector, EnvFormat format) {
  switch (format) {
    case EnvFormat::kShell: return Shell(collector);
    case EnvFormat::kSystemd: return Systemd(collector);
    case EnvFormat::kDocker: return Docker(collector);
    case EnvFormat::kKubernetes: return Kubernetes(collector);
    case EnvFormat::kAll: break;
  }
  return "# Shell (~/.profile, a job script, or before the command):\n" + Shell(collector) +
         "\n# systemd unit, [Service] section (systemctl edit UNIT):\n" + Systemd(collector) +
         "\n# Container: docker/podman run options (the collector, bind-mounted read-only, needs\n"
         "# nothing in the image but glibc):\n" +
         Docker(collector) + "\n# Kubernetes pod spec:\n" + Kubernetes(collector);
}

Result<std::string> FindCollector() {
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return Status::Error(std::string("reading /proc/self/exe: ") + std::strerror(errno));
  exe[n] = '\0';
  std::string dir(exe);
  dir.erase(dir.rfind('/'));
  const std::string candidates[] = {
      dir + "/../lib/libxtrace_itt.so",
      dir + "/../" XTRACE_INSTALL_LIBDIR "/libxtrace_itt.so",
  };
  for (const std::string& candidate : candidates) {
    if (auto lib = LibraryAtPath(candidate)) {
      if (Status st = CheckCollector(lib->path); !st.ok()) return st;
      return lib->path;
    }
  }
  return Status::Error("no libxtrace_itt.so next to " + std::string(exe) + " (looked in " +
                       candidates[0] + " and " + candidates[1] + "); give --collector PATH");
}

int RunEnvCommand(int argc, char** argv) {
  EnvArguments args;
  auto parsed = ParseCommandLine(EnvOptionTable(args), std::span(argv + 1, argc - 1),
                                 Positionals::kAnywhere);
  if (!parsed.ok()) return UsageError("env", parsed.status().message());
  if (parsed->help) {
    std::fputs(RenderHelp(EnvDoc(), EnvOptionTable(args)).c_str(), stdout);
    return 0;
  }
  if (!parsed->positionals.empty())
    return UsageError("env", "unexpected argument '" + parsed->positionals[0] + "'");
  const EnvFormat format = args.format;
  std::string collector = args.collector;
  if (collector.empty()) {
    auto found = FindCollector();
    if (!found.ok()) {
      std::fprintf(stderr, "xtrace env: %s\n", found.status().message().c_str());
      return 1;
    }
    collector = *found;
  } else {
    auto lib = LibraryAtPath(collector);
    if (!lib) {
      std::fprintf(stderr, "xtrace env: --collector %s: no such file\n", collector.c_str());
      return 1;
    }
    if (Status st = CheckCollector(lib->path); !st.ok()) {
      std::fprintf(stderr, "xtrace env: --collector: %s\n", st.message().c_str());
      return 1;
    }
    collector = lib->path;  // absolute: the variable is read from any working directory
  }
  std::fputs(EnvText(collector, format).c_str(), stdout);
  return 0;
}

}  // namespace xtrace

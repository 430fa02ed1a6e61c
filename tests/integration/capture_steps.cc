#include "capture_steps.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

namespace xtrace::testing {

using namespace std::chrono_literals;

// Waits until xtrace has said it attached to every pid in `pids` (in any order).
bool WaitAttached(Subprocess& xtrace, const std::vector<uint32_t>& pids,
                  std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    bool all = true;
    for (uint32_t pid : pids)
      all = all && xtrace.stderr_text().find("attached to pid " + std::to_string(pid) + " ") !=
                       std::string::npos;
    if (all) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    xtrace.WaitStderr("attached to pid", 200ms);
  }
}

Result<std::string> AttachRunToDoneAndStop(Subprocess& target, uint32_t pid,
                                           const std::vector<std::string>& xtrace_argv,
                                           std::chrono::milliseconds done_timeout) {
  Subprocess xtrace(xtrace_argv);
  if (!xtrace.WaitStderr("attached to pid " + std::to_string(pid), 60s))
    return Status::Error("xtrace did not attach to pid " + std::to_string(pid) + ":\n" +
                         xtrace.stderr_text());
  if (!target.Send("go")) return Status::Error("the target's stdin is closed");
  if (!target.WaitStdout("done", done_timeout))
    return Status::Error("the target did not print 'done':\n" + target.stderr_text());
  std::this_thread::sleep_for(1s);  // the capture reads the last records while the target lingers
  if (!StopCapture(xtrace))
    return Status::Error("xtrace did not stop with status 0 on SIGINT:\n" + xtrace.stderr_text());
  if (!target.Wait(30s)) return Status::Error("the target did not exit after lingering");
  return xtrace.stderr_text();
}

std::string LoaderPathOf(uint32_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash != std::string::npos && line.find("libze_loader.so", slash) != std::string::npos)
      return line.substr(slash);
  }
  return {};
}

// How many uprobe breakpoints sit in the text of the loader `pid` maps: int3 bytes in its
// memory where the file has another byte. A process holds one exactly where a probe applies to
// it, and pays a trap on every call through it.
Result<size_t> LoaderBreakpoints(uint32_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  const int mem = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (mem < 0) return Status::Error("cannot open the memory of pid " + std::to_string(pid));
  size_t found = 0, mappings = 0;
  for (std::string line; std::getline(maps, line);) {
    unsigned long long start = 0, end = 0, offset = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %4s %llx", &start, &end, perms, &offset) != 4) continue;
    const size_t slash = line.find('/');
    if (perms[2] != 'x' || slash == std::string::npos ||
        line.find("libze_loader.so", slash) == std::string::npos)
      continue;
    std::ifstream file("/proc/" + std::to_string(pid) + "/root" + line.substr(slash),
                       std::ios::binary);
    std::string in_file(end - start, '\0'), in_memory(end - start, '\0');
    file.seekg(static_cast<std::streamoff>(offset));
    file.read(in_file.data(), static_cast<std::streamsize>(in_file.size()));
    const ssize_t got = ::pread(mem, in_memory.data(), in_memory.size(), static_cast<off_t>(start));
    if (got != static_cast<ssize_t>(in_memory.size()) || file.gcount() <= 0) continue;
    ++mappings;
    for (size_t i = 0; i < static_cast<size_t>(file.gcount()); ++i)
      found += in_memory[i] == '\xcc' && in_file[i] != '\xcc';
  }
  ::close(mem);
  if (!mappings) return Status::Error("pid " + std::to_string(pid) + " maps no loader text");
  return found;
}

Result<size_t> WaitForNoLoaderBreakpoints(uint32_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = LoaderBreakpoints(pid);
    if (!left.ok() || *left == 0 || std::chrono::steady_clock::now() >= deadline) return left;
    std::this_thread::sleep_for(100ms);
  }
}

char ProcessState(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const size_t paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() ? 0 : text[paren + 2];
}

bool WaitState(pid_t pid, char want, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (ProcessState(pid) != want) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// Ends workloads that wait for signals: SIGTERM, then their exit.
void EndWorkloads(std::initializer_list<Subprocess*> workloads) {
  for (Subprocess* w : workloads) {
    w->Signal(SIGTERM);
    w->Wait(30s);
  }
}

bool StopCapture(Subprocess& xtrace) {
  xtrace.Signal(SIGINT);
  auto status = xtrace.Wait(60s);
  return status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
}

}  // namespace xtrace::testing

// Child-process runner with a minimal ptrace syscall recorder (see test_child.h).
#include "test_child.h"

#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace simgpu_test {
namespace {

// Distinguishes our markers from any getppid() the runtime might make.
constexpr long kMarkerMagic = 0x51a7e57;
// Exit statuses of a child that could not become what was asked.
constexpr int kTraceMeRefused = 97;
constexpr int kExecFailed = 98;

std::vector<uint8_t> read_child(pid_t pid, uint64_t addr, size_t len) {
  std::vector<uint8_t> buf(len);
  iovec local{buf.data(), len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
  if (n != static_cast<ssize_t>(len)) buf.clear();
  return buf;
}

std::string fd_target(pid_t pid, int fd) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/%d/fd/%d", pid, fd);
  char target[512];
  ssize_t n = readlink(link, target, sizeof target - 1);
  return n < 0 ? std::string() : std::string(target, static_cast<size_t>(n));
}

void record_entry(pid_t pid, const user_regs_struct& regs, std::vector<TracedCall>& calls) {
  if (regs.orig_rax == SYS_getppid && static_cast<long>(regs.rsi) == kMarkerMagic) {
    TracedCall c;
    c.kind = TracedCall::kMarker;
    c.marker = static_cast<long>(regs.rdi);
    calls.push_back(std::move(c));
  } else if (regs.orig_rax == SYS_ioctl) {
    TracedCall c;
    c.kind = TracedCall::kIoctl;
    c.fd = static_cast<int>(regs.rdi);
    c.cmd = regs.rsi;
    c.fd_target = fd_target(pid, c.fd);
    c.arg = read_child(pid, regs.rdx, 64);
    // i915 execbuffer2: buffers_ptr@0, buffer_count@8; each exec object is 56 bytes.
    if (c.cmd == 0x40406469 && c.arg.size() == 64) {
      uint64_t ptr;
      uint32_t count;
      std::memcpy(&ptr, c.arg.data(), 8);
      std::memcpy(&count, c.arg.data() + 8, 4);
      if (count > 0 && count < 1024) c.i915_objects = read_child(pid, ptr, size_t{count} * 56);
    }
    calls.push_back(std::move(c));
  }
}

// Follows the traced main thread from its post-exec stop to its exit.
int trace_until_exit(pid_t pid, std::vector<TracedCall>& calls) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) throw std::runtime_error("waitpid failed");
  if (WIFEXITED(status) && WEXITSTATUS(status) == kTraceMeRefused) {
    throw std::runtime_error("ptrace(PTRACE_TRACEME) refused in the child: syscall tracing of "
                             "a child process is not permitted here (seccomp/YAMA?)");
  }
  if (!WIFSTOPPED(status)) throw std::runtime_error("traced child did not stop after exec");
  if (ptrace(PTRACE_SETOPTIONS, pid, nullptr,
             reinterpret_cast<void*>(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)) != 0) {
    throw std::runtime_error(std::string("PTRACE_SETOPTIONS: ") + std::strerror(errno));
  }
  int deliver = 0;
  for (;;) {
    if (ptrace(PTRACE_SYSCALL, pid, nullptr, reinterpret_cast<void*>(static_cast<long>(deliver))) !=
        0) {
      throw std::runtime_error(std::string("PTRACE_SYSCALL: ") + std::strerror(errno));
    }
    deliver = 0;
    if (waitpid(pid, &status, 0) != pid) throw std::runtime_error("waitpid failed");
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    if (!WIFSTOPPED(status)) continue;
    if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
      user_regs_struct regs{};
      if (ptrace(PTRACE_GETREGS, pid, nullptr, &regs) != 0) continue;
      // On x86-64 the kernel presets rax to -ENOSYS at syscall entry; exits carry the result.
      if (static_cast<long>(regs.rax) == -ENOSYS) record_entry(pid, regs, calls);
    } else {
      deliver = WSTOPSIG(status);  // a real signal for the child: pass it on
    }
  }
}

}  // namespace

void syscall_marker(long id) { syscall(SYS_getppid, id, kMarkerMagic); }

ChildResult run_child(const std::string& scenario, const EnvOverrides& env, bool trace) {
  // Everything the child needs is prepared before fork: this process has threads (the
  // simulated driver's workers), so the child may only make async-signal-safe calls.
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : env) vars[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : vars) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n < 0) throw std::runtime_error("readlink /proc/self/exe failed");
  exe[n] = '\0';
  std::string flag = kChildFlag;
  std::string name = scenario;
  char* argv[] = {exe, flag.data(), name.data(), nullptr};

  char out_path[] = "/tmp/simgpu_child_XXXXXX";
  int out_fd = mkstemp(out_path);
  if (out_fd < 0) throw std::runtime_error("mkstemp failed");

  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(out_fd, STDOUT_FILENO);
    dup2(out_fd, STDERR_FILENO);
    if (trace && ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(kTraceMeRefused);
    execve(exe, argv, envp.data());
    _exit(kExecFailed);
  }
  close(out_fd);

  ChildResult result;
  if (trace) {
    try {
      result.exit_code = trace_until_exit(pid, result.calls);
    } catch (...) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      unlink(out_path);
      throw;
    }
  } else {
    int status = 0;
    waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  result.output = ss.str();
  unlink(out_path);
  return result;
}

}  // namespace simgpu_test

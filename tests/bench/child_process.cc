// Running a benchmark child to completion, with its time and memory.
#include "child_process.h"

#include <sys/stat.h>
#include <sys/wait.h>

namespace xtrace::bench {

double CpuSeconds(const rusage& u) {
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

uint64_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

bool ChildResult::ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

ChildResult RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                     std::chrono::milliseconds timeout) {
  const auto start = std::chrono::steady_clock::now();
  ChildProcess p(argv, extra_env);
  ChildResult r;
  const auto st = p.Wait(timeout);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.status = st ? *st : -1;
  r.out = p.stdout_text();
  r.err = p.stderr_text();
  if (st) {
    r.peak_rss_bytes = p.peak_rss_bytes();
    r.cpu_seconds = CpuSeconds(p.usage());
  }
  return r;
}

}  // namespace xtrace::bench

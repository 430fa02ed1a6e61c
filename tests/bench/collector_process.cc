// Running `xtrace attach` for the benchmark and reading its summary.
#include "collector_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include <cstdio>
#include <fstream>
#include <regex>

namespace xtrace::bench {

using namespace std::chrono_literals;

namespace {

std::vector<std::string> AttachArgv(const BenchContext& ctx, const std::vector<std::string>& targets,
                                    const std::string& output, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {ctx.paths.xtrace, "attach", "-o", output};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), targets.begin(), targets.end());
  return argv;
}

uint64_t Captured(const std::string& text, const char* pattern) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(pattern))) return std::stoull(m[1]);
  return 0;
}

}  // namespace

CollectorProcess::CollectorProcess(const BenchContext& ctx, const std::vector<std::string>& targets,
                                   const std::string& output, const std::vector<std::string>& extra)
    : child_(AttachArgv(ctx, targets, output, extra)), output_(output) {}

Result<std::unique_ptr<CollectorProcess>> CollectorProcess::Attach(
    const BenchContext& ctx, int target_pid, const std::string& output,
    const std::vector<std::string>& extra) {
  return AttachTargets(ctx, {"--pid", std::to_string(target_pid)}, target_pid, output, extra);
}

Result<std::unique_ptr<CollectorProcess>> CollectorProcess::AttachTargets(
    const BenchContext& ctx, const std::vector<std::string>& targets, int expected_pid,
    const std::string& output, const std::vector<std::string>& extra) {
  std::unique_ptr<CollectorProcess> self(new CollectorProcess(ctx, targets, output, extra));
  const std::string attached = "attached to pid " + std::to_string(expected_pid) + " ";
  if (!self->child_.WaitStderr(attached, 60s))
    return Status::Error("xtrace attach did not attach to pid " + std::to_string(expected_pid) +
                         ": " + self->child_.stderr_text());
  return self;
}

uint64_t CollectorProcess::rss_bytes() const {
  std::ifstream in("/proc/" + std::to_string(child_.pid()) + "/status");
  for (std::string line; std::getline(in, line);) {
    unsigned long long kb = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %llu kB", &kb) == 1) return kb * 1024;
  }
  return 0;
}

double CollectorProcess::cpu_seconds_now() const {
  clockid_t clock{};
  timespec ts{};
  if (clock_getcpuclockid(child_.pid(), &clock) != 0 || clock_gettime(clock, &ts) != 0) return 0;
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

Result<CollectorSummary> CollectorProcess::Stop() {
  child_.Signal(SIGINT);
  auto status = child_.Wait(300s);
  if (!status) return Status::Error("xtrace attach did not stop after SIGINT");
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0)
    return Status::Error("xtrace attach failed: " + child_.stderr_text());
  const std::string& err = child_.stderr_text();
  if (err.find("xtrace: captured") == std::string::npos)
    return Status::Error("xtrace attach ended without a summary: " + err);
  CollectorSummary s;
  s.text = err.substr(err.find("xtrace: captured"));
  s.launches = Captured(s.text, R"(captured (\d+) kernel launches)");
  s.events = Captured(s.text, R"(; (\d+) events written)");
  s.dropped = Captured(s.text, R"((\d+) events dropped)");
  const std::regex ioctls(R"((\d+) ioctls? in all)");
  for (std::sregex_iterator it(s.text.begin(), s.text.end(), ioctls), end; it != end; ++it)
    s.ioctls += std::stoull((*it)[1]);
  s.file_bytes = FileSize(output_);
  s.peak_rss_bytes = child_.peak_rss_bytes();
  s.cpu_seconds = CpuSeconds(child_.usage());
  return s;
}

}  // namespace xtrace::bench

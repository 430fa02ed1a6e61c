// Driving ze_call_loop: start, wait for ready, send commands, parse answers.
#include "call_loop_process.h"

#include <cinttypes>
#include <cstdio>

#include "capture/discovery/proc_maps.h"

namespace xtrace::bench {

using namespace std::chrono_literals;

namespace {

std::vector<std::string> CallLoopArgv(const BenchContext& ctx, const std::string& name) {
  if (name.empty()) return {ctx.paths.call_loop};
  return {ctx.paths.call_loop, "--name", name};
}

}  // namespace

CallLoopProcess::CallLoopProcess(const BenchContext& ctx, const std::string& name)
    : child_(CallLoopArgv(ctx, name), {ctx.paths.simze_env()}, /*pipe_stdin=*/true) {}

Result<std::unique_ptr<CallLoopProcess>> CallLoopProcess::Start(const BenchContext& ctx,
                                                                const std::string& name) {
  std::unique_ptr<CallLoopProcess> self(new CallLoopProcess(ctx, name));
  if (!self->child_.WaitStdout("ready", 60s))
    return Status::Error("ze_call_loop did not start: " + self->child_.stderr_text());
  auto libs = FindMappedLibraries(static_cast<uint32_t>(self->pid()), "libze_loader.so");
  if (!libs.ok()) return libs.status();
  if (libs->empty()) return Status::Error("ze_call_loop has not mapped libze_loader.so");
  self->loader_path_ = libs->front().host_path;
  return self;
}

Result<double> CallLoopProcess::NsPerCall(const std::string& call, uint64_t n) {
  child_.Send(call + " " + std::to_string(n));
  auto line = child_.WaitStdout("done " + call, 600s);
  if (!line) return Status::Error("ze_call_loop: no answer to '" + call + "': " + child_.stderr_text());
  unsigned long long calls = 0, ns = 0, cpu_ns = 0;
  if (std::sscanf(line->c_str(), "done %*s calls=%llu ns=%llu cpu_ns=%llu", &calls, &ns,
                  &cpu_ns) != 3 ||
      calls == 0)
    return Status::Error("ze_call_loop: unexpected answer '" + *line + "'");
  return double(cpu_ns) / double(calls);
}

bool CallLoopProcess::StartPace(double rate, double seconds, unsigned threads) {
  return child_.Send("pace " + std::to_string(uint64_t(rate)) + " " + std::to_string(seconds) +
                     " " + std::to_string(threads));
}

Result<PaceResult> CallLoopProcess::FinishPace(double seconds) {
  auto line = child_.WaitStdout("paced", std::chrono::milliseconds(int64_t(seconds * 1000) + 120000));
  if (!line) return Status::Error("ze_call_loop: pace did not finish: " + child_.stderr_text());
  unsigned long long calls = 0, ns = 0, late = 0;
  if (std::sscanf(line->c_str(), "paced calls=%llu ns=%llu late_ns=%llu", &calls, &ns, &late) != 3)
    return Status::Error("ze_call_loop: unexpected answer '" + *line + "'");
  return PaceResult{calls, double(ns) / 1e9, double(late) / 1e6};
}

}  // namespace xtrace::bench

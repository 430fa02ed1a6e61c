// Section 10: what reading a thread's Python frames adds to each traced call. py_call_loop.py
// (this directory) launches through ctypes on the real loader and the simulated GPU from a
// chosen depth of Python frames; each depth is timed untraced, under the trap floor at the
// launch's probe site, and under `xtrace attach` with and without --python-frames; then, with
// BPF run-time statistics on, how long the collector's programs ran per launch with and
// without frames. The frames' cost is the difference between the two captures at the same
// depth, judged against the trap floor (the kernel's trap alone).
#include <algorithm>
#include <optional>

#include "bench_sections.h"
#include "bpf_run_stats.h"
#include "capture/discovery/proc_maps.h"
#include "capture/sources/ze_source.h"
#include "child_process.h"
#include "collector_process.h"
#include "trap_floor.h"

namespace xtrace::bench {
namespace {

using namespace std::chrono_literals;

constexpr const char* kPython = "/usr/bin/python3";
constexpr const char* kSymbol = "zeCommandListAppendLaunchKernel";
// Python frames at the call: a shallow script, a model's forward inside a training loop (20
// to 30: the depth the target is judged at), a deep framework stack.
constexpr int kDepths[] = {5, 20, 30, 50};
constexpr int kTargetDepth = 30;
// What the frames may add per call at kTargetDepth, as a share of the trap floor there.
constexpr double kShareOfFloorTarget = 0.5;

// py_call_loop.py as a child, driven line by line.
class PyCallLoop {
 public:
  explicit PyCallLoop(const BenchContext& ctx)
      : child_({kPython, ctx.paths.py_call_loop},
               {ctx.paths.simze_env(), "PYTHONPATH=" + ctx.paths.workloads_dir}, true) {}

  Status Start() {
    if (!child_.WaitStdout("ready", 60s))
      return Status::Error("py_call_loop.py did not start: " + child_.stderr_text());
    auto libs = FindMappedLibraries(static_cast<uint32_t>(pid()), "libze_loader.so");
    if (!libs.ok()) return libs.status();
    if (libs->empty()) return Status::Error("py_call_loop.py has not mapped libze_loader.so");
    loader_path_ = libs->front().host_path;
    return Status::Ok();
  }
  int pid() const { return child_.pid(); }
  const std::string& loader_path() const { return loader_path_; }

  // CPU time of the calling thread per launch, `n` launches at `depth` frames.
  Result<double> NsPerCall(int depth, uint64_t n) {
    child_.Send(Format("launch %d %llu", depth, (unsigned long long)n));
    auto line = child_.WaitStdout("done launch", 600s);
    if (!line) return Status::Error("py_call_loop.py: no answer: " + child_.stderr_text());
    unsigned long long calls = 0, ns = 0, cpu_ns = 0;
    int got_depth = 0;
    if (std::sscanf(line->c_str(), "done launch calls=%llu ns=%llu cpu_ns=%llu depth=%d", &calls,
                    &ns, &cpu_ns, &got_depth) != 4 ||
        calls == 0)
      return Status::Error("py_call_loop.py: unexpected answer '" + *line + "'");
    if (got_depth != depth)
      return Status::Error(Format("py_call_loop.py launched at depth %d, not %d", got_depth, depth));
    return double(cpu_ns) / double(calls);
  }

 private:
  ChildProcess child_;
  std::string loader_path_;
};

class PythonFramesSection final : public BenchSection {
 public:
  std::string_view id() const override { return "python"; }

  void Run(BenchContext& ctx) override {
    const std::string section = "10 Python frames: launch";
    auto fail = [&](const std::string& what, const Status& st) {
      ctx.table.Add({section, what, "failed", "", st.message(), "", ""});
    };
    PyCallLoop loop(ctx);
    if (Status st = loop.Start(); !st.ok()) return fail("setup", st);
    auto site = ZeSource::ProbeSiteOf(loop.loader_path(), kSymbol);
    if (!site.ok()) return fail("probe site", site.status());
    if (!site->has_value()) return fail("probe site", Status::Error("launches are not probed"));

    const int reps = ctx.options.repetitions;
    const uint64_t n = ctx.options.quick ? 4000 : 20000;
    constexpr size_t kN = std::size(kDepths);
    enum Config { kUntraced, kFloor, kNoFrames, kFrames, kConfigs };
    double best[kConfigs][kN];
    for (auto& row : best) std::fill(row, row + kN, 1e300);
    auto time_depths = [&](Config c) -> Status {
      for (size_t d = 0; d < kN; ++d) {
        if (auto warm = loop.NsPerCall(kDepths[d], n / 4 + 1); !warm.ok()) return warm.status();
        auto t = loop.NsPerCall(kDepths[d], n);
        if (!t.ok()) return t.status();
        best[c][d] = std::min(best[c][d], *t);
      }
      return Status::Ok();
    };
    auto under_capture = [&](Config c) -> Status {
      auto collector = Attach(ctx, loop, c == kFrames, "python-frames.capnp");
      if (!collector.ok()) return collector.status();
      if (Status st = time_depths(c); !st.ok()) return st;
      return (*collector)->Stop().status();
    };
    ctx.Say(section + Format(": untraced, trap floor, capture without and with frames at "
                             "depths 5, 20, 30, 50 (%d rounds)", reps));
    for (int round = 0; round < reps; ++round) {
      Status st = time_depths(kUntraced);
      if (st.ok()) {
        auto floor = TrapFloor::Attach(loop.pid(), loop.loader_path(), kSymbol, **site, true);
        st = floor.ok() ? time_depths(kFloor) : floor.status();
      }
      if (st.ok()) st = under_capture(kNoFrames);
      if (st.ok()) st = under_capture(kFrames);
      if (!st.ok()) return fail("timing", st);
    }

    ctx.Say(section + ": BPF run time without and with frames");
    double bpf[2][kN];
    for (int frames = 0; frames < 2; ++frames) {
      auto t = BpfRunTimes(ctx, loop, frames == 1, n, bpf[frames]);
      if (!t.ok()) return fail("BPF program time", t);
    }

    for (size_t d = 0; d < kN; ++d) {
      const double base = best[kUntraced][d];
      const double floor = best[kFloor][d] - base;
      const double without = best[kNoFrames][d] - base, with = best[kFrames][d] - base;
      const double frames = with - without, frames_bpf = bpf[1][d] - bpf[0][d];
      const double share = frames / std::max(floor, 1.0);
      const bool judged = kDepths[d] == kTargetDepth;
      ctx.table.Add(
          {section, Format("depth %d: frames on (--python-frames) minus off", kDepths[d]),
           Format("%+.2f us/call", frames / 1000), Format("%.0f%% of floor", 100 * share),
           Format("untraced %.0f ns, floor %+.0f, capture off %+.0f / on %+.0f ns; BPF time "
                  "off %.0f / on %.0f ns (%+.0f)",
                  base, floor, without, with, bpf[0][d], bpf[1][d], frames_bpf),
           judged ? Format("<= %.0f%% of floor", 100 * kShareOfFloorTarget) : "",
           judged ? Verdict(100 * share, 100 * kShareOfFloorTarget, true, " pts") : ""});
    }
    if (kN > 1) {
      const double per_frame =
          ((best[kFrames][kN - 1] - best[kNoFrames][kN - 1]) -
           (best[kFrames][0] - best[kNoFrames][0])) /
          double(kDepths[kN - 1] - kDepths[0]);
      const double per_frame_bpf =
          ((bpf[1][kN - 1] - bpf[0][kN - 1]) - (bpf[1][0] - bpf[0][0])) /
          double(kDepths[kN - 1] - kDepths[0]);
      ctx.table.Add({section, "frames' cost per frame (depth 5 to 50)",
                     Format("%+.0f ns/frame", per_frame), "",
                     Format("BPF time %+.1f ns/frame", per_frame_bpf), "", ""});
    }
  }

 private:
  static Result<std::unique_ptr<CollectorProcess>> Attach(const BenchContext& ctx,
                                                          PyCallLoop& loop, bool frames,
                                                          const std::string& output) {
    // --no-drm: the syscall tracepoints tax every syscall of the machine (section 2).
    std::vector<std::string> extra = {"--no-drm", frames ? "--python-frames" : "--no-python-frames",
                                      "--verbose"};
    auto collector = CollectorProcess::Attach(ctx, loop.pid(), ctx.Scratch(output), extra);
    if (!collector.ok() || !frames) return collector;
    // The comparison is void unless the interpreter was found and checked (said before
    // "attached").
    const std::string found = "pid " + std::to_string(loop.pid()) + ": CPython";
    if ((*collector)->stderr_text().find(found) == std::string::npos)
      return Status::Error("xtrace attach --python-frames found no CPython in py_call_loop.py: " +
                           (*collector)->stderr_text());
    return collector;
  }

  // Per-launch run time of the collector's Level Zero programs at each depth (fastest of
  // the repetitions), with or without frames.
  static Status BpfRunTimes(BenchContext& ctx, PyCallLoop& loop, bool frames, uint64_t n,
                            double* out) {
    auto stats = BpfRunStats::Enable();
    if (!stats.ok()) return stats.status();
    auto collector = Attach(ctx, loop, frames, "python-frames-bpfstats.capnp");
    if (!collector.ok()) return collector.status();
    const std::vector<uint32_t> ids = ProgramIdsOfProcess((*collector)->pid(), "ze_");
    if (ids.empty()) return Status::Error("no BPF programs found in the collector's fds");
    for (size_t d = 0; d < std::size(kDepths); ++d) {
      if (auto warm = loop.NsPerCall(kDepths[d], n / 4 + 1); !warm.ok()) return warm.status();
      out[d] = 1e300;
      for (int i = 0; i < ctx.options.repetitions; ++i) {
        const RunTotals before = BpfRunStats::Read(ids);
        if (auto t = loop.NsPerCall(kDepths[d], n); !t.ok()) return t.status();
        const RunTotals after = BpfRunStats::Read(ids);
        if (after.run_count - before.run_count < 2 * n)
          return Status::Error(Format("the programs ran %llu times for %llu launches",
                                      (unsigned long long)(after.run_count - before.run_count),
                                      (unsigned long long)n));
        out[d] = std::min(out[d], double(after.run_time_ns - before.run_time_ns) / double(n));
      }
    }
    return (*collector)->Stop().status();
  }
};

}  // namespace

std::unique_ptr<BenchSection> MakePythonFramesSection() {
  return std::make_unique<PythonFramesSection>();
}

}  // namespace xtrace::bench

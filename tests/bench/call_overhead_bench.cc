// Section 1: what capture adds to each probed Level Zero call, against the floor — empty BPF
// programs on uprobes at the same instruction, i.e. the kernel's trap alone. Each call kind
// is timed in one ze_call_loop process: untraced, under the floor at the function's entry
// and at the probe site, and under the real collector (with and without its DRM source);
// then, with BPF run-time statistics on, how long the collector's programs ran per call.
#include <algorithm>
#include <utility>
#include <optional>

#include "bench_sections.h"
#include "bpf_run_stats.h"
#include "call_loop_process.h"
#include "capture/sources/ze_source.h"
#include "collector_process.h"
#include "trap_floor.h"

namespace xtrace::bench {
namespace {

// BPF time per captured call may be at most this share of the trap floor there.
constexpr double kBpfShareOfFloorTarget = 0.25;

// A loader entry point the loop can call.
struct LoopCall {
  const char* call;  // ze_call_loop command
  const char* symbol;
};

constexpr LoopCall kCalls[] = {
    {"launch", "zeCommandListAppendLaunchKernel"},
    {"copy", "zeCommandListAppendMemoryCopy"},
    {"sync", "zeEventHostSynchronize"},
};

std::string Us(double ns) { return Format("%+.2f us/call", ns / 1000); }
std::string Ns(double ns) { return Format("%.0f ns", ns); }

class CallOverheadSection final : public BenchSection {
 public:
  std::string_view id() const override { return "overhead"; }

  void Run(BenchContext& ctx) override {
    auto loop = CallLoopProcess::Start(ctx);
    if (!loop.ok()) {
      ctx.table.Add({"1 overhead", "setup", "failed", "", loop.status().message(), "", ""});
      return;
    }
    for (const LoopCall& call : kCalls) Measure(ctx, **loop, call);
    MeasureIoctl(ctx, **loop);
  }

 private:
  void Measure(BenchContext& ctx, CallLoopProcess& loop, const LoopCall& call) {
    const std::string section = std::string("1 overhead: ") + call.call;
    auto fail = [&](const std::string& what, const Status& st) {
      ctx.table.Add({section, what, "failed", "", st.message(), "", ""});
    };
    const int reps = ctx.options.repetitions;
    const uint64_t fast_n = ctx.options.quick ? 4000 : 20000;
    const uint64_t slow_n = ctx.options.quick ? 200 : 1000;  // single-stepped: tens of us each

    // Where the Level Zero source probes this function (bytes into it), if it does.
    auto probed_at = ZeSource::ProbeSiteOf(loop.loader_path(), call.symbol);
    if (!probed_at.ok()) return fail("probe site", probed_at.status());
    const bool probed = probed_at->has_value();
    const uint64_t site = probed_at->value_or(0);

    // Configurations are measured in interleaved rounds (untraced, floor, capture, ...) and
    // the fastest round of each is kept, so load from other processes that comes and goes
    // during the run hits every configuration alike.
    enum Config { kUntraced, kFloorEntry, kFloorSite, kCaptureSite, kCaptureNoDrm, kConfigs };
    double best[kConfigs];
    std::fill(best, best + kConfigs, 1e300);
    auto time_calls = [&](Config c, uint64_t n) -> Status {
      if (auto warm = loop.NsPerCall(call.call, n / 4 + 1); !warm.ok()) return warm.status();
      auto t = loop.NsPerCall(call.call, n);
      if (!t.ok()) return t.status();
      best[c] = std::min(best[c], *t);
      return Status::Ok();
    };
    auto under_floor = [&](Config c, uint64_t offset, uint64_t n) -> Status {
      auto floor = TrapFloor::Attach(loop.pid(), loop.loader_path(), call.symbol, offset, true);
      if (!floor.ok()) return floor.status();
      return time_calls(c, n);
    };
    auto under_capture = [&](Config c, uint64_t n) -> Status {
      std::vector<std::string> extra;
      if (c == kCaptureNoDrm) extra.push_back("--no-drm");
      auto collector = CollectorProcess::Attach(ctx, loop.pid(), ctx.Scratch("overhead.capnp"), extra);
      if (!collector.ok()) return collector.status();
      if (Status st = time_calls(c, n); !st.ok()) return st;
      return (*collector)->Stop().status();
    };
    ctx.Say(section + ": untraced, trap floor" + (probed ? ", capture" : "") + Format(" (%d rounds)", reps));
    for (int round = 0; round < reps; ++round) {
      // The entry configurations are single-stepped (tens of us per call): fewer rounds.
      const bool slow_round = round < std::max(1, reps / 2);
      Status st = time_calls(kUntraced, fast_n);
      if (st.ok() && slow_round) st = under_floor(kFloorEntry, 0, slow_n);
      if (st.ok()) st = under_floor(kFloorSite, site, site ? fast_n : slow_n);
      if (st.ok() && probed) st = under_capture(kCaptureSite, site ? fast_n : slow_n);
      if (st.ok() && probed) st = under_capture(kCaptureNoDrm, site ? fast_n : slow_n);
      if (!st.ok()) return fail("timing", st);
    }
    const double base = best[kUntraced];
    const double floor_entry = best[kFloorEntry] - base, floor_site = best[kFloorSite] - base;
    ctx.table.Add({section, "untraced call", Format("%.0f ns/call", base), "", Ns(base), "", ""});
    ctx.table.Add({section, "trap floor at entry (+0x0), empty entry+return programs",
                   Us(floor_entry),
                   Format("%.1fx the site floor", floor_entry / std::max(floor_site, 1.0)),
                   Ns(floor_entry), "", ""});
    ctx.table.Add({section, Format("trap floor at the probe site (+0x%llx)", (unsigned long long)site),
                   Us(floor_site), "1.00x (the floor)", Ns(floor_site), "",
                   site ? "" : "the site stays at the entry (not a stub the site rule moves past)"});
    if (!probed) {
      ctx.table.Add({section, "capture overhead", "n/a", "", "", "",
                     std::string("n/a: ") + call.symbol + " is not probed by this build"});
      return;
    }
    const double cap_site = best[kCaptureSite] - base;
    ctx.table.Add({section, "capture (xtrace attach)", Us(cap_site),
                   Format("%.2fx floor", cap_site / std::max(floor_site, 1.0)), Ns(cap_site), "",
                   ""});
    const double cap_no_drm = best[kCaptureNoDrm] - base;
    ctx.table.Add({section, "capture, chosen site, without the DRM source (--no-drm)",
                   Us(cap_no_drm), Format("%.2fx floor", cap_no_drm / std::max(floor_site, 1.0)),
                   Ns(cap_no_drm), "", ""});

    ctx.Say(section + ": BPF run time");
    auto bpf = BpfRunTimes(ctx, loop, call, site, site ? fast_n : slow_n);
    if (!bpf.ok()) return fail("BPF program time", bpf.status());
    const auto [ours_raw, empty] = *bpf;
    // The floor already runs (empty) programs; what our code adds is the difference. Raw
    // figures include what bpf_stats itself costs per program run.
    const double ours = ours_raw - empty;
    const double share = ours / std::max(floor_site, 1.0);
    ctx.table.Add({section, "BPF program time per captured call (entry+return, bpf_stats)",
                   Format("%.0f ns/call", ours), Format("%.0f%% of floor", 100 * share),
                   Format("%.0f ns raw - %.0f ns empty programs", ours_raw, empty),
                   Format("<= %.0f%% of floor", 100 * kBpfShareOfFloorTarget),
                   Verdict(100 * share, 100 * kBpfShareOfFloorTarget, true, " pts")});
    ctx.table.Add({section, "capture minus floor (timed, no bpf_stats)",
                   Format("%+.0f ns/call", cap_site - floor_site),
                   Format("%.0f%% of floor", 100 * (cap_site - floor_site) / std::max(floor_site, 1.0)),
                   Ns(cap_site - floor_site), "", ""});
  }

  // The DRM source on the two hooks a kernel without BPF trampolines has (fentry, where the
  // kernel allows it, is not measured here), each against empty programs on the same hook.
  // The ioctl trace events are what such a kernel's capture takes by default; the raw
  // syscall tracepoints are the last resort. (No bpf_stats row: the raw tracepoints' programs
  // run for every other syscall on the machine, so their run time cannot be charged to the
  // loop's calls.)
  void MeasureIoctl(BenchContext& ctx, CallLoopProcess& loop) {
    const std::string section = "1 overhead: DRM exec ioctl";
    auto fail = [&](const std::string& what, const Status& st) {
      ctx.table.Add({section, what, "failed", "", st.message(), "", ""});
    };
    const uint64_t n = ctx.options.quick ? 4000 : 20000;
    struct Hook {
      const char* name;      // as --drm-hook says it
      const char* floor;     // how the table names its empty programs
      Result<std::unique_ptr<TrapFloor>> (*attach_floor)();
      double floor_ns = 1e300, capture_ns = 1e300;
      uint64_t captured = 0;
    };
    Hook hooks[] = {
        {"ioctl-tracepoints", "empty programs on the ioctl trace events (syscalls:sys_{enter,exit}_ioctl)",
         &TrapFloor::AttachIoctlEvents},
        {"syscall-tracepoints", "empty programs on the raw tracepoints (tp_btf sys_enter + sys_exit)",
         &TrapFloor::AttachSyscalls},
    };
    double untraced = 1e300;
    auto time_calls = [&](double& best) -> Status {
      if (auto warm = loop.NsPerCall("ioctl", n / 4 + 1); !warm.ok()) return warm.status();
      auto t = loop.NsPerCall("ioctl", n);
      if (!t.ok()) return t.status();
      best = std::min(best, *t);
      return Status::Ok();
    };
    // Three rounds at most: each pays two captures' starts (about a second each).
    const int rounds = std::min(ctx.options.repetitions, 3);
    ctx.Say(section + Format(": untraced, then each hook's floor and capture (%d rounds)", rounds));
    for (int round = 0; round < rounds; ++round) {
      Status st = time_calls(untraced);
      for (Hook& hook : hooks) {
        if (!st.ok()) break;
        if (auto floor = hook.attach_floor(); floor.ok()) st = time_calls(hook.floor_ns);
        else st = floor.status();
        if (!st.ok()) break;
        auto collector = CollectorProcess::Attach(ctx, loop.pid(), ctx.Scratch("ioctl.capnp"),
                                                  {"--drm-hook", hook.name});
        st = collector.ok() ? time_calls(hook.capture_ns) : collector.status();
        if (st.ok()) {
          auto summary = (*collector)->Stop();
          if (summary.ok()) hook.captured += summary->ioctls;
          else st = summary.status();
        }
      }
      if (!st.ok()) return fail("timing", st);
    }
    ctx.table.Add({section, "untraced ioctl (GEM_EXECBUFFER2 on /dev/null)",
                   Format("%.0f ns/call", untraced), "", Ns(untraced), "", ""});
    for (const Hook& hook : hooks) {
      const double floor = hook.floor_ns - untraced, cap = hook.capture_ns - untraced;
      ctx.table.Add({section, Format("floor: %s", hook.floor), Us(floor), "1.00x (the floor)",
                     Ns(floor), "", ""});
      ctx.table.Add({section, Format("capture (DRM source, --drm-hook %s)", hook.name), Us(cap),
                     Format("%.2fx floor", cap / std::max(floor, 1.0)), Ns(cap), "",
                     hook.captured ? Format("%llu ioctls captured", (unsigned long long)hook.captured)
                                   : "no ioctl captured: the comparison is void"});
    }
  }

  // Fastest per-call run time, over `n` calls, of the programs with these ids.
  Result<double> RunTimePerCall(BenchContext& ctx, CallLoopProcess& loop, const LoopCall& call,
                                const std::vector<uint32_t>& ids, uint64_t n) {
    if (auto warm = loop.NsPerCall(call.call, n); !warm.ok()) return warm;
    double best = 0;
    for (int i = 0; i < ctx.options.repetitions; ++i) {
      const RunTotals before = BpfRunStats::Read(ids);
      if (auto t = loop.NsPerCall(call.call, n); !t.ok()) return t;
      const RunTotals after = BpfRunStats::Read(ids);
      // An entry and a return program per call: fewer runs means a program never ran, and
      // its missing time would flatter the figure.
      if (after.run_count - before.run_count < 2 * n)
        return Status::Error(Format("the programs ran %llu times for %llu calls",
                                    (unsigned long long)(after.run_count - before.run_count),
                                    (unsigned long long)n));
      const double per_call = double(after.run_time_ns - before.run_time_ns) / double(n);
      if (i == 0 || per_call < best) best = per_call;
    }
    return best;
  }

  // Per-call run time (bpf_stats) of the collector's programs and of the empty floor
  // programs at the same site.
  Result<std::pair<double, double>> BpfRunTimes(BenchContext& ctx, CallLoopProcess& loop,
                                                const LoopCall& call, uint64_t offset, uint64_t n) {
    auto stats = BpfRunStats::Enable();
    if (!stats.ok()) return stats.status();
    double ours = 0, empty = 0;
    {
      auto collector = CollectorProcess::Attach(ctx, loop.pid(), ctx.Scratch("bpfstats.capnp"));
      if (!collector.ok()) return collector.status();
      // Only the Level Zero programs: the collector's syscall-tracepoint programs run for
      // every syscall on the machine, which no per-call figure could be charged with.
      const std::vector<uint32_t> ids = ProgramIdsOfProcess((*collector)->pid(), "ze_");
      if (ids.empty()) return Status::Error("no BPF programs found in the collector's fds");
      auto t = RunTimePerCall(ctx, loop, call, ids, n);
      if (!t.ok()) return t.status();
      ours = *t;
      if (auto s = (*collector)->Stop(); !s.ok()) return s.status();
    }
    auto floor = TrapFloor::Attach(loop.pid(), loop.loader_path(), call.symbol, offset, true);
    if (!floor.ok()) return floor.status();
    auto t = RunTimePerCall(ctx, loop, call, (*floor)->program_ids(), n);
    if (!t.ok()) return t.status();
    empty = *t;
    return std::make_pair(ours, empty);
  }
};

}  // namespace

std::unique_ptr<BenchSection> MakeCallOverheadSection() {
  return std::make_unique<CallOverheadSection>();
}

}  // namespace xtrace::bench

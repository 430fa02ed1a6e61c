// Section 2: a process that is not targeted pays nothing while another is traced. Two
// ze_call_loop processes map the same loader file; A launches at a steady rate, B runs the
// timed loops (a launch, a plain syscall, a DRM ioctl). B is timed with A untraced and with
// the collector attached to A, in interleaved rounds, so the only difference between the two
// is the capture of A.
#include <algorithm>
#include <iterator>

#include "bench_sections.h"
#include "call_loop_process.h"
#include "collector_process.h"

namespace xtrace::bench {
namespace {

// A's steady load: enough to keep the collector busy without taking a core from B.
constexpr double kTracedRate = 20000;

class UntargetedSection final : public BenchSection {
 public:
  std::string_view id() const override { return "untargeted"; }

  void Run(BenchContext& ctx) override {
    const std::string section = "2 untargeted process";
    auto fail = [&](const Status& st) {
      ctx.table.Add({section, "launch loop of B", "failed", "", st.message(), "", ""});
    };
    auto traced = CallLoopProcess::Start(ctx);
    if (!traced.ok()) return fail(traced.status());
    auto other = CallLoopProcess::Start(ctx);
    if (!other.ok()) return fail(other.status());
    const uint64_t n = ctx.options.quick ? 4000 : 20000;
    const double pace_seconds = ctx.options.quick ? 1 : 2;

    // What B does: a probed Level Zero call, a syscall that is not an ioctl, and an ioctl
    // with a DRM command (the DRM source sees syscalls at tracepoints every process passes).
    static constexpr const char* kCalls[] = {"launch", "syscall", "ioctl"};
    constexpr size_t kKinds = std::size(kCalls);
    // A untraced, A traced, A traced without the DRM source (whose syscall tracepoints every
    // process on the machine passes through).
    enum Config { kUntraced, kTraced, kTracedNoDrm, kConfigs };
    double best[kKinds][kConfigs];
    for (auto& b : best) std::fill(b, b + kConfigs, 1e300);
    uint64_t captured = 0;
    ctx.Say(section + Format(": %d rounds", ctx.options.repetitions));
    for (int round = 0; round < ctx.options.repetitions; ++round) {
      for (int config = 0; config < kConfigs; ++config) {
        std::unique_ptr<CollectorProcess> collector;
        if (config != kUntraced) {
          std::vector<std::string> extra;
          if (config == kTracedNoDrm) extra.push_back("--no-drm");
          auto c = CollectorProcess::Attach(ctx, (*traced)->pid(), ctx.Scratch("untargeted.capnp"),
                                            extra);
          if (!c.ok()) return fail(c.status());
          collector = std::move(*c);
        }
        (*traced)->StartPace(kTracedRate, pace_seconds, 1);
        // B runs while A is pacing (B's loops are far shorter than A's pace).
        auto paced_until = std::chrono::steady_clock::now() +
                           std::chrono::milliseconds(int64_t(pace_seconds * 900));
        while (std::chrono::steady_clock::now() < paced_until) {
          for (size_t k = 0; k < kKinds; ++k) {
            auto t = (*other)->NsPerCall(kCalls[k], n);
            if (!t.ok()) return fail(t.status());
            best[k][config] = std::min(best[k][config], *t);
          }
        }
        if (auto p = (*traced)->FinishPace(pace_seconds); !p.ok()) return fail(p.status());
        if (collector) {
          auto s = collector->Stop();
          if (!s.ok()) return fail(s.status());
          captured += s->launches;
        }
      }
    }
    for (size_t k = 0; k < kKinds; ++k) {
      const double untraced = best[k][kUntraced];
      for (Config c : {kTraced, kTracedNoDrm}) {
        const double added = best[k][c] - untraced;
        // A trap would cost B hundreds of ns per call; a few ns is timer noise.
        const bool nothing = added < 0.05 * untraced + 3;
        ctx.table.Add({section,
                       Format("B's %s while A is traced%s", kCalls[k],
                              c == kTracedNoDrm ? " (--no-drm)" : ""),
                       Format("%+.1f ns/call", added),
                       Format("%.3fx A untraced", best[k][c] / untraced),
                       Format("%.1f ns untraced, %.1f ns", untraced, best[k][c]),
                       "nothing measurable",
                       nothing ? "met"
                               : Format("MISSED: B pays %.0f ns/call (%.0f%%)", added,
                                        100 * added / untraced)});
      }
    }
    ctx.table.Add({section, "launches of A captured meanwhile", Format("%llu", (unsigned long long)captured),
                   "", "", "", captured > 0 ? "" : "nothing captured: the comparison is void"});
  }
};

}  // namespace

std::unique_ptr<BenchSection> MakeUntargetedSection() {
  return std::make_unique<UntargetedSection>();
}

}  // namespace xtrace::bench

// Section 2: a process that is not targeted pays nothing while others are traced. Two
// ze_call_loop processes map the same loader file; A launches at a steady rate, B runs the
// timed loops (a launch, a plain syscall, a DRM ioctl). B is timed with A untraced and under
// captures of A — by pid, and with each scope that finds its processes itself, at its
// default (probes per process): by name (--comm, which selects A and not B), by A's cgroup
// (--cgroup; --container is a cgroup too), and as a launched command's children are
// (--follow-children) — and by name with --probes-per-file for contrast, in interleaved
// rounds, so the only difference between configurations is the capture. (--system selects
// every process, B too: nobody is untargeted there.)
#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <string_view>

#include "bench_sections.h"
#include "call_loop_process.h"
#include "collector_process.h"
#include "scratch_cgroup.h"

namespace xtrace::bench {
namespace {

// A's steady load: enough to keep the collector busy without taking a core from B.
constexpr double kTracedRate = 20000;
// A's process name; B keeps ze_call_loop.
constexpr const char* kTracedName = "xt_bench_a";

// One way of capturing A.
struct Capture {
  const char* label;                 // how the table names it
  std::vector<std::string> targets;  // empty: A untraced
  std::vector<std::string> extra;
  // Not a default: the row says what B pays there rather than a verdict.
  bool contrast = false;
};

class UntargetedSection final : public BenchSection {
 public:
  std::string_view id() const override { return "untargeted"; }

  void Run(BenchContext& ctx) override {
    const std::string section = "2 untargeted process";
    auto fail = [&](const Status& st) {
      ctx.table.Add({section, "launch loop of B", "failed", "", st.message(), "", ""});
    };
    // Declared first, removed last: once A, in it, is gone.
    const testing::ScratchCgroup cgroup("xtrace-bench-untargeted-" + std::to_string(getpid()));
    auto traced = CallLoopProcess::Start(ctx, kTracedName);
    if (!traced.ok()) return fail(traced.status());
    auto other = CallLoopProcess::Start(ctx);
    if (!other.ok()) return fail(other.status());
    const uint64_t n = ctx.options.quick ? 4000 : 20000;
    const double pace_seconds = ctx.options.quick ? 1 : 1.5;
    // Each round already keeps the best of dozens of B's loops per call kind, so three rounds
    // (eight captures each, every one paying a capture's start) guard against a disturbed
    // round well enough; seven took 200 s of the table's budget.
    const int rounds = std::min(ctx.options.repetitions, 3);
    const std::vector<std::string> by_pid = {"--pid", std::to_string((*traced)->pid())};
    const std::vector<std::string> by_name = {"--comm", kTracedName};
    std::vector<Capture> captures = {
        {"A untraced", {}, {}},
        {"--pid A", by_pid, {}},
        {"--pid A --no-drm", by_pid, {"--no-drm"}},
        {"--comm A (default: probes per process)", by_name, {}},
        {"--comm A --no-drm", by_name, {"--no-drm"}},
        {"--pid A --follow-children (record's scope, default)", by_pid, {"--follow-children"}},
        {"--comm A --probes-per-file", by_name, {"--probes-per-file"}, true},
        // Where the kernel refuses fentry the default hook is the ioctl trace events; the raw
        // syscall tracepoints, the last resort, make every syscall run a program.
        {"--pid A --drm-hook syscall-tracepoints", by_pid, {"--drm-hook", "syscall-tracepoints"}, true},
    };
    // A alone in a cgroup of its own, for a --cgroup capture (where cgroup v2 is usable).
    if (cgroup.path().empty()) {
      ctx.table.Add({section, "B's launch, capture --cgroup (A's)", "n/a", "", cgroup.why_not(), "", ""});
    } else {
      std::ofstream(cgroup.path() + "/cgroup.procs") << (*traced)->pid() << "\n";
      captures.insert(captures.begin() + 6, {"--cgroup A's (default)", {"--cgroup", cgroup.path()}, {}});
    }

    // What B does: a probed Level Zero call, a syscall that is not an ioctl, and an ioctl
    // with a DRM command (the DRM source sees syscalls every process makes).
    static constexpr const char* kCalls[] = {"launch", "syscall", "ioctl"};
    constexpr size_t kKinds = std::size(kCalls);
    std::vector<std::array<double, kKinds>> best(captures.size());
    for (auto& b : best) b.fill(1e300);
    std::vector<uint64_t> captured(captures.size(), 0);  // A's launches, per capture
    ctx.Say(section + Format(": %d rounds", rounds));
    for (int round = 0; round < rounds; ++round) {
      for (size_t c = 0; c < captures.size(); ++c) {
        std::unique_ptr<CollectorProcess> collector;
        if (!captures[c].targets.empty()) {
          auto started = CollectorProcess::AttachTargets(ctx, captures[c].targets, (*traced)->pid(),
                                                         ctx.Scratch("untargeted.capnp"),
                                                         captures[c].extra);
          if (!started.ok()) return fail(started.status());
          collector = std::move(*started);
        }
        if (!(*traced)->StartPace(kTracedRate, pace_seconds, 1))
          return fail(Status::Error("ze_call_loop no longer takes commands"));
        // B runs while A is pacing (B's loops are far shorter than A's pace).
        auto paced_until = std::chrono::steady_clock::now() +
                           std::chrono::milliseconds(int64_t(pace_seconds * 900));
        while (std::chrono::steady_clock::now() < paced_until) {
          for (size_t k = 0; k < kKinds; ++k) {
            auto t = (*other)->NsPerCall(kCalls[k], n);
            if (!t.ok()) return fail(t.status());
            best[c][k] = std::min(best[c][k], *t);
          }
        }
        if (auto p = (*traced)->FinishPace(pace_seconds); !p.ok()) return fail(p.status());
        if (collector) {
          auto s = collector->Stop();
          if (!s.ok()) return fail(s.status());
          captured[c] += s->launches;
        }
      }
    }
    for (size_t k = 0; k < kKinds; ++k) {
      const double untraced = best[0][k];
      for (size_t c = 1; c < captures.size(); ++c) {
        const double added = best[c][k] - untraced;
        // A trap would cost B hundreds of ns per call; a few ns is timer noise.
        const bool nothing = added < 0.05 * untraced + 3;
        // A capture that recorded nothing of A proves nothing about what B pays.
        const bool void_run = captured[c] == 0;
        // Probes per library file are in B too, and so are the raw syscall tracepoints:
        // those rows show what the defaults spare B.
        const bool contrast = captures[c].contrast;
        ctx.table.Add({section, Format("B's %s, capture %s", kCalls[k], captures[c].label),
                       Format("%+.1f ns/call", added),
                       Format("%.3fx A untraced", best[c][k] / untraced),
                       Format("%.1f ns untraced, %.1f ns", untraced, best[c][k]),
                       contrast ? "(for contrast)" : "nothing measurable",
                       void_run   ? std::string("void: this capture recorded no launch of A")
                       : contrast ? Format("B pays %.0f ns/call (%.0f%%)", added, 100 * added / untraced)
                       : nothing  ? std::string("met")
                                  : Format("MISSED: B pays %.0f ns/call (%.0f%%)", added,
                                           100 * added / untraced)});
      }
    }
    uint64_t all = 0;
    for (uint64_t n_captured : captured) all += n_captured;
    ctx.table.Add({section, "launches of A captured meanwhile (all captures)",
                   Format("%llu", (unsigned long long)all), "", "", "", ""});
  }
};

}  // namespace

std::unique_ptr<BenchSection> MakeUntargetedSection() {
  return std::make_unique<UntargetedSection>();
}

}  // namespace xtrace::bench

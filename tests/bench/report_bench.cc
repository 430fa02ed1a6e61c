// Section 7: `xtrace report` speed and memory on the synthetic log with device operations
// (synthetic_log.h), at two sizes: events per second of CPU time and peak RSS, which must
// not grow with the log (the report streams; its tables grow with distinct names only).

#include <algorithm>

#include "bench_sections.h"
#include "child_process.h"
#include "synthetic_log.h"

namespace xtrace::bench {
namespace {

constexpr double kEventsPerSecondTarget = 3e6;
constexpr double kFlatRssTolerance = 1.10;

class ReportSection final : public BenchSection {
 public:
  std::string_view id() const override { return "report"; }

  void Run(BenchContext& ctx) override {
    const std::string section = "7 report";
    auto fail = [&](const std::string& what, const std::string& why) {
      ctx.table.Add({section, what, "failed", "", why, "", ""});
    };
    const uint64_t small = std::min(ctx.options.small_events, ctx.options.convert_events);
    const uint64_t large = ctx.options.convert_events;
    struct Run {
      double cpu_seconds = 0, wall_seconds = 0;
      uint64_t peak_rss = 0;
    };
    auto measure = [&](uint64_t events) -> Result<Run> {
      const std::string log = ctx.Scratch("report-" + std::to_string(events) + ".capnp");
      ctx.Say(section + Format(": writing a %llu-event log", (unsigned long long)events));
      if (Status st = WriteSyntheticLaunchLog(log, events, /*device_ops=*/true); !st.ok()) return st;
      ctx.Say(section + ": reporting");
      Run best;
      const int reps = events > 2'000'000 ? 1 : std::max(1, ctx.options.repetitions / 2);
      for (int i = 0; i < reps; ++i) {
        ChildResult r = RunChild({ctx.paths.xtrace, "report", log, "--format", "json", "-o", "/dev/null"},
                                 {}, std::chrono::minutes(30));
        if (!r.ok()) {
          std::remove(log.c_str());
          return Status::Error("xtrace report: " + r.err);
        }
        if (i == 0 || r.cpu_seconds < best.cpu_seconds) best = {r.cpu_seconds, r.seconds, r.peak_rss_bytes};
      }
      std::remove(log.c_str());
      return best;
    };
    auto s = measure(small);
    if (!s.ok()) return fail("xtrace report", s.status().message());
    Result<Run> l = *s;
    if (large != small) l = measure(large);
    if (!l.ok()) return fail("xtrace report", l.status().message());

    auto label = [](uint64_t n) { return Format("%.3gM events", double(n) / 1e6); };
    auto rate = [](uint64_t n, const Run& r) { return r.cpu_seconds > 0 ? double(n) / r.cpu_seconds : 0; };
    ctx.table.Add({section, "xtrace report, " + label(large), Format("%.2fM events/s", rate(large, *l) / 1e6),
                   Format("%.2fM events/s at %s", rate(small, *s) / 1e6, label(small).c_str()),
                   Format("%.2f s CPU (%.2f s wall)", l->cpu_seconds, l->wall_seconds), ">= 3M events/s",
                   Verdict(rate(large, *l) / 1e6, kEventsPerSecondTarget / 1e6, false, "M events/s")});
    ctx.table.Add({section, "xtrace report peak RSS, " + label(large),
                   Format("%.1f MiB", double(l->peak_rss) / 1048576.0),
                   Format("%.2fx the %s run", double(l->peak_rss) / double(s->peak_rss), label(small).c_str()),
                   Format("%llu bytes", (unsigned long long)l->peak_rss), "flat in log length",
                   large == small ? "n/a: one size only"
                                  : Verdict(double(l->peak_rss) / double(s->peak_rss), kFlatRssTolerance, true, "x")});
  }
};

}  // namespace

std::unique_ptr<BenchSection> MakeReportSection() { return std::make_unique<ReportSection>(); }

}  // namespace xtrace::bench

// Section 6: `xtrace convert` speed and memory on large synthetic logs (synthetic_log.h),
// against dom_convert_baseline (the whole trace as one nlohmann::json document) in the same
// run. Both write to /dev/null, so what is timed is the converters, not the disk. Rates are
// per second of the converter's own CPU time (user + system, from wait4, like its peak RSS):
// on a shared machine, wall time also counts the time other processes ran; it is shown raw.

#include <algorithm>

#include "bench_sections.h"
#include "child_process.h"
#include "synthetic_log.h"

namespace xtrace::bench {
namespace {

constexpr double kEventsPerSecondTarget = 2e6;          // to Chrome JSON
constexpr double kPerfettoEventsPerSecondTarget = 3e6;  // to Perfetto protobuf
// Reading a log (LogReader::NextEvent to the end), what every command that takes one pays first.
constexpr double kReadEventsPerSecondTarget = 10e6;
// The Perfetto protobuf trace may be at most this fraction of the JSON's bytes.
constexpr double kProtobufBytesTarget = 1.0 / 3.0;
// "Memory flat in trace size": peak RSS may grow this much from the small to the large log.
constexpr double kFlatRssTolerance = 1.10;
// A 1% window converts at least this many times faster than the whole log ("the five seconds
// that matter in a 10 GB log convert in seconds").
constexpr double kWindowSpeedupTarget = 10.0;

struct ConvertRun {
  uint64_t events = 0;
  double seconds = 0;  // CPU time
  double wall_seconds = 0;
  uint64_t json_bytes = 0;
  uint64_t peak_rss = 0;
  double events_per_s() const { return seconds > 0 ? double(events) / seconds : 0; }
  double mb_per_s() const { return seconds > 0 ? double(json_bytes) / 1e6 / seconds : 0; }
};

std::string Mib(uint64_t bytes) { return Format("%.1f MiB", double(bytes) / 1048576.0); }

class ConvertSection final : public BenchSection {
 public:
  std::string_view id() const override { return "convert"; }

  void Run(BenchContext& ctx) override {
    const std::string section = "6 convert";
    auto fail = [&](const std::string& what, const std::string& why) {
      ctx.table.Add({section, what, "failed", "", why, "", ""});
    };
    const uint64_t small = std::min(ctx.options.small_events, ctx.options.convert_events);
    const uint64_t large = ctx.options.convert_events;
    const uint64_t dom_events = std::min(ctx.options.baseline_events, small);

    auto log_of = [&](uint64_t events, const std::string& name = "synthetic") -> Result<std::string> {
      const std::string path = ctx.Scratch(name + "-" + std::to_string(events) + ".capnp");
      ctx.Say(section + Format(": writing a %llu-event log", (unsigned long long)events));
      if (Status st = WriteSyntheticLaunchLog(path, events); !st.ok()) return st;
      return path;
    };
    auto small_log = log_of(small);
    if (!small_log.ok()) return fail("synthetic log", small_log.status().message());

    // The JSON byte count comes from a run to a file for the small log (the converters write
    // the same events, so bytes per event carry over); timed runs write to /dev/null.
    auto convert_as = [&](const std::string& format, const std::string& log,
                          uint64_t events) -> Result<ConvertRun> {
      ChildResult r = RunChild({ctx.paths.xtrace, "convert", "-q", log, "--format", format, "-o",
                                "/dev/null"},
                               {}, std::chrono::minutes(30));
      if (!r.ok()) return Status::Error("xtrace convert: " + r.err);
      return ConvertRun{events, r.cpu_seconds, r.seconds, 0, r.peak_rss_bytes};
    };
    auto streaming = [&](const std::string& log, uint64_t events) {
      return convert_as("json", log, events);
    };
    auto protobuf = [&](const std::string& log, uint64_t events) {
      return convert_as("perfetto", log, events);
    };
    auto dom = [&](const std::string& log, uint64_t events) -> Result<ConvertRun> {
      ChildResult r = RunChild({ctx.paths.dom_baseline, log, "/dev/null"}, {}, std::chrono::minutes(30));
      if (!r.ok()) return Status::Error("dom_convert_baseline: " + r.err);
      return ConvertRun{events, r.cpu_seconds, r.seconds, 0, r.peak_rss_bytes};
    };
    // A window of 1% in the middle of the log, to Perfetto: the batches outside it are read
    // without decoding their events. The synthetic launches start at 1000 s on a clock whose
    // capture start is 0, one every ~1.05 us.
    auto window = [&](const std::string& log, uint64_t events) -> Result<ConvertRun> {
      const double span_s = double(events) * 1.05e-6;
      const double from_s = 1000 + 0.495 * span_s, to_s = from_s + 0.01 * span_s;
      ChildResult r = RunChild({ctx.paths.xtrace, "convert", "-q", log, "--format", "perfetto",
                                "--from", Format("%.6f", from_s), "--to", Format("%.6f", to_s),
                                "-o", "/dev/null"},
                               {}, std::chrono::minutes(30));
      if (!r.ok()) return Status::Error("xtrace convert --from/--to: " + r.err);
      return ConvertRun{events, r.cpu_seconds, r.seconds, 0, r.peak_rss_bytes};
    };
    ChildResult sized = RunChild({ctx.paths.xtrace, "convert", "-q", *small_log, "-o",
                                  ctx.Scratch("small.json")},
                                 {}, std::chrono::minutes(30));
    if (!sized.ok()) return fail("xtrace convert", sized.err);
    ChildResult sized_pb = RunChild({ctx.paths.xtrace, "convert", "-q", *small_log, "-o",
                                     ctx.Scratch("small.pftrace")},
                                    {}, std::chrono::minutes(30));
    if (!sized_pb.ok()) return fail("xtrace convert --format perfetto", sized_pb.err);
    const double json_bytes_per_event = double(FileSize(ctx.Scratch("small.json"))) / double(small);
    const double pb_bytes_per_event = double(FileSize(ctx.Scratch("small.pftrace"))) / double(small);
    std::remove(ctx.Scratch("small.json").c_str());
    std::remove(ctx.Scratch("small.pftrace").c_str());

    ctx.Say(section + ": converting");
    auto best_of = [&](auto convert, const std::string& log, uint64_t events) -> Result<ConvertRun> {
      ConvertRun best;
      const int reps = events > 2'000'000 ? 1 : std::max(1, ctx.options.repetitions / 2);
      for (int i = 0; i < reps; ++i) {
        auto r = convert(log, events);
        if (!r.ok()) return r;
        if (i == 0 || r->seconds < best.seconds) best = *r;
      }
      best.json_bytes = uint64_t(json_bytes_per_event * double(events));
      return best;
    };
    auto s_small = best_of(streaming, *small_log, small);
    if (!s_small.ok()) return fail("streaming convert", s_small.status().message());
    // Once, on a log of its own: at about 1/60 of the streaming speed its first run is precise
    // enough for a ratio, and 250k events are its 6 s of the table's budget. Its memory is
    // held to xtrace's on the same log.
    Result<ConvertRun> dom_run = Status::Error("not run"), s_dom = Status::Error("not run");
    if (auto dom_log = log_of(dom_events, "dom"); !dom_log.ok()) {
      dom_run = dom_log.status();
    } else {
      dom_run = dom(*dom_log, dom_events);
      if (dom_run.ok()) dom_run->json_bytes = uint64_t(json_bytes_per_event * double(dom_events));
      s_dom = streaming(*dom_log, dom_events);
      std::remove(dom_log->c_str());
    }
    if (!dom_run.ok()) return fail("DOM baseline", dom_run.status().message());
    if (!s_dom.ok()) return fail("streaming convert", s_dom.status().message());
    auto p_small = best_of(protobuf, *small_log, small);
    if (!p_small.ok()) return fail("protobuf convert", p_small.status().message());
    auto w_small = best_of(window, *small_log, small);
    auto read_small = TimeLogRead(*small_log);
    std::remove(small_log->c_str());

    Result<ConvertRun> w_large = Status::Error("not run");
    Result<LogReadRun> read_large = Status::Error("not run");
    Result<ConvertRun> s_large = *s_small, p_large = *p_small;
    if (large != small) {
      auto large_log = log_of(large);
      if (!large_log.ok()) return fail("synthetic log", large_log.status().message());
      read_large = TimeLogRead(*large_log);
      s_large = best_of(streaming, *large_log, large);
      if (s_large.ok()) p_large = best_of(protobuf, *large_log, large);
      if (p_large.ok()) w_large = best_of(window, *large_log, large);
      std::remove(large_log->c_str());
      if (!s_large.ok()) return fail("streaming convert", s_large.status().message());
      if (!p_large.ok()) return fail("protobuf convert", p_large.status().message());
    }
    p_large->json_bytes = uint64_t(pb_bytes_per_event * double(large));
    if (large == small) w_large = w_small, read_large = read_small;

    auto events_label = [](uint64_t n) { return Format("%.3gM events", double(n) / 1e6); };
    ctx.table.Add({section, "xtrace convert, " + events_label(large),
                   Format("%.2fM events/s", s_large->events_per_s() / 1e6),
                   Format("%.1fx DOM speed", s_large->events_per_s() / dom_run->events_per_s()),
                   Format("%.2f s CPU (%.2f s wall), %.0f MB/s JSON", s_large->seconds,
                          s_large->wall_seconds, s_large->mb_per_s()),
                   ">= 2M events/s",
                   Verdict(s_large->events_per_s() / 1e6, kEventsPerSecondTarget / 1e6, false,
                           "M events/s")});
    ctx.table.Add({section, "xtrace convert peak RSS, " + events_label(large), Mib(s_large->peak_rss),
                   Format("%.2fx the %s run", double(s_large->peak_rss) / double(s_small->peak_rss),
                          events_label(small).c_str()),
                   Format("%llu bytes", (unsigned long long)s_large->peak_rss), "flat in trace size",
                   large == small ? "n/a: one size only"
                                  : Verdict(double(s_large->peak_rss) / double(s_small->peak_rss),
                                            kFlatRssTolerance, true, "x")});
    ctx.table.Add({section, "xtrace convert, " + events_label(small),
                   Format("%.2fM events/s", s_small->events_per_s() / 1e6),
                   Format("%.1fx DOM speed", s_small->events_per_s() / dom_run->events_per_s()),
                   Format("%.2f s CPU (%.2f s wall), %.0f MB/s JSON, peak RSS %s", s_small->seconds,
                          s_small->wall_seconds, s_small->mb_per_s(), Mib(s_small->peak_rss).c_str()),
                   "", ""});
    ctx.table.Add({section, "xtrace convert --format perfetto, " + events_label(large),
                   Format("%.2fM events/s", p_large->events_per_s() / 1e6),
                   Format("%.2fx the JSON speed", p_large->events_per_s() / s_large->events_per_s()),
                   Format("%.2f s CPU (%.2f s wall), peak RSS %s", p_large->seconds,
                          p_large->wall_seconds, Mib(p_large->peak_rss).c_str()),
                   ">= 3M events/s",
                   Verdict(p_large->events_per_s() / 1e6, kPerfettoEventsPerSecondTarget / 1e6,
                           false, "M events/s")});
    if (read_large.ok()) {
      ctx.table.Add({section, "reading the log (LogReader), " + events_label(large),
                     Format("%.2fM events/s", read_large->events_per_s() / 1e6),
                     Format("%.1fx the Perfetto convert", read_large->events_per_s() /
                                                               p_large->events_per_s()),
                     Format("%.2f s CPU, in the benchmark's own process", read_large->cpu_seconds),
                     ">= 10M events/s",
                     Verdict(read_large->events_per_s() / 1e6, kReadEventsPerSecondTarget / 1e6,
                             false, "M events/s")});
    } else {
      fail("reading the log (LogReader)", read_large.status().message());
    }
    if (w_large.ok()) {
      ctx.table.Add({section, "xtrace convert --from/--to, 1% window of " + events_label(large),
                     Format("%.2f s CPU", w_large->seconds),
                     Format("%.1fx faster than the whole log", p_large->seconds / w_large->seconds),
                     Format("whole log to Perfetto %.2f s CPU; window %.2f s wall, peak RSS %s",
                            p_large->seconds, w_large->wall_seconds, Mib(w_large->peak_rss).c_str()),
                     ">= 10x faster than the whole",
                     Verdict(p_large->seconds / w_large->seconds, kWindowSpeedupTarget, false, "x")});
    } else {
      fail("xtrace convert --from/--to", w_large.status().message());
    }
    ctx.table.Add({section, "Perfetto protobuf size, " + events_label(small),
                   Format("%.1f bytes/event", pb_bytes_per_event),
                   Format("%.2fx the JSON's bytes", pb_bytes_per_event / json_bytes_per_event),
                   Format("JSON %.1f bytes/event", json_bytes_per_event), "<= 1/3 of the JSON",
                   Verdict(pb_bytes_per_event / json_bytes_per_event, kProtobufBytesTarget, true,
                           "x")});
    ctx.table.Add({section, "DOM baseline (nlohmann::json), " + events_label(dom_events),
                   Format("%.2fM events/s", dom_run->events_per_s() / 1e6),
                   Format("%.0fx xtrace's RSS on that log", double(dom_run->peak_rss) / double(s_dom->peak_rss)),
                   Format("%.2f s CPU (%.2f s wall), %.0f MB/s JSON, peak RSS %s", dom_run->seconds,
                          dom_run->wall_seconds, dom_run->mb_per_s(), Mib(dom_run->peak_rss).c_str()),
                   "", Format("%.0f bytes of RSS per event: extrapolated %s for %s",
                              double(dom_run->peak_rss) / double(dom_events),
                              Mib(uint64_t(double(dom_run->peak_rss) / double(dom_events) * double(large))).c_str(),
                              events_label(large).c_str())});
  }
};

}  // namespace

std::unique_ptr<BenchSection> MakeConvertSection() { return std::make_unique<ConvertSection>(); }

}  // namespace xtrace::bench

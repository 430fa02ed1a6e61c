// Section 5: log bytes per launch event. A launch-heavy capture — ze_workload (five kernels
// over two command lists per thread, signal events, varying group counts) recorded by the
// real collector — holds every other probed call too (fills, copies, barriers, resets,
// synchronizations, the device timeline, the DRM view), so its file size per launch says
// little about launches. The launches it captured are therefore written again, alone, with
// the real LogWriter, and measured at two lengths: the average over that whole file, and the
// marginal figure (the difference between the two) that leaves out what a log pays once.
// The capture itself is reported per event of any kind.

#include <vector>

#include "base/status.h"
#include "bench_sections.h"
#include "child_process.h"
#include "log/log_reader.h"
#include "log/log_writer.h"

namespace xtrace::bench {
namespace {

constexpr double kBytesPerLaunchTarget = 32;

struct Capture {
  std::vector<KernelLaunch> launches;  // kernel names are ids in `names`
  StringTable names;
  uint64_t events = 0;  // of every kind
  uint64_t bytes = 0;
};

class LogSizeSection final : public BenchSection {
 public:
  std::string_view id() const override { return "log"; }

  void Run(BenchContext& ctx) override {
    const std::string section = "5 log size";
    auto fail = [&](const Status& st) {
      ctx.table.Add({section, "ze_workload capture", "failed", "", st.message(), "", ""});
    };
    const uint64_t iterations = ctx.options.quick ? 1000 : 5000;
    auto capture = Record(ctx, iterations);
    if (!capture.ok()) return fail(capture.status());
    const size_t all = capture->launches.size();
    auto large = LaunchesAlone(ctx, *capture, all);
    auto small = large.ok() ? LaunchesAlone(ctx, *capture, all / 5) : large;
    if (!small.ok()) return fail(small.status());
    const double average = double(*large) / double(all);
    const double marginal = double(*large - *small) / double(all - all / 5);
    ctx.table.Add({section, Format("bytes per launch event (%zu captured launches, written alone)", all),
                   Format("%.1f B/launch", average), "", Format("%llu bytes", (unsigned long long)*large),
                   Format("<= %.0f B", kBytesPerLaunchTarget),
                   Verdict(average, kBytesPerLaunchTarget, true, " B")});
    ctx.table.Add({section, "bytes per additional launch event (difference of two lengths)",
                   Format("%.1f B/launch", marginal), "", "", "", ""});
    ctx.table.Add({section, "bytes per event, the capture as written (every kind)",
                   Format("%.1f B/event", double(capture->bytes) / double(capture->events)),
                   Format("%.2f events per launch", double(capture->events) / double(all)),
                   Format("%llu bytes, %llu events", (unsigned long long)capture->bytes,
                          (unsigned long long)capture->events),
                   "", ""});
  }

 private:
  static Result<Capture> Record(BenchContext& ctx, uint64_t iterations) {
    const std::string out = ctx.Scratch("logsize.capnp");
    ctx.Say(Format("5 log size: recording ze_workload, %llu iterations x 2 threads",
                   (unsigned long long)iterations));
    ChildResult r = RunChild({ctx.paths.xtrace, "record", "-q", "-o", out, "--", ctx.paths.ze_workload,
                              "--threads", "2", "--iterations", std::to_string(iterations)},
                             {ctx.paths.simze_env()}, std::chrono::minutes(10));
    if (!r.ok()) return Status::Error("xtrace record: " + r.err);
    auto reader = LogReader::Open(out);
    if (!reader.ok()) return reader.status();
    Capture c;
    Event event;
    for (;;) {
      auto more = reader->Next(&event);
      if (!more.ok()) return more.status();
      if (!*more) break;
      ++c.events;
      if (auto* l = std::get_if<KernelLaunch>(&event)) {
        KernelLaunch copy = *l;
        copy.kernel_name = c.names.Intern(reader->strings().Get(l->kernel_name));
        c.launches.push_back(copy);
      }
    }
    // ze_workload launches 5 kernels per iteration and thread.
    if (c.launches.size() != iterations * 2 * 5)
      return Status::Error(Format("captured %zu launches, expected %llu", c.launches.size(),
                                  (unsigned long long)(iterations * 2 * 5)));
    c.bytes = FileSize(out);
    return c;
  }

  // Bytes of a log holding the first `count` captured launches and nothing else.
  static Result<uint64_t> LaunchesAlone(BenchContext& ctx, const Capture& c, size_t count) {
    const std::string path = ctx.Scratch("launches.capnp");
    {
      auto writer = LogWriter::Create(path, LogHeader{});
      if (!writer.ok()) return writer.status();
      for (StringId id = 1; id < c.names.size(); ++id) (*writer)->strings().Intern(c.names.Get(id));
      for (size_t i = 0; i < count; ++i) (*writer)->Append(c.launches[i]);
      if (Status st = (*writer)->Finish(LogSummary{}); !st.ok()) return st;
    }
    return FileSize(path);
  }
};

}  // namespace

std::unique_ptr<BenchSection> MakeLogSizeSection() { return std::make_unique<LogSizeSection>(); }

}  // namespace xtrace::bench

// Section 5: log bytes per launch for a launch-heavy capture: ze_workload (five kernels over
// two command lists per thread, signal events, varying group counts) recorded by the real
// collector at two lengths. The launch figures come from Level Zero-only captures (--no-drm:
// otherwise the simulated driver's exec ioctls, about one per launch, are in the same file);
// the average is over the whole file, the marginal figure (the difference between the two
// captures) leaves out what a log pays once (header, names). A default capture, DRM view
// included, is reported per event of any kind.
#include <sys/stat.h>

#include "base/status.h"
#include "bench_sections.h"
#include "child_process.h"

namespace xtrace::bench {
namespace {

constexpr double kBytesPerLaunchTarget = 32;

struct Capture {
  uint64_t launches = 0;
  uint64_t events = 0;  // of every kind
  uint64_t bytes = 0;
};

class LogSizeSection final : public BenchSection {
 public:
  std::string_view id() const override { return "log"; }

  void Run(BenchContext& ctx) override {
    const std::string section = "5 log size";
    const uint64_t short_iterations = ctx.options.quick ? 200 : 1000;
    auto small = Record(ctx, short_iterations, true);
    auto large = small.ok() ? Record(ctx, short_iterations * 5, true) : small;
    auto full = large.ok() ? Record(ctx, short_iterations * 5, false) : large;
    if (!full.ok()) {
      ctx.table.Add({section, "ze_workload capture", "failed", "", full.status().message(), "", ""});
      return;
    }
    const double average = double(large->bytes) / double(large->launches);
    const double marginal =
        double(large->bytes - small->bytes) / double(large->launches - small->launches);
    ctx.table.Add({section, Format("bytes per launch, whole log (%llu launches, --no-drm)",
                                   (unsigned long long)large->launches),
                   Format("%.1f B/launch", average), "", Format("%llu bytes", (unsigned long long)large->bytes),
                   Format("<= %.0f B", kBytesPerLaunchTarget),
                   Verdict(average, kBytesPerLaunchTarget, true, " B")});
    ctx.table.Add({section, "bytes per additional launch (difference of two captures)",
                   Format("%.1f B/launch", marginal), "", "", "", ""});
    ctx.table.Add({section, "bytes per event, default capture (launches and DRM view)",
                   Format("%.1f B/event", double(full->bytes) / double(full->events)),
                   Format("%.2f events per launch", double(full->events) / double(full->launches)),
                   Format("%llu bytes, %llu events", (unsigned long long)full->bytes,
                          (unsigned long long)full->events),
                   "", ""});
  }

 private:
  static Result<Capture> Record(BenchContext& ctx, uint64_t iterations, bool launches_only) {
    const std::string out = ctx.Scratch("logsize.capnp");
    ctx.Say(Format("5 log size: recording ze_workload, %llu iterations x 2 threads%s",
                   (unsigned long long)iterations, launches_only ? ", --no-drm" : ""));
    std::vector<std::string> argv = {ctx.paths.xtrace, "record", "-o", out};
    if (launches_only) argv.push_back("--no-drm");
    for (const std::string& a : {std::string("--"), ctx.paths.ze_workload, std::string("--threads"),
                                 std::string("2"), std::string("--iterations"),
                                 std::to_string(iterations)})
      argv.push_back(a);
    ChildResult r = RunChild(argv, {ctx.paths.simze_env()}, std::chrono::minutes(10));
    if (!r.ok()) return Status::Error("xtrace record: " + r.err);
    Capture c;
    c.launches = iterations * 2 * 5;  // ze_workload launches 5 kernels per iteration and thread
    if (r.err.find("captured " + std::to_string(c.launches) + " kernel launches") == std::string::npos)
      return Status::Error("the capture is not complete: " + r.err);
    const size_t at = r.err.find(" events written");
    const size_t start = r.err.rfind(' ', at - 1);
    if (at == std::string::npos || start == std::string::npos)
      return Status::Error("no event count in the summary: " + r.err);
    c.events = std::stoull(r.err.substr(start + 1, at - start - 1));
    struct stat st {};
    if (stat(out.c_str(), &st) != 0) return Status::Error("no log written");
    c.bytes = static_cast<uint64_t>(st.st_size);
    return c;
  }
};

}  // namespace

std::unique_ptr<BenchSection> MakeLogSizeSection() { return std::make_unique<LogSizeSection>(); }

}  // namespace xtrace::bench

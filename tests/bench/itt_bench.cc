// Section 3: what an ITT task begin/end pair costs a program (itt_overhead, the ITT
// workload's own measurement: guarded calls through the API list, as real clients make
// them): without a collector, with libxtrace_itt.so loaded but no capture, and under
// `xtrace record`. Ratios are to the pair without a collector and to the loaded pair.
#include <cstdio>

#include "base/status.h"
#include "bench_sections.h"
#include "child_process.h"

namespace xtrace::bench {
namespace {

class IttSection final : public BenchSection {
 public:
  std::string_view id() const override { return "itt"; }

  void Run(BenchContext& ctx) override {
    const std::string section = "3 ITT";
    const std::string loaded = "INTEL_LIBITTNOTIFY64=" + ctx.paths.itt_collector;
    const std::string pairs = ctx.options.quick ? "200000" : "2000000";
    ctx.Say(section + ": task begin/end pairs");
    auto none = PairNs({ctx.paths.itt_overhead, "--pairs", pairs}, {});
    auto idle = none.ok() ? PairNs({ctx.paths.itt_overhead, "--pairs", pairs}, {loaded}) : none;
    // Under capture every call traps: fewer pairs.
    auto traced = idle.ok() ? PairNs(
                                     {ctx.paths.xtrace, "record", "-q", "--buffer-size", "64M", "-o",
                                      ctx.Scratch("itt.capnp"), "--", ctx.paths.itt_overhead,
                                      "--pairs", ctx.options.quick ? "20000" : "100000"},
                                     {loaded})
                            : idle;
    if (!traced.ok()) {
      ctx.table.Add({section, "itt_overhead", "failed", "", traced.status().message(), "", ""});
      return;
    }
    ctx.table.Add({section, "begin/end pair, no collector", Format("%.1f ns/pair", *none), "",
                   Format("%.2f ns", *none), "", ""});
    ctx.table.Add({section, "begin/end pair, collector loaded, not attached",
                   Format("%+.1f ns/pair", *idle - *none),
                   Format("%.2fx no collector", *idle / *none), Format("%.2f ns", *idle), "", ""});
    ctx.table.Add({section, "begin/end pair, attached (xtrace record)",
                   Format("%+.2f us/pair", (*traced - *idle) / 1000),
                   Format("%.0fx loaded", *traced / *idle), Format("%.0f ns", *traced), "", ""});
  }

 private:
  // Runs itt_overhead (perhaps under xtrace) and reads its "N ns per task begin/end pair".
  static Result<double> PairNs(const std::vector<std::string>& argv,
                               const std::vector<std::string>& env) {
    ChildResult r = RunChild(argv, env, std::chrono::minutes(5));
    double ns = 0;
    const size_t at = r.out.find("itt_overhead: ");
    if (!r.ok() || at == std::string::npos ||
        std::sscanf(r.out.c_str() + at, "itt_overhead: %lf ns per task", &ns) != 1)
      return Status::Error("itt_overhead: " + r.out + r.err);
    return ns;
  }
};

}  // namespace

std::unique_ptr<BenchSection> MakeIttSection() { return std::make_unique<IttSection>(); }

}  // namespace xtrace::bench

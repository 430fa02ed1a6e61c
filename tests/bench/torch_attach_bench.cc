// Section 8: what `attach --pid` costs a running training job. Debian's python3-torch runs
// tests/workloads/torch_train_loop.py (training steps of a small convolutional model, oneDNN's
// primitives reaching xtrace's collector as ITT tasks) and reports its own iteration count
// every second. One process is measured four times: untraced, attached (from a little after
// xtrace says its ITT calls are captured), attached with --python-frames, and untraced again
// after the captures ended; the figures are the attached rates over the mean of the two
// untraced ones, so load that drifts on a shared machine is bracketed rather than measured.
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <optional>
#include <string>

#include "base/status.h"
#include "bench_sections.h"
#include "child_process.h"

namespace xtrace::bench {
namespace {

constexpr const char* kPython = "/usr/bin/python3";  // Debian's, which python3-torch is for
// Importing torch reads ~1 GB of libraries: tens of seconds on a loaded machine.
constexpr auto kTorchStart = std::chrono::seconds(180);

// One of the loop's reports: "torch_loop: iterations N seconds S rate R it/s".
struct Report {
  double iterations = 0, seconds = 0;
};

std::optional<Report> NextReport(ChildProcess& loop) {
  auto line = loop.WaitStdout("torch_loop: iterations", std::chrono::seconds(60));
  Report r;
  if (!line || std::sscanf(line->c_str(), "torch_loop: iterations %lf seconds %lf", &r.iterations,
                           &r.seconds) != 2)
    return std::nullopt;
  return r;
}

// Iterations per second over the next `reports` report periods, after skipping `skip`.
Result<double> Rate(ChildProcess& loop, int skip, int reports) {
  std::optional<Report> first;
  for (int i = 0; i <= skip; ++i) first = NextReport(loop);
  std::optional<Report> last = first;
  for (int i = 0; i < reports && last; ++i) last = NextReport(loop);
  if (!first || !last || last->seconds <= first->seconds)
    return Status::Error("torch_train_loop.py stopped reporting: " +
                         loop.stderr_text().substr(0, 400));
  return (last->iterations - first->iterations) / (last->seconds - first->seconds);
}

class TorchAttachSection final : public BenchSection {
 public:
  std::string_view id() const override { return "torch"; }

  void Run(BenchContext& ctx) override {
    const std::string section = "8 PyTorch attach";
    ctx.Say(section + ": a running training loop (python3-torch), untraced and attached");
    const int periods = ctx.options.quick ? 3 : 10;
    ChildProcess loop({kPython, ctx.paths.torch_loop, "--report-every", "1"},
                      {"INTEL_LIBITTNOTIFY64=" + ctx.paths.itt_collector});
    const auto ready = loop.WaitStdout("ready", kTorchStart);
    if (!ready) {
      ctx.table.Add({section, "training loop, attach --pid", "n/a", "",
                     loop.stderr_text().substr(0, 400), "",
                     "n/a: python3-torch not installed or failed"});
      return;
    }
    const std::string pid = ready->substr(ready->find(' ') + 1);
    auto before = Rate(loop, 1, periods);
    // Attached twice in turn: without Python frames (the fast path, where the collector
    // allows it) and with them (every ITT call on the probe site, its frames read).
    struct Attached {
      Result<double> rate = Status::Error("not measured");
      bool fast = false;
    };
    Attached attached[2];
    for (int frames = 0; frames < 2 && before.ok(); ++frames) {
      // --no-drm: the syscall tracepoints would tax every syscall of the machine, which is
      // not what this row is about (section 2 measures them).
      ChildProcess xtrace(std::vector<std::string>{
          ctx.paths.xtrace, "attach", "--pid", pid, "--no-drm",
          frames ? "--python-frames" : "--no-python-frames", "-o",
          ctx.Scratch("torch-attach.capnp")});
      const bool on = xtrace.WaitStderr("pid " + pid + ": ITT calls go through",
                                        std::chrono::seconds(60))
                          .has_value();
      attached[frames].rate = on ? Rate(loop, 1, periods)
                                 : Result<double>(Status::Error("xtrace attach: " +
                                                                xtrace.stderr_text()));
      attached[frames].fast =
          on && xtrace.stderr_text().find("in-process fast path") != std::string::npos;
      xtrace.Signal(SIGINT);
      xtrace.Wait(std::chrono::seconds(60));
      if (!attached[frames].rate.ok()) break;
    }
    auto after = attached[1].rate.ok() ? Rate(loop, 1, periods) : attached[1].rate;
    loop.Signal(SIGTERM);
    loop.Wait(std::chrono::seconds(30));
    const Result<double>& failed = !before.ok()              ? before
                                   : !attached[0].rate.ok() ? attached[0].rate
                                   : !attached[1].rate.ok() ? attached[1].rate
                                                            : after;
    if (!failed.ok()) {
      ctx.table.Add({section, "training loop, attach --pid", "failed", "",
                     failed.status().message(), "", ""});
      return;
    }
    const double untraced = (*before + *after) / 2;
    for (int frames = 0; frames < 2; ++frames) {
      const Attached& a = attached[frames];
      ctx.table.Add(
          {section,
           std::string("training loop, attach --pid") + (frames ? " --python-frames" : "") +
               " (" + (a.fast ? "fast path" : "probe site") + ")",
           Format("%.1f it/s", a.rate.value()), Format("%.3fx untraced", a.rate.value() / untraced),
           Format("untraced %.1f before, %.1f after; %d s each", *before, *after, periods), "",
           ""});
    }
  }
};

}  // namespace

std::unique_ptr<BenchSection> MakeTorchAttachSection() {
  return std::make_unique<TorchAttachSection>();
}

}  // namespace xtrace::bench

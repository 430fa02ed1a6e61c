// Section 8: what `attach --pid` costs a running training job. Debian's python3-torch runs
// tests/workloads/torch_train_loop.py (training steps of a small convolutional model, oneDNN's
// primitives reaching xtrace's collector as ITT tasks) and reports its own iteration count
// every second. One process is measured in rounds: untraced, attached (the default: ITT on
// the in-process fast path), untraced, attached with --python-frames (every ITT call on the
// probe site, its frames read), and untraced once more at the end. Each attached
// rate is taken over the mean of the untraced rates just before and just after it, and a row
// gives the median of its rounds' ratios: a loop that speeds up as it warms (it does, by a
// third over its first minute here) or a neighbour that comes and goes then moves both sides
// of a ratio alike, so a ratio above 1 cannot come from drift.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

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
    const int periods = ctx.options.quick ? 2 : 4;
    const int rounds = ctx.options.quick ? 1 : std::clamp(ctx.options.repetitions, 1, 3);
    ctx.Say(section + Format(": a running training loop (python3-torch), untraced and attached "
                             "in turn (%d rounds)", rounds));
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
    auto attached_rate = [&](bool frames, bool* fast) -> Result<double> {
      // --no-drm: the syscall tracepoints would tax every syscall of the machine, which is
      // not what this row is about (section 2 measures them).
      std::vector<std::string> argv = {ctx.paths.xtrace, "attach", "--pid", pid, "--no-drm",
                                       "-o", ctx.Scratch("torch-attach.capnp")};
      if (frames) argv.push_back("--python-frames");
      ChildProcess xtrace(argv);
      const bool on = xtrace.WaitStderr("pid " + pid + ": ITT calls go through",
                                        std::chrono::seconds(60))
                          .has_value();
      Result<double> rate = on ? Rate(loop, 1, periods)
                               : Result<double>(Status::Error("xtrace attach: " +
                                                              xtrace.stderr_text()));
      *fast = on && xtrace.stderr_text().find("in-process fast path") != std::string::npos;
      xtrace.Signal(SIGINT);
      xtrace.Wait(std::chrono::seconds(60));
      return rate;
    };
    // untraced[k] is measured before attached run k; the last one after every run.
    std::vector<double> untraced, attached[2];
    bool fast[2] = {false, false};
    Status failed = Status::Ok();
    auto measure_untraced = [&] {
      auto r = Rate(loop, 1, periods);
      if (r.ok()) untraced.push_back(*r);
      return r.status();
    };
    // The loop's first seconds are its slowest (allocator and oneDNN caches warming): one
    // untraced period is spent before anything is measured.
    if (Status st = Rate(loop, 1, 1).status(); !st.ok()) failed = st;
    for (int round = 0; round < rounds && failed.ok(); ++round) {
      for (int frames = 0; frames < 2 && failed.ok(); ++frames) {
        if (failed = measure_untraced(); !failed.ok()) break;
        auto r = attached_rate(frames == 1, &fast[frames]);
        if (r.ok()) attached[frames].push_back(*r);
        failed = r.status();
      }
    }
    if (failed.ok()) failed = measure_untraced();
    loop.Signal(SIGTERM);
    loop.Wait(std::chrono::seconds(30));
    if (!failed.ok()) {
      ctx.table.Add({section, "training loop, attach --pid", "failed", "", failed.message(), "",
                     ""});
      return;
    }
    for (int frames = 0; frames < 2; ++frames) {
      std::vector<double> ratios;
      std::string raw;
      for (size_t r = 0; r < attached[frames].size(); ++r) {
        const size_t k = 2 * r + frames;  // the untraced period just before this run
        const double around = (untraced[k] + untraced[k + 1]) / 2;
        ratios.push_back(attached[frames][r] / around);
        raw += Format("%s%.0f it/s against %.0f", raw.empty() ? "" : "; ", attached[frames][r],
                      around);
      }
      std::vector<double> sorted = ratios;
      std::sort(sorted.begin(), sorted.end());
      const double median = sorted[sorted.size() / 2];
      ctx.table.Add({section,
                     std::string("training loop, attach --pid") +
                         (frames ? " --python-frames" : "") + " (" +
                         (fast[frames] ? "fast path" : "probe site") + ")",
                     Format("%.3fx untraced", median),
                     Format("median of %zu", ratios.size()),
                     raw + Format(" (untraced around each; %d s each)", periods), "", ""});
    }
  }
};

}  // namespace

std::unique_ptr<BenchSection> MakeTorchAttachSection() {
  return std::make_unique<TorchAttachSection>();
}

}  // namespace xtrace::bench

// The collector at a program's full ITT rate (itt_rates_bench.h). The collector's CPU is its
// process's (user + system, as wait4 reports `xtrace record`, which includes the command it
// ran) minus the command's own, which the workloads print.
#include "itt_rates_bench.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "base/status.h"
#include "bench_sections.h"
#include "child_process.h"

namespace xtrace::bench {
namespace {

constexpr double kOneCoreRate = 2e6;           // pairs/s the fast path must hold
constexpr double kCollectorNsTarget = 250;     // CPU per event
constexpr double kTinyLoopRatioTarget = 0.85;  // attached over untraced

// What `xtrace record`'s closing summary says was dropped (nullopt: no summary).
std::optional<uint64_t> Dropped(const std::string& err) {
  const size_t summary = err.rfind("events written to");
  if (summary == std::string::npos) return std::nullopt;
  if (err.find("No events dropped", summary) != std::string::npos) return 0;
  const size_t at = err.find(" events dropped", summary);
  if (at == std::string::npos) return std::nullopt;
  const size_t start = err.rfind(' ', at - 1);
  return std::strtoull(err.c_str() + start + 1, nullptr, 10);
}

// "<prefix> <rate> <what> (... <count> ..., cpu <s> s)" as the workloads print it.
struct WorkloadRun {
  double rate = 0;
  double cpu_seconds = 0;
  uint64_t count = 0;
};
Result<WorkloadRun> ParseRun(const ChildResult& r, const char* format) {
  WorkloadRun w;
  unsigned long long count = 0;
  const size_t at = r.out.find(std::string(format).substr(0, std::string(format).find(' ')));
  if (!r.ok() || at == std::string::npos ||
      std::sscanf(r.out.c_str() + at, format, &w.rate, &count, &w.cpu_seconds) != 3)
    return Status::Error("workload: " + r.out.substr(0, 300) + r.err.substr(0, 600));
  w.count = count;
  return w;
}

// "ITT: <n> tasks" from `xtrace record`'s closing summary: the tasks the log has.
uint64_t TasksWritten(const std::string& err) {
  const size_t at = err.rfind("ITT: ");
  return at == std::string::npos ? 0 : std::strtoull(err.c_str() + at + 5, nullptr, 10);
}

// By its path: children are started with execve, which looks nothing up in PATH.
constexpr const char* kTaskset = "/usr/bin/taskset";  // util-linux, essential in Debian

// The CPU of a capture that traces nothing but starts and stops as the measured one does
// (loading and verifying its BPF programs is most of it, about a second here): taken off the
// measured capture's CPU, what is left is what the calls cost.
std::optional<double> IdleCaptureCpu(BenchContext& ctx, const std::string& loaded) {
  ChildResult idle = RunChild({kTaskset, "-c", "1", ctx.paths.xtrace, "record", "--no-drm", "-o",
                               ctx.Scratch("idle.capnp"), "--", "/usr/bin/true"},
                              {loaded}, std::chrono::minutes(2));
  if (!idle.ok()) return std::nullopt;
  return idle.cpu_seconds;
}

std::string DropVerdict(uint64_t dropped) {
  return dropped ? Format("MISSED: %llu dropped", (unsigned long long)dropped) : "met";
}

// How long each run at 2M pairs/s lasts.
std::string OneCoreSeconds(const BenchContext& ctx) { return ctx.options.quick ? "1" : "3"; }

// `xtrace record` (with `extra` options) of itt_overhead at 2M pairs/s: the collector on CPU 1,
// the program on CPU 0, each with a core, the collector no more.
ChildResult RecordAtOneCoreRate(BenchContext& ctx, const std::string& loaded,
                                const std::string& log_name, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {kTaskset, "-c", "1", ctx.paths.xtrace, "record", "--no-drm",
                                   "-o", ctx.Scratch(log_name)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"--", kTaskset, "-c", "0", ctx.paths.itt_overhead, "--rate",
                           Format("%.0f", kOneCoreRate), "--seconds", OneCoreSeconds(ctx)});
  return RunChild(argv, {loaded}, std::chrono::minutes(2));
}

}  // namespace

void IttOneCoreRow(BenchContext& ctx, const std::string& section, const std::string& loaded) {
  ctx.Say(section + ": 2M pairs/s on the fast path, the collector on one core");
  // A few rounds, each with an idle capture beside it: one run's CPU figure moved by 20-40%
  // with what else the machine did, and a drop can come from one stall of the VM.
  const int rounds = std::clamp(ctx.options.repetitions, 1, 3);
  struct Round {
    double rate = 0, cpu = 0, wall = 0, task_ns = 0;
    uint64_t pairs = 0, dropped = 0;
    bool fast = false;
  };
  std::vector<Round> done;
  std::string failure;
  for (int round = 0; round < rounds && failure.empty(); ++round) {
    const std::optional<double> idle = IdleCaptureCpu(ctx, loaded);
    ChildResult r = RecordAtOneCoreRate(ctx, loaded, "itt-onecore.capnp");
    auto run = ParseRun(r, "itt_overhead: %lf pairs per second (collector loaded, %llu pairs, cpu %lf s)");
    const std::optional<uint64_t> dropped = Dropped(r.err);
    const uint64_t tasks = TasksWritten(r.err);
    if (!run.ok() || !dropped) failure = run.ok() ? r.err.substr(0, 400) : run.status().message();
    else if (!idle) failure = "the idle capture failed";
    else if (!tasks) failure = "no ITT tasks in the summary";
    if (!failure.empty()) break;
    Round d;
    d.rate = run->rate;
    d.cpu = r.cpu_seconds - run->cpu_seconds;
    d.wall = r.seconds;
    d.pairs = run->count;
    d.dropped = *dropped;
    d.fast = r.err.find("in-process fast path") != std::string::npos;
    d.task_ns = 1e9 * (d.cpu - *idle) / double(tasks);
    done.push_back(d);
  }
  if (!failure.empty()) {
    ctx.table.Add({section, "2M pairs/s, collector on one core", "failed", "", failure, "", ""});
    return;
  }
  const auto median = [&](double Round::*field) {
    std::vector<double> v;
    for (const Round& d : done) v.push_back(d.*field);
    std::sort(v.begin(), v.end());
    return std::pair{v[v.size() / 2], Format("%.0f-%.0f", v.front(), v.back())};
  };
  uint64_t dropped = 0, pairs = 0;
  int dropping = 0;
  bool fast = true;
  for (const Round& d : done) {
    dropped += d.dropped;
    pairs += d.pairs;
    dropping += d.dropped ? 1 : 0;
    fast = fast && d.fast;
  }
  const auto [rate, rates] = median(&Round::rate);
  ctx.table.Add({section, "2M pairs/s from one thread, collector on one core (fast path)",
                 Format("%.0fk pairs/s, %llu dropped", rate / 1e3, (unsigned long long)dropped),
                 Format("%.2fx 2M/s", rate / kOneCoreRate),
                 Format("%llu pairs in %zu rounds, %d with drops%s", (unsigned long long)pairs,
                        done.size(), dropping, fast ? "" : " (probe site!)"),
                 "0 drops at 2M pairs/s",
                 !fast ? "MISSED: not on the fast path"
                 : rate < 0.95 * kOneCoreRate ? "generator-bound: 2M/s not reached"
                                              : DropVerdict(dropped)});
  double cpu = 0, wall = 0;
  for (const Round& d : done) cpu += d.cpu, wall += d.wall;
  ctx.table.Add({section, "collector CPU per ITT pair offered, its start included",
                 Format("%.0f ns/pair", 1e9 * cpu / double(pairs)), Format("%.2f cores", cpu / wall),
                 Format("%.2f s CPU over %.1f s", cpu, wall), "", ""});
  const auto [task_ns, task_range] = median(&Round::task_ns);
  ctx.table.Add({section, "collector CPU per ITT task written (fast path, 2M pairs/s)",
                 Format("%.0f ns/task", task_ns), Format("%.2fx target", task_ns / kCollectorNsTarget),
                 Format("median of %zu rounds (%s ns); an idle capture's CPU (its start) taken off each",
                        done.size(), task_range.c_str()),
                 "<= 250 ns/event", Verdict(task_ns, kCollectorNsTarget, true, " ns")});
}

void IttSharedCoreRow(BenchContext& ctx, const std::string& section, const std::string& loaded) {
  ctx.Say(section + ": 2M pairs/s on the fast path, the collector's core shared with a CPU hog");
  // The capture's threads at their default (nice -10, when xtrace runs at nice 0) and at the
  // hog's own value: what a busy core costs the capture either way. One run of each (about
  // 5 s with its start): the table's time budget is 8 minutes, and the contrast is large (at
  // the hog's priority a capture dropped millions of records).
  struct Config {
    const char* label;
    std::vector<std::string> extra;
    uint64_t dropped = 0, written = 0;
  };
  Config configs[] = {{"default (nice -10)", {}}, {"--nice 0", {"--nice", "0"}}};
  for (Config& c : configs) {
    // A nice-0 thread that never sleeps, on the collector's core for the whole capture.
    ChildProcess hog({kTaskset, "-c", "1", "/bin/sh", "-c", "while :; do :; done"});
    ChildResult r = RecordAtOneCoreRate(ctx, loaded, "itt-shared.capnp", c.extra);
    const std::optional<uint64_t> dropped = Dropped(r.err);
    if (!r.ok() || !dropped) {
      ctx.table.Add({section, "2M pairs/s, collector's core shared", "failed", "",
                     r.err.substr(0, 400), "", ""});
      return;
    }
    c.dropped = *dropped;
    c.written = TasksWritten(r.err);
  }
  for (const Config& c : configs) {
    const bool is_default = c.extra.empty();
    ctx.table.Add({section,
                   Format("2M pairs/s, collector's core shared with a nice-0 hog, %s", c.label),
                   Format("%llu dropped", (unsigned long long)c.dropped),
                   Format("%llu tasks written", (unsigned long long)c.written),
                   Format("one run of %s s", OneCoreSeconds(ctx).c_str()),
                   is_default ? "0 drops" : "(for contrast)",
                   is_default ? DropVerdict(c.dropped) : ""});
  }
}

void DnnlTinyLoopRow(BenchContext& ctx, const std::string& section, const std::string& loaded) {
  ctx.Say(section + ": oneDNN tiny-primitive loop on two threads, untraced and attached");
  const std::string seconds = ctx.options.quick ? "1" : "3";
  const std::vector<std::string> workload = {ctx.paths.dnnl_workload, "--tiny-loop", seconds,
                                             "--threads", "2"};
  const char* format = "dnnl_workload: %lf tasks per second (2 threads, %llu tasks, cpu %lf s)";
  const int rounds = std::clamp(ctx.options.repetitions, 1, 3);
  std::vector<double> ratios;
  uint64_t dropped_total = 0;
  double untraced_sum = 0, attached_sum = 0, collector_ns_sum = 0;
  for (int round = 0; round < rounds; ++round) {
    auto untraced = ParseRun(RunChild(workload, {loaded}, std::chrono::minutes(2)), format);
    std::vector<std::string> argv = {ctx.paths.xtrace, "record", "--no-drm", "-o",
                                     ctx.Scratch("dnnl-tiny.capnp"), "--"};
    argv.insert(argv.end(), workload.begin(), workload.end());
    ChildResult r = RunChild(argv, {loaded}, std::chrono::minutes(2));
    auto attached = ParseRun(r, format);
    const std::optional<uint64_t> dropped = Dropped(r.err);
    if (!untraced.ok() || !attached.ok() || !dropped) {
      const Status why = !untraced.ok() ? untraced.status()
                         : !attached.ok() ? attached.status()
                                          : Status::Error(r.err.substr(0, 400));
      ctx.table.Add({section, "oneDNN tiny-primitive loop, 2 threads", "failed", "", why.message(), "", ""});
      return;
    }
    ratios.push_back(attached->rate / untraced->rate);
    dropped_total += *dropped;
    untraced_sum += untraced->rate;
    attached_sum += attached->rate;
    collector_ns_sum += 1e9 * (r.cpu_seconds - attached->cpu_seconds) / double(attached->count);
  }
  std::sort(ratios.begin(), ratios.end());
  const double ratio = ratios[ratios.size() / 2];
  std::string verdict = dropped_total ? DropVerdict(dropped_total)
                                      : Verdict(ratio, kTinyLoopRatioTarget, false, "x");
  ctx.table.Add({section, Format("oneDNN tiny-primitive loop, 2 threads, attached (%d rounds)", rounds),
                 Format("%.2fM tasks/s, %llu dropped", attached_sum / rounds / 1e6,
                        (unsigned long long)dropped_total),
                 Format("%.2fx untraced (median; %.2f-%.2fx)", ratio, ratios.front(), ratios.back()),
                 Format("untraced %.2fM tasks/s; collector CPU %.0f ns/task, its start included", untraced_sum / rounds / 1e6,
                        collector_ns_sum / rounds),
                 ">= 0.85x, 0 dropped", verdict});
}

}  // namespace xtrace::bench

// Section 8: the daemon over many capture start/stop cycles (--daemon-cycles): each
// cycle attaches every probe to a running workload and takes them off again. What the daemon
// holds idle before and after (descriptors, BPF descriptors, RSS) must not grow; the machine's
// BPF links and maps before and after are shown too, without a verdict: other captures
// running meanwhile move them.
#include <signal.h>

#include <filesystem>

#include "bench_sections.h"
#include "daemon_cycles.h"
#include "subprocess.h"

namespace xtrace::bench {
namespace {

using namespace std::chrono_literals;

// Allocator caches move by a few pages; a leak of even a page per cycle would exceed it.
constexpr uint64_t kRssGrowthLimitBytes = 4u << 20;

class DaemonSection final : public BenchSection {
 public:
  std::string_view id() const override { return "daemon"; }

  void Run(BenchContext& ctx) override {
    const std::string section = "8 daemon";
    auto fail = [&](const std::string& why) {
      ctx.table.Add({section, "start/stop cycles", "failed", "", why, "", ""});
    };
    const std::string dir = ctx.Scratch("daemon");
    std::filesystem::create_directories(dir);
    const std::string socket = dir + "/xtrace.sock";
    testing::Subprocess daemon({ctx.paths.xtrace, "daemon", "-q", "--socket", socket,
                                "--output-dir", dir + "/captures", "--max-files", "2"},
                               {ctx.paths.simze_env()});
    if (!daemon.WaitStderr("listening on", 30s)) return fail("daemon: " + daemon.stderr_text());
    testing::Subprocess workload({ctx.paths.ze_workload, "--duration", "3600", "--sleep-us", "20000"},
                                 {ctx.paths.simze_env()});
    const uint32_t pid = testing::PidFromReadyLine(workload.WaitStdout("ready", 30s));
    if (pid == 0) return fail("workload: " + workload.stderr_text());

    const int cycles = ctx.options.daemon_cycles;
    ctx.Say(section + Format(": %d start/stop cycles of a capture of pid %u", cycles, pid));
    const testing::CycleFigures f = testing::RunStartStopCycles(
        ctx.paths.xtrace, socket, static_cast<uint32_t>(daemon.pid()),
        {"--pid", std::to_string(pid)}, cycles, /*progress_every=*/100);
    workload.Signal(SIGTERM);
    workload.Wait(30s);
    daemon.Signal(SIGTERM);
    daemon.Wait(60s);
    std::filesystem::remove_all(dir);
    if (!f.error.empty()) return fail(Format("after %d cycles: ", f.cycles) + f.error);

    const std::string label = Format("%d cycles", f.cycles);
    ctx.table.Add({section, "start + stop, " + label, Format("%.0f ms per cycle", 1000 * f.seconds / f.cycles),
                   "", Format("%.1f s", f.seconds), "", ""});
    ctx.table.Add({section, "daemon descriptors idle, before -> after",
                   Format("%zu -> %zu", f.before.fds, f.after.fds), "",
                   Format("BPF descriptors %zu -> %zu", f.before.bpf_fds, f.after.bpf_fds), "no growth",
                   Verdict(double(f.after.fds + f.after.bpf_fds), double(f.before.fds + f.before.bpf_fds),
                           true, " fds")});
    ctx.table.Add({section, "daemon RSS idle, before -> after",
                   Format("%.1f -> %.1f MiB", f.before.rss_bytes / 1048576.0, f.after.rss_bytes / 1048576.0),
                   "", Format("%llu -> %llu bytes", (unsigned long long)f.before.rss_bytes,
                              (unsigned long long)f.after.rss_bytes),
                   "< 4 MiB growth",
                   Verdict(double(f.after.rss_bytes) / 1048576.0,
                           double(f.before.rss_bytes + kRssGrowthLimitBytes) / 1048576.0, true, " MiB")});
    ctx.table.Add({section, "machine's BPF links / maps, before -> after",
                   Format("%zu -> %zu / %zu -> %zu", f.system_before.links, f.system_after.links,
                          f.system_before.maps, f.system_after.maps),
                   "", Format("programs %zu -> %zu", f.system_before.progs, f.system_after.progs),
                   "", "n/a: machine-wide, other captures move it"});
  }
};

}  // namespace

std::unique_ptr<BenchSection> MakeDaemonSection() { return std::make_unique<DaemonSection>(); }

}  // namespace xtrace::bench

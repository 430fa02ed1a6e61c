// Integration tests of ITT capture: real BPF on xtrace's collector loaded by our own labelled
// program: labels round-tripped, attach and the fast path, a killed capture, a corrupt or full
// ring, pause/resume/detach across sources. Captures are compared with what the workload says
// it did. Real clients (oneDNN, TBB, PyTorch ranges) are in itt_clients_integration_test.cc;
// what both share in itt_test_support.h. Needs root; skips with the reason elsewhere, fails
// under CI.

#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <libelf.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "itt_test_support.h"
#include "log/log_reader.h"
#include "xtrace/itt_ring.h"
#include "xtrace/records.h"
#include "subprocess.h"
#include "trace_formats.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using namespace itt_test;
using testing::PidFromReadyLine;
using testing::RunCommand;
using testing::Subprocess;

// Where an exported symbol of the collector file sits (its value).
uint64_t CollectorSymbolValue(const char* symbol) {
  elf_version(EV_CURRENT);
  const int fd = open(kCollector.c_str(), O_RDONLY | O_CLOEXEC);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  uint64_t value = 0;
  for (Elf_Scn* scn = nullptr; elf && (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; ++i) {
      GElf_Sym sym;
      gelf_getsym(data, static_cast<int>(i), &sym);
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (name && std::strcmp(name, symbol) == 0) value = sym.st_value;
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return value;
}

// The collector's load base in the running process `pid` (0 if it is not mapped).
uint64_t CollectorBase(uint32_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("libxtrace_itt.so") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string range, perms, offset;
    fields >> range >> perms >> offset;
    if (std::stoull(offset, nullptr, 16) == 0) return std::stoull(range.substr(0, range.find('-')), nullptr, 16);
  }
  return 0;
}

// Reads (or writes) `size` bytes at `address` of the running process `pid` through
// /proc/PID/mem, as root may.
bool PeekPoke(uint32_t pid, uint64_t address, void* data, size_t size, bool write) {
  const int fd = open(("/proc/" + std::to_string(pid) + "/mem").c_str(), (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = write ? pwrite(fd, data, size, static_cast<off_t>(address))
                          : pread(fd, data, size, static_cast<off_t>(address));
  close(fd);
  return n == static_cast<ssize_t>(size);
}

// The first byte of the probe site as the running process `pid` has it now.
int LiveSiteByte(uint32_t pid) {
  const uint64_t base = CollectorBase(pid);
  unsigned char byte = 0;
  if (!base || !PeekPoke(pid, base + CollectorSymbolValue(XT_ITT_PROBE_SYMBOL), &byte, 1, false)) return -1;
  return byte;
}

// The collector's fast-path control block as the running process `pid` has it now.
std::optional<xt_itt_control> LiveControl(uint32_t pid, uint64_t* address = nullptr) {
  const uint64_t base = CollectorBase(pid);
  xt_itt_control c{};
  const uint64_t at = base + CollectorSymbolValue(XT_ITT_CONTROL_SYMBOL);
  if (address) *address = at;
  if (!base || !PeekPoke(pid, at, &c, sizeof(c), false)) return std::nullopt;
  return c;
}

bool MapsContain(uint32_t pid, const std::string& needle) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  const std::string text(std::istreambuf_iterator<char>(maps), {});
  return text.find(needle) != std::string::npos;
}

// Ends an attach with SIGINT and then its workload with SIGTERM; both must exit with 0.
void StopCaptureThenWorkload(Subprocess& xtrace, Subprocess& workload) {
  xtrace.Signal(SIGINT);
  auto status = xtrace.Wait(30s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
  workload.Signal(SIGTERM);
  status = workload.Wait(30s);
  EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << workload.stderr_text();
}
}  // namespace

TEST_F(IttIntegrationTest, OwnLabelsFromSeveralThreadsRoundTripExactlyAroundTheirLaunches) {
  const std::string log = Path("labels.tsv"), out = Path("own.capnp"), json = Path("own.json");
  auto r = RunCommand({kXtrace, "record", "-o", out, "--", ITT_WORKLOAD_BIN, "--ze", "--threads",
                       "3", "--iterations", "4", "--log", log},
                      {kSimDriver, kWithCollector}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  // 3 threads x 4 iterations x (step, inner, region, 2 overlapped, frame) and one marker each.
  EXPECT_NE(r.err.find("ITT: 72 tasks and 12 markers."), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Unbalanced"), std::string::npos) << r.err;

  const IttCapture c = ReadIttCapture(out);
  ASSERT_TRUE(c.complete);
  const auto expected = LogLines(log);
  ASSERT_EQ(expected.size(), 3u * 4u * 8u);
  EXPECT_EQ(AsLabelLines(c), expected);

  std::set<std::string> worker_names;
  for (const Span& s : c.tasks) {
    EXPECT_FALSE(s.task.unfinished || s.task.begin_missing || s.task.closed_by_outer) << s.name;
    EXPECT_LE(s.task.start_ns, s.task.end_ns);
    worker_names.insert(c.thread_names.at(s.task.tid));
  }
  // Names set with __itt_thread_set_name, longer than a kernel comm can hold.
  EXPECT_EQ(worker_names,
            (std::set<std::string>{"xt-itt-labeller-0", "xt-itt-labeller-1", "xt-itt-labeller-2"}));

  // Each launch inside an "xt.inner" task of its thread, each of those inside an "xt.step".
  auto enclosed_by = [&](const std::string& name, uint32_t tid, uint64_t start, uint64_t end) {
    return std::any_of(c.tasks.begin(), c.tasks.end(), [&](const Span& s) {
      return s.name == name && s.task.tid == tid && Encloses(s.task, start, end);
    });
  };
  ASSERT_EQ(c.launches.size(), 12u);
  for (const KernelLaunch& l : c.launches)
    EXPECT_TRUE(enclosed_by("xt.inner", l.tid, l.start_ns, l.end_ns)) << l.start_ns;
  for (const Span& s : c.tasks) {
    if (s.name == "xt.inner") {
      EXPECT_TRUE(enclosed_by("xt.step", s.task.tid, s.task.start_ns, s.task.end_ns));
    }
  }

  // The same in Chrome JSON: complete events on the thread's track, nesting by time.
  auto conv = RunCommand({kXtrace, "convert", out, "-o", json});
  ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  testing::ExpectEveryFormatDrawable(kXtrace, out, json);
  std::ifstream in(json);
  const auto trace = nlohmann::json::parse(in);
  std::vector<nlohmann::json> inner, launches, marks;
  for (const auto& e : trace["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (name == "xt.inner") inner.push_back(e);
    // The host-side launches (the GPU process shows each kernel again, as it ran).
    if (name == "xt_scale_f32" && e.value("cat", "") == "xpu_runtime") launches.push_back(e);
    if (name == "xt.mark") marks.push_back(e);
  }
  ASSERT_EQ(inner.size(), 12u);
  ASSERT_EQ(launches.size(), 12u);
  ASSERT_EQ(marks.size(), 12u);
  for (const auto& e : inner) {
    EXPECT_EQ(e["ph"], "X");
    EXPECT_EQ(e["cat"], "user_annotation");
    EXPECT_EQ(e["args"]["domain"], "xt.app");
  }
  for (const auto& m : marks) {
    EXPECT_EQ(m["ph"], "i");
    EXPECT_EQ(m["s"], "t");
  }
  for (const auto& l : launches) {
    const bool nested = std::any_of(inner.begin(), inner.end(), [&](const nlohmann::json& t) {
      return t["tid"] == l["tid"] && t["ts"].get<double>() <= l["ts"].get<double>() &&
             l["ts"].get<double>() + l["dur"].get<double>() <=
                 t["ts"].get<double>() + t["dur"].get<double>();
    });
    EXPECT_TRUE(nested) << l.dump();
  }

  // An independent consumer of the format, the Chrome DevTools trace engine, must see every
  // labelled thread, named, with its tasks, launches and kernel creation on it.
  if (!std::filesystem::exists(CHROME_TRACE_ENGINE)) {
    if (getenv("CI")) FAIL() << CHROME_TRACE_ENGINE << " missing: scripts/install-deps.sh installs it";
    GTEST_SKIP() << "Chrome trace engine not installed (scripts/install-deps.sh installs it)";
  }
  auto consumer = RunCommand({"/usr/bin/env", "node", CHROME_CONSUMER_SCRIPT, CHROME_TRACE_ENGINE,
                              json});
  ASSERT_EQ(consumer.exit_code(), 0) << consumer.err;
  const auto seen = nlohmann::json::parse(consumer.out);
  // The workload's process (the GPU's, with its device timeline, is not this test's concern).
  std::map<int64_t, int> complete_per_tid;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == c.launches.front().pid) ++complete_per_tid[e["tid"]];
  std::map<std::string, int> entries_by_thread;
  for (const auto& proc : seen["processes"]) {
    if (proc["pid"] != c.launches.front().pid) continue;
    for (const auto& t : proc["threads"]) {
      // The process's DRM driver track (ioctls of the simulated GPU) is not this test's concern.
      if (t["name"].get<std::string>().rfind("xt-itt-labeller-", 0) != 0) continue;
      entries_by_thread[t["name"].get<std::string>()] = t["entries"].get<int>();
      // Everything we drew on it: 4 x ("xt.step", "xt.inner", launch), one zeKernelCreate,
      // and its other Level Zero calls.
      EXPECT_EQ(t["entries"].get<int>(), complete_per_tid[t["tid"].get<int64_t>()]) << consumer.out;
      EXPECT_GT(t["entries"].get<int>(), 13) << consumer.out;
    }
  }
  EXPECT_EQ(entries_by_thread.size(), 3u) << consumer.out;
}

TEST_F(IttIntegrationTest, UnbalancedLabelsAreKeptFlaggedAndLeaveOtherThreadsExact) {
  const std::string log = Path("labels.tsv"), out = Path("unbalanced.capnp");
  auto r = RunCommand({kXtrace, "record", "-o", out, "--", ITT_WORKLOAD_BIN, "--threads", "2",
                       "--iterations", "2", "--script", "run,unbalanced,run", "--log", log},
                      {kWithCollector}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_NE(r.err.find("Unbalanced ITT input, kept and flagged in the trace: 2 never ended"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 ended without a begin"), std::string::npos) << r.err;

  const IttCapture c = ReadIttCapture(out);
  IttCapture balanced = c, misuse = c;
  balanced.tasks.clear();
  misuse.tasks.clear();
  const uint32_t pid = c.tasks.empty() ? 0 : c.tasks[0].task.pid;
  for (const Span& s : c.tasks) {
    const bool flagged = s.task.unfinished || s.task.begin_missing || s.task.closed_by_outer;
    (flagged ? misuse : balanced).tasks.push_back(s);
  }
  // The workers' labels, before and after the misuse, are exactly what they logged.
  EXPECT_EQ(AsLabelLines(balanced), LogLines(log));
  ASSERT_EQ(misuse.tasks.size(), 4u);
  std::map<std::string, int> what;
  for (const Span& s : misuse.tasks) {
    EXPECT_EQ(s.domain, "xt.app");
    if (s.task.begin_missing) {
      ++what[s.task.tid == pid ? "end without begin on main" : "end without begin on helper"];
      EXPECT_EQ(s.task.start_ns, s.task.end_ns);
    }
    if (s.task.unfinished) {
      EXPECT_EQ(s.task.tid, pid);
      ++what["unfinished " + s.name];
    }
  }
  EXPECT_EQ(what, (std::map<std::string, int>{{"end without begin on helper", 1},
                                              {"end without begin on main", 1},
                                              {"unfinished xt.crossed", 1},
                                              {"unfinished xt.open", 1}}));
  // And the trace still converts, with the unmatched ends shown as instants.
  auto conv = RunCommand({kXtrace, "convert", out, "-o", Path("unbalanced.json")});
  ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  std::ifstream in(Path("unbalanced.json"));
  const auto trace = nlohmann::json::parse(in);
  int unmatched = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("name", "") != "end without begin") continue;
    ++unmatched;
    EXPECT_EQ(e["ph"], "i");
  }
  EXPECT_EQ(unmatched, 2);
}

TEST_F(IttIntegrationTest, AttachFindsTheCollectorInARunningProcessAndTheKernelOptimizesItsSite) {
  const std::string log = Path("labels.tsv"), out = Path("attach.capnp");
  Subprocess workload({ITT_WORKLOAD_BIN, "--wait-for-signal", "--threads", "2", "--iterations",
                       "3", "--log", log},
                      {kWithCollector, kProbeSiteOnly});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();
  ASSERT_EQ(LiveSiteByte(pid), 0x0f) << "the site should be an untouched NOP before attach";

  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("attached to pid " + std::to_string(pid) + " (ITT collector", 30s))
      << xtrace.stderr_text();
  ASSERT_TRUE(xtrace.WaitStderr("ITT calls go through the probe site (no fast path: the process opted out", 30s))
      << xtrace.stderr_text();
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1", 60s)) << workload.stderr_text();

  // After its first hit the kernel replaced the NOP with a call into its uprobe trampoline:
  // the site costs a syscall per hit, not a trap (DESIGN.md costs; uprobe optimization).
  EXPECT_EQ(LiveSiteByte(pid), 0xe8) << "the uprobe on the NOP site was not optimized";
  EXPECT_TRUE(MapsContain(pid, "[uprobes-trampoline]"));

  xtrace.Signal(SIGINT);
  auto status = xtrace.Wait(30s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
  workload.Signal(SIGTERM);
  workload.Wait(30s);

  const IttCapture c = ReadIttCapture(out);
  EXPECT_EQ(AsLabelLines(c), LogLines(log));
  EXPECT_EQ(c.tasks.size(), 2u * 3u * 6u);
}

// The fast path: attached to a running process, its calls land in its own rings; the probe
// site is never hit (no trap, no syscall per call) and the capture is as exact as ever.
TEST_F(IttIntegrationTest, AttachMovesARunningProcessToTheFastPathAndNeverHitsItsSite) {
  const std::string log = Path("labels.tsv"), out = Path("fast.capnp");
  Subprocess workload({ITT_WORKLOAD_BIN, "--wait-for-signal", "--threads", "2", "--iterations",
                       "3", "--log", log},
                      {kWithCollector});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();
  ASSERT_EQ(LiveControl(pid).value_or(xt_itt_control{}).generation, 0u) << "idle before attach";

  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("pid " + std::to_string(pid) + ": ITT calls go through the in-process fast path", 30s))
      << xtrace.stderr_text();
  EXPECT_NE(LiveControl(pid).value_or(xt_itt_control{}).generation, 0u);
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1", 60s)) << workload.stderr_text();
  // The uprobe is in place (int3), but no call reached it: its first hit would have made the
  // kernel turn it into a call to its trampoline.
  EXPECT_EQ(LiveSiteByte(pid), 0xcc) << "a call reached the probe site";
  EXPECT_FALSE(MapsContain(pid, "[uprobes-trampoline]"));

  xtrace.Signal(SIGINT);
  auto status = xtrace.Wait(30s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
  // Detached: back to the cost of no capture at once.
  EXPECT_EQ(LiveControl(pid).value_or(xt_itt_control{}).generation, 0u);
  workload.Signal(SIGTERM);
  workload.Wait(30s);

  const IttCapture c = ReadIttCapture(out);
  EXPECT_EQ(AsLabelLines(c), LogLines(log));
  EXPECT_EQ(c.tasks.size(), 2u * 3u * 6u);
}

// Two captures of one process (a node's system-wide capture and a user's attach, say): the
// collector writes into the rings of the capture that drains them and never calls its probe
// site, so the second reads the same rings alongside the first; when the first ends, the
// second takes the fast path over. Each has every call of its own window.
TEST_F(IttIntegrationTest, TwoCapturesOfOneProcessEachHaveEveryCallOfTheirWindow) {
  const std::string log = Path("labels.tsv"), first_out = Path("first.capnp"), second_out = Path("second.capnp");
  Subprocess workload({ITT_WORKLOAD_BIN, "--wait-for-signal", "--threads", "2", "--iterations",
                       "3", "--log", log},
                      {kWithCollector});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();
  const std::string who = "pid " + std::to_string(pid) + ": ";

  Subprocess first({kXtrace, "attach", "--pid", std::to_string(pid), "-o", first_out});
  ASSERT_TRUE(first.WaitStderr(who + "ITT calls go through the in-process fast path", 30s)) << first.stderr_text();
  EXPECT_EQ(first.stderr_text().find("alongside"), std::string::npos) << first.stderr_text();
  Subprocess second({kXtrace, "attach", "--pid", std::to_string(pid), "-o", second_out});
  ASSERT_TRUE(second.WaitStderr(who + "ITT calls go through the in-process fast path, read alongside "
                                      "another capture that drains it", 30s))
      << second.stderr_text();
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1", 60s)) << workload.stderr_text();

  first.Signal(SIGINT);
  auto status = first.Wait(30s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << first.stderr_text();
  ASSERT_TRUE(second.WaitStderr(who + "the capture whose ITT rings this one read alongside let go; attached again", 30s))
      << second.stderr_text();
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 2", 60s)) << workload.stderr_text();
  second.Signal(SIGINT);
  status = second.Wait(30s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << second.stderr_text();
  EXPECT_EQ(LiveControl(pid).value_or(xt_itt_control{}).generation, 0u) << "the last one let go";
  workload.Signal(SIGTERM);
  workload.Wait(30s);

  const IttCapture a = ReadIttCapture(first_out), b = ReadIttCapture(second_out);
  EXPECT_EQ(AsLabelLines(a), LogLines(log, {1}));
  EXPECT_EQ(AsLabelLines(b), LogLines(log));
  EXPECT_EQ(a.tasks.size(), 2u * 3u * 6u);
  EXPECT_EQ(b.tasks.size(), 2u * 2u * 3u * 6u);
}

// xtrace killed outright: the target runs on, and its collector lets go once the heartbeat
// is older than the lease, at its next call.
TEST_F(IttIntegrationTest, AKilledCaptureLeavesTheTargetRunningAndItsCollectorLetsGo) {
  const std::string log = Path("labels.tsv"), out = Path("killed.capnp");
  Subprocess workload({ITT_WORKLOAD_BIN, "--wait-for-signal", "--threads", "1", "--iterations",
                       "2", "--log", log},
                      {kWithCollector});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("ITT calls go through the in-process fast path", 30s)) << xtrace.stderr_text();
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1", 60s)) << workload.stderr_text();
  xtrace.Signal(SIGKILL);
  xtrace.Wait(30s);
  const auto before = LiveControl(pid);
  ASSERT_TRUE(before);
  EXPECT_NE(before->generation, 0u) << "nobody told it";
  std::this_thread::sleep_for(2500ms);  // the lease is 2 s
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 2", 60s)) << workload.stderr_text();
  const auto after = LiveControl(pid);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->generation, 0u);
  EXPECT_EQ(after->lapses, before->lapses + 1);
  workload.Signal(SIGTERM);
  auto status = workload.Wait(30s);
  EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << workload.stderr_text();
}

// The target's memory is not trusted: a ring overwritten with garbage costs the target the
// records in it, said in one line, and nothing else.
TEST_F(IttIntegrationTest, ACorruptRingCostsTheTargetItsRecordsAndNothingElse) {
  const std::string log = Path("labels.tsv"), out = Path("corrupt.capnp");
  Subprocess workload({ITT_WORKLOAD_BIN, "--wait-for-signal", "--threads", "1", "--iterations",
                       "2", "--log", log},
                      {kWithCollector});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("ITT calls go through the in-process fast path", 30s)) << xtrace.stderr_text();
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1", 60s)) << workload.stderr_text();
  std::this_thread::sleep_for(500ms);  // drained

  // Every ring: 4 KiB of garbage after what was read, and a write position claiming it.
  const auto control = LiveControl(pid);
  ASSERT_TRUE(control && control->ring_count > 0);
  std::vector<unsigned char> garbage(4096);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<unsigned char>(i * 131 + 7);
  for (uint32_t i = 0; i < std::min(control->ring_count, uint32_t{XT_ITT_MAX_RINGS}); ++i) {
    xt_itt_ring ring{};
    if (!control->rings[i] || !PeekPoke(pid, control->rings[i], &ring, sizeof(ring), false)) continue;
    const uint64_t data = control->rings[i] + sizeof(xt_itt_ring) + (ring.write_pos & (ring.data_bytes - 1));
    ASSERT_TRUE(PeekPoke(pid, data, garbage.data(), std::min<size_t>(garbage.size(), ring.data_bytes - (ring.write_pos & (ring.data_bytes - 1))), true));
    uint64_t write_pos = ring.write_pos + 512;
    ASSERT_TRUE(PeekPoke(pid, control->rings[i] + offsetof(xt_itt_ring, write_pos), &write_pos, 8, true));
  }
  ASSERT_TRUE(xtrace.WaitStderr("ITT fast path: skipped malformed records", 30s)) << xtrace.stderr_text();
  ASSERT_NO_FATAL_FAILURE(StopCaptureThenWorkload(xtrace, workload));
  const IttCapture c = ReadIttCapture(out);
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(AsLabelLines(c), LogLines(log, {1}));
}

// --itt-ring-size reaches the program: the rings its threads make while attached have it.
TEST_F(IttIntegrationTest, RingsHaveTheSizeAskedForWithIttRingSize) {
  Subprocess workload({ITT_WORKLOAD_BIN, "--wait-for-signal", "--threads", "2", "--iterations", "2"},
                      {kWithCollector});
  const uint32_t pid = PidFromReadyLine(workload.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << workload.stderr_text();
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "--itt-ring-size", "1M",
                     "-o", Path("sized.capnp")});
  ASSERT_TRUE(xtrace.WaitStderr("ITT calls go through the in-process fast path", 30s)) << xtrace.stderr_text();
  workload.Signal(SIGUSR1);
  ASSERT_TRUE(workload.WaitStdout("round 1", 60s)) << workload.stderr_text();
  const auto control = LiveControl(pid);
  ASSERT_TRUE(control);
  EXPECT_EQ(control->ring_bytes_wanted, 1u << 20);
  uint32_t rings = 0;
  for (uint32_t i = 0; i < std::min(control->ring_count, uint32_t{XT_ITT_MAX_RINGS}); ++i) {
    xt_itt_ring ring{};
    if (!control->rings[i] || !PeekPoke(pid, control->rings[i], &ring, sizeof(ring), false)) continue;
    EXPECT_EQ(ring.data_bytes, 1u << 20) << "ring " << i;
    ++rings;
  }
  EXPECT_GE(rings, 2u) << "a ring per calling thread";
  ASSERT_NO_FATAL_FAILURE(StopCaptureThenWorkload(xtrace, workload));
  EXPECT_TRUE(ReadIttCapture(Path("sized.capnp")).complete);
}

// The nice value (stat's 19th field) and name of each thread of `pid`, by thread id.
std::map<int, std::pair<int, std::string>> ThreadNices(pid_t pid) {
  std::map<int, std::pair<int, std::string>> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));  // from the 3rd field, the state
    std::string field;
    for (int i = 3; i <= 19 && fields >> field; ++i) {
    }
    out[std::stoi(entry.path().filename())] = {std::stoi(field), stat.substr(open + 1, close - open - 1)};
  }
  return out;
}

// xtrace's capture loop and ITT drain thread run ahead of the programs on a shared core
// (nice -10 by default when xtrace runs at nice 0); the command it started keeps xtrace's own
// value, and --nice sets the capture's.
TEST_F(IttIntegrationTest, CaptureThreadsRunAheadOfTheTracedCommand) {
  for (const std::optional<int> asked : {std::optional<int>(), std::optional<int>(4)}) {
    SCOPED_TRACE(asked ? "--nice " + std::to_string(*asked) : "default");
    std::vector<std::string> argv = {kXtrace, "record", "-o", Path("nice.capnp")};
    if (asked) argv.insert(argv.end(), {"--nice", std::to_string(*asked)});
    argv.insert(argv.end(), {"--", ITT_WORKLOAD_BIN, "--wait-for-signal", "--threads", "1",
                             "--iterations", "1"});
    Subprocess xtrace(argv, {kWithCollector});
    const uint32_t pid = PidFromReadyLine(xtrace.WaitStdout("ready", 30s));
    ASSERT_GT(pid, 0u) << xtrace.stderr_text();
    kill(static_cast<pid_t>(pid), SIGUSR1);  // a round: its calls reach the drain thread
    ASSERT_TRUE(xtrace.WaitStdout("round 1", 60s)) << xtrace.stderr_text();
    // xtrace starts at this test's nice value; under nice(1) it keeps it unless asked.
    errno = 0;
    const int own = getpriority(PRIO_PROCESS, 0);
    const int want = asked ? *asked : own == 0 ? -10 : own;
    const auto threads = ThreadNices(xtrace.pid());
    ASSERT_TRUE(threads.count(xtrace.pid()));
    EXPECT_EQ(threads.at(xtrace.pid()).first, want) << "the capture loop";
    int drainers = 0;
    for (const auto& [tid, t] : threads) {
      if (t.second != "xtrace-drain") continue;
      ++drainers;
      EXPECT_EQ(t.first, want) << "the ITT drain thread";
    }
    EXPECT_EQ(drainers, 1);
    for (const auto& [tid, t] : ThreadNices(static_cast<pid_t>(pid)))
      EXPECT_EQ(t.first, own) << "the traced command's thread " << tid << " (" << t.second << ")";
    kill(static_cast<pid_t>(pid), SIGTERM);
    EXPECT_EQ(xtrace.Wait(60s), 0) << xtrace.stderr_text();
  }
}

// A ring that fills faster than xtrace drains it counts what it could not hold; the count
// reaches the log's summary and the process's line in it.
TEST_F(IttIntegrationTest, AFullRingCountsItsDropsInTheLogSummary) {
  const std::string out = Path("full.capnp");
  auto r = RunCommand({kXtrace, "record", "-o", out, "--", ITT_OVERHEAD_BIN, "--pairs", "3000000"},
                      {kWithCollector}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_NE(r.err.find("ITT calls go through the in-process fast path"), std::string::npos) << r.err;
  auto reader = LogReader::Open(out);
  ASSERT_TRUE(reader.ok());
  Event e;
  for (auto more = reader->Next(&e); more.ok() && *more; more = reader->Next(&e)) {
  }
  ASSERT_TRUE(reader->summary());
  EXPECT_GT(reader->summary()->dropped, 0u);
  uint64_t per_process = 0;
  for (const auto& p : reader->summary()->process_stats) per_process += p.dropped;
  EXPECT_EQ(per_process, reader->summary()->dropped);
  EXPECT_NE(r.err.find("events dropped"), std::string::npos) << r.err;
}

TEST_F(IttIntegrationTest, StartPausedRecordsOnlyTheResumedWindowsOfEverySource) {
  const std::string log = Path("labels.tsv"), out = Path("paused.capnp");
  // Rounds 1, 3 and 5 run paused, before a resume, after a pause, and after detach.
  auto r = RunCommand({kXtrace, "record", "--start-paused", "-o", out, "--", ITT_WORKLOAD_BIN,
                       "--ze", "--threads", "2", "--iterations", "2", "--script",
                       "run,resume,run,pause,run,resume,run,detach,run", "--log", log},
                      {kSimDriver, kWithCollector}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_NE(r.err.find("starts paused"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("detached itself (__itt_detach)"), std::string::npos) << r.err;

  const IttCapture c = ReadIttCapture(out);
  const uint32_t pid = c.changes.empty() ? 0 : c.changes[0].pid;
  ASSERT_EQ(c.changes.size(), 5u);
  const CollectionState expected_states[] = {CollectionState::kPaused, CollectionState::kCollecting,
                                             CollectionState::kPaused, CollectionState::kCollecting,
                                             CollectionState::kDetached};
  for (size_t i = 0; i < c.changes.size(); ++i) {
    EXPECT_EQ(c.changes[i].state, expected_states[i]) << i;
    EXPECT_EQ(c.changes[i].cause, i == 0 ? CollectionCause::kStartPaused : CollectionCause::kIttCall);
    EXPECT_EQ(c.changes[i].pid, pid);
    if (i > 0) {
      EXPECT_EQ(c.changes[i].tid, pid) << "called from the main thread";
      EXPECT_GT(c.changes[i].ts_ns, c.changes[i - 1].ts_ns);
    }
  }

  // ITT labels: exactly rounds 2 and 4, and all of them inside the two resumed windows.
  std::vector<std::string> expected_labels, captured_labels;
  for (const std::string& l : LogLines(log, {2, 4}))
    if (l.find("\tlaunch\t") == std::string::npos) expected_labels.push_back(l);
  for (const std::string& l : AsLabelLines(c))
    if (l.find("\tlaunch\t") == std::string::npos) captured_labels.push_back(l);
  ASSERT_EQ(expected_labels.size(), 2u * 2u * 2u * 7u);
  EXPECT_EQ(captured_labels, expected_labels);
  auto in_window = [&](uint64_t t) {
    return (c.changes[1].ts_ns < t && t < c.changes[2].ts_ns) ||
           (c.changes[3].ts_ns < t && t < c.changes[4].ts_ns);
  };
  for (const Span& s : c.tasks) {
    EXPECT_TRUE(in_window(s.task.start_ns) && in_window(s.task.end_ns)) << s.name;
    EXPECT_FALSE(s.task.unfinished || s.task.begin_missing) << s.name;
  }

  // Level Zero obeys the same state: the launches of rounds 2 and 4 only, per thread, each
  // named by its kernel, created while paused (before the first resume).
  std::map<uint32_t, int> expected_launches, captured_launches;
  for (const std::string& l : LogLines(log, {2, 4}))
    if (l.find("\tlaunch\t") != std::string::npos) ++expected_launches[std::stoul(l)];
  for (const KernelLaunch& l : c.launches) {
    ++captured_launches[l.tid];
    EXPECT_TRUE(in_window(l.start_ns));
  }
  EXPECT_EQ(captured_launches, expected_launches);
  EXPECT_EQ(c.launches.size(), 8u);
  for (size_t i = 0; i < c.launches.size(); ++i) {
    EXPECT_TRUE(c.launches[i].name_known) << i;
    EXPECT_EQ(c.launch_names[i], "xt_scale_f32") << i;
  }
  EXPECT_EQ(r.err.find("kernel@0x<handle>"), std::string::npos) << r.err;
}

}  // namespace xtrace

// Integration tests of the kernel-driver (DRM) view: real BPF on the syscall tracepoints,
// checked against what the programs themselves say they passed — the simulated GPU's exec
// ioctl log (i915 and xe flavours) and drm_ioctls' own log. Needs root; skips with the reason
// elsewhere, fails under CI.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "log/log_reader.h"
#include "model/ze_api.h"
#include "root_fixture.h"
#include "subprocess.h"
#include "trace_formats.h"

namespace xtrace {
namespace {

using namespace std::chrono_literals;
using testing::LinesWith;
using testing::PidFromReadyLine;
using testing::RootTest;
using testing::RunCommand;
using testing::RunResult;
using testing::Subprocess;

const std::string kXtrace = XTRACE_BIN;
const std::string kWorkload = ZE_WORKLOAD_BIN;
const std::string kDrmIoctls = DRM_IOCTLS_BIN;
const std::string kSimDriver = "ZE_ENABLE_ALT_DRIVERS=" SIMZE_LIB;

// A host API call as captured (the events DRM ioctls are attributed to).
struct HostCall {
  uint32_t tid;
  uint64_t start_ns, end_ns;
  std::string name;
};

struct Capture {
  std::vector<DrmIoctl> ioctls;
  std::vector<std::string> ioctl_names;   // parallel to ioctls
  std::vector<std::string> ioctl_causes;  // parallel to ioctls
  std::vector<DrmFile> files;
  std::vector<std::string> file_paths;  // parallel to files
  std::vector<HostCall> calls;
  uint64_t launches = 0;
  bool complete = false;
};

Capture ReadCapture(const std::string& path) {
  Capture c;
  auto reader = LogReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return c;
  Event e;
  for (;;) {
    auto more = reader->Next(&e);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    const StringTable& s = reader->strings();
    if (auto* d = std::get_if<DrmIoctl>(&e)) {
      c.ioctls.push_back(*d);
      c.ioctl_names.emplace_back(s.Get(d->name));
      c.ioctl_causes.emplace_back(s.Get(d->cause));
    } else if (auto* f = std::get_if<DrmFile>(&e)) {
      c.files.push_back(*f);
      c.file_paths.emplace_back(s.Get(f->path));
    } else if (auto* l = std::get_if<KernelLaunch>(&e)) {
      ++c.launches;
      c.calls.push_back({l->tid, l->start_ns, l->end_ns, "zeCommandListAppendLaunchKernel"});
    } else if (auto* k = std::get_if<KernelCreate>(&e)) {
      c.calls.push_back({k->tid, k->start_ns, k->end_ns, "zeKernelCreate"});
    } else if (auto* a = std::get_if<ApiCall>(&e)) {
      c.calls.push_back({a->tid, a->start_ns, a->end_ns, FindZeApi(a->fn)->symbol});
    }
  }
  c.complete = reader->complete();
  return c;
}

std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* format, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  return buf;
}

// The decoded fields of a captured ioctl in the "key=value ..." form the programs log what
// they passed in: "unreadable" for a bad pointer, "-" when nothing is decoded.
struct CanonicalFields {
  std::string operator()(const std::monostate&) const { return "-"; }
  std::string operator()(const I915ExecbufferArgs& a) const {
    return Format(
        "context_id=%u engine=%u buffer_count=%u batch_start_offset=%u batch_len=%u"
        " flags=0x%" PRIx64,
        a.context_id, a.engine, a.buffer_count, a.batch_start_offset, a.batch_len, a.flags);
  }
  std::string operator()(const I915GemCreateArgs& a) const {
    return a.extended ? Format("size=%" PRIu64 " flags=0x%x", a.size, a.flags)
                      : Format("size=%" PRIu64, a.size);
  }
  std::string operator()(const I915MmapOffsetArgs& a) const {
    return Format("handle=%u flags=%" PRIu64, a.handle, a.flags);
  }
  std::string operator()(const I915GemWaitArgs& a) const {
    return Format("handle=%u timeout_ns=%" PRId64, a.handle, a.timeout_ns);
  }
  std::string operator()(const I915ContextCreateArgs& a) const {
    return Format("flags=0x%x", a.flags);
  }
  std::string operator()(const XeExecArgs& a) const {
    return Format("exec_queue_id=%u num_syncs=%u address=0x%" PRIx64 " num_batch_buffer=%u",
                  a.exec_queue_id, a.num_syncs, a.address, a.num_batch_buffer);
  }
  std::string operator()(const XeVmBindArgs& a) const {
    return Format(
        "vm_id=%u exec_queue_id=%u num_binds=%u num_syncs=%u op=%u obj=%u"
        " obj_offset=0x%" PRIx64 " range=%" PRIu64 " addr=0x%" PRIx64,
        a.vm_id, a.exec_queue_id, a.num_binds, a.num_syncs, a.op, a.obj, a.obj_offset, a.range,
        a.addr);
  }
  std::string operator()(const XeGemCreateArgs& a) const {
    return Format("size=%" PRIu64 " placement=0x%x flags=0x%x vm_id=%u cpu_caching=%u", a.size,
                  a.placement, a.flags, a.vm_id, a.cpu_caching);
  }
  std::string operator()(const XeExecQueueCreateArgs& a) const {
    return Format("width=%u num_placements=%u vm_id=%u flags=0x%x", a.width, a.num_placements,
                  a.vm_id, a.flags);
  }
  std::string operator()(const XeWaitUserFenceArgs& a) const {
    return Format("addr=0x%" PRIx64 " op=%u value=0x%" PRIx64 " mask=0x%" PRIx64
                  " timeout_ns=%" PRId64 " exec_queue_id=%u",
                  a.addr, a.op, a.value, a.mask, a.timeout_ns, a.exec_queue_id);
  }
};

std::string Canonical(const DrmIoctl& d) {
  return d.arg_unreadable ? "unreadable" : std::visit(CanonicalFields{}, d.args);
}

std::vector<std::vector<std::string>> ReadTsv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::istringstream cols(line);
    for (std::string f; std::getline(cols, f, '\t');) fields.push_back(f);
    rows.push_back(fields);
  }
  return rows;
}

// Whether the kernel has the driver `module` (loaded or built in).
bool HasModule(const std::string& module) {
  return std::filesystem::exists("/sys/module/" + module);
}

class DrmIntegrationTest : public RootTest {
 protected:
  DrmIntegrationTest() : RootTest("DRM capture", "drm-itest") {}
};

// --- The simulated GPU, in both driver flavours ----------------------------------------

class SimulatedGpuDrmTest : public DrmIntegrationTest,
                            public ::testing::WithParamInterface<const char*> {};

// Each submission of the simulated driver appears once, with the fields it passed, and is
// attributed to the Level Zero call that issued it; the Chrome JSON draws it on a driver
// track with an arrow from that call.
TEST_P(SimulatedGpuDrmTest, EverySubmissionOnceDecodedAndLinkedToItsCall) {
  const std::string flavour = GetParam();
  const std::string kmd_log = Path("kmd.tsv"), out = Path("run.capnp"), json = Path("run.json");
  constexpr int kThreads = 2, kIterations = 3;
  auto r = RunCommand(
      {kXtrace, "record", "-o", out, "--", kWorkload, "--iterations", std::to_string(kIterations),
       "--threads", std::to_string(kThreads)},
      {kSimDriver, "XTRACE_SIMZE_DRM=" + flavour, "XTRACE_SIMZE_KMD_LOG=" + kmd_log}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_NE(r.err.find("xtrace: DRM /dev/null (not a DRM device): "), std::string::npos) << r.err;

  const auto truth = ReadTsv(kmd_log);
  ASSERT_GT(truth.size(), 0u);
  Capture c = ReadCapture(out);
  ASSERT_TRUE(c.complete);
  const std::string exec_name =
      flavour == "xe" ? "DRM_IOCTL_XE_EXEC" : "DRM_IOCTL_I915_GEM_EXECBUFFER2";

  // Each logged ioctl matches exactly one captured one: same thread, same command, inside the
  // logged bounds, with the same fields; and nothing else was captured.
  std::vector<bool> used(c.ioctls.size(), false);
  for (const auto& row : truth) {
    ASSERT_EQ(row[0], flavour);
    const uint32_t tid = std::stoul(row[2]);
    const uint64_t before = std::stoull(row[3]), after = std::stoull(row[4]);
    const uint32_t cmd = std::stoul(row[5], nullptr, 16), fd = std::stoul(row[6]);
    const std::string fields =
        flavour == "xe"
            ? "exec_queue_id=" + row[7] + " num_syncs=" + row[8] + " address=" + row[9] +
                  " num_batch_buffer=" + row[10]
            : "context_id=" + row[7] + " engine=" + row[8] + " buffer_count=" + row[10] +
                  " batch_start_offset=" + row[11] + " batch_len=" + row[12] + " flags=" + row[9];
    size_t matches = 0;
    for (size_t i = 0; i < c.ioctls.size(); ++i) {
      const DrmIoctl& d = c.ioctls[i];
      if (d.tid != tid || d.start_ns < before || d.end_ns > after) continue;
      ++matches;
      used[i] = true;
      EXPECT_EQ(d.cmd, cmd);
      EXPECT_EQ(d.fd, fd);
      EXPECT_EQ(d.result, -ENOTTY);
      EXPECT_EQ(c.ioctl_names[i], exec_name);
      EXPECT_FALSE(d.arg_unreadable);
      EXPECT_EQ(Canonical(d), fields);
    }
    EXPECT_EQ(matches, 1u) << "logged ioctl of thread " << tid << " at " << before;
  }
  EXPECT_EQ(std::count(used.begin(), used.end(), true), static_cast<long>(c.ioctls.size()));
  EXPECT_EQ(c.ioctls.size(), truth.size());

  // The fd is identified once, as what it is.
  ASSERT_EQ(c.files.size(), 1u);
  EXPECT_EQ(c.files[0].kind, DrmNodeKind::kNotDrm);
  EXPECT_EQ(c.file_paths[0], "/dev/null");

  // Attribution: an ioctl names the host call on its thread that contains it, and only then.
  // Every launch on an immediate command list submits once inside the call (2 per iteration),
  // launches on regular lists submit nothing (zeCommandQueueExecuteCommandLists does).
  size_t linked_to_launches = 0, unattributed = 0;
  std::map<std::pair<uint32_t, uint64_t>, int> submissions_per_call;
  for (size_t i = 0; i < c.ioctls.size(); ++i) {
    const DrmIoctl& d = c.ioctls[i];
    const HostCall* container = nullptr;
    for (const HostCall& call : c.calls)
      if (call.tid == d.tid && call.start_ns <= d.start_ns && d.end_ns <= call.end_ns)
        container = &call;
    if (!container) {
      EXPECT_EQ(c.ioctl_causes[i], "") << "ioctl at " << d.start_ns;
      ++unattributed;
      continue;
    }
    EXPECT_EQ(c.ioctl_causes[i], container->name);
    EXPECT_EQ(d.cause_start_ns, container->start_ns);
    ++submissions_per_call[{d.tid, container->start_ns}];
    if (c.ioctl_causes[i] == "zeCommandListAppendLaunchKernel") ++linked_to_launches;
  }
  EXPECT_EQ(linked_to_launches, static_cast<size_t>(kThreads * kIterations * 2));
  for (const auto& [call, n] : submissions_per_call) EXPECT_EQ(n, 1);

  // Chrome JSON: a driver track with one slice per ioctl; one arrow per attributed ioctl,
  // starting inside a launch on the calling thread and ending inside a driver slice.
  auto conv = RunCommand({kXtrace, "convert", out, "-o", json});
  ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  testing::ExpectEveryFormatDrawable(kXtrace, out, json);
  std::ifstream in(json);
  const auto doc = nlohmann::json::parse(in);
  std::set<uint64_t> driver_tids;
  std::vector<nlohmann::json> slices, launches, starts, ends;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] == "M" && ev["name"] == "thread_name" &&
        ev["args"]["name"].get<std::string>().rfind("driver", 0) == 0)
      driver_tids.insert(ev["tid"].get<uint64_t>());
    if (ev["ph"] == "X" && ev["cat"] == "drm") slices.push_back(ev);
    if (ev["ph"] == "X" && ev["cat"] == "xpu_runtime" && ev["name"] != "zeKernelCreate")
      launches.push_back(ev);
    // The driver track's arrows (the device timeline draws its own, in its own category).
    if (ev["ph"] == "s" && ev["cat"] == "drm") starts.push_back(ev);
    if (ev["ph"] == "f" && ev["cat"] == "drm") ends.push_back(ev);
  }
  ASSERT_FALSE(driver_tids.empty());
  EXPECT_EQ(slices.size(), c.ioctls.size());
  for (const auto& s : slices) {
    EXPECT_TRUE(driver_tids.count(s["tid"].get<uint64_t>())) << s.dump();
    EXPECT_EQ(s["name"], exec_name);
    EXPECT_EQ(s["args"]["device"], "/dev/null (not a DRM device)");
  }
  auto inside = [](const nlohmann::json& point, const std::vector<nlohmann::json>& spans) {
    const double ts = point["ts"].get<double>();
    return std::any_of(spans.begin(), spans.end(), [&](const nlohmann::json& s) {
      return s["tid"] == point["tid"] && s["ts"].get<double>() <= ts &&
             ts <= s["ts"].get<double>() + s["dur"].get<double>();
    });
  };
  EXPECT_EQ(starts.size(), c.ioctls.size() - unattributed);
  EXPECT_EQ(ends.size(), starts.size());
  std::set<uint64_t> start_ids, end_ids;
  for (const auto& s : starts) {
    EXPECT_TRUE(inside(s, launches)) << s.dump();
    start_ids.insert(s["id"].get<uint64_t>());
  }
  for (const auto& f : ends) {
    EXPECT_TRUE(inside(f, slices)) << f.dump();
    EXPECT_EQ(f["bp"], "e");
    end_ids.insert(f["id"].get<uint64_t>());
  }
  EXPECT_EQ(start_ids, end_ids);

  // An independent consumer of the format, the Chrome DevTools trace engine, sees the driver
  // track as a named thread of the process holding every ioctl.
  if (!std::filesystem::exists(CHROME_TRACE_ENGINE)) {
    if (getenv("CI")) FAIL() << CHROME_TRACE_ENGINE << " missing: scripts/install-deps.sh installs it";
    GTEST_SKIP() << "Chrome trace engine not installed (scripts/install-deps.sh installs it)";
  }
  auto consumer =
      RunCommand({"/usr/bin/env", "node", CHROME_CONSUMER_SCRIPT, CHROME_TRACE_ENGINE, json});
  ASSERT_EQ(consumer.exit_code(), 0) << consumer.err;
  const auto seen = nlohmann::json::parse(consumer.out);
  size_t on_driver_tracks = 0;
  for (const auto& proc : seen["processes"])  // the workload's (and the GPU's, no driver track)
    for (const auto& t : proc["threads"])
      if (t["name"].is_string() && t["name"].get<std::string>().rfind("driver", 0) == 0)
        on_driver_tracks += t["entries"].get<size_t>();
  EXPECT_EQ(on_driver_tracks, c.ioctls.size()) << consumer.out;
}

INSTANTIATE_TEST_SUITE_P(Flavours, SimulatedGpuDrmTest, ::testing::Values("i915", "xe"),
                         [](const auto& info) { return std::string(info.param); });

// --- A program that is not Level Zero --------------------------------------------------

// Checks a capture of drm_ioctls against its own log: every DRM ioctl once, with the fields
// passed; bad pointers flagged; nothing that is not a DRM command.
void ExpectMatchesProgramLog(const Capture& c, const std::string& log_path) {
  const auto logged = ReadTsv(log_path);
  ASSERT_GT(logged.size(), 0u);
  std::multiset<std::string> want, got;
  for (const auto& row : logged) want.insert(row[0] + " " + row[1] + " " + row[2]);
  for (size_t i = 0; i < c.ioctls.size(); ++i) {
    const DrmIoctl& d = c.ioctls[i];
    got.insert(std::to_string(d.tid) + " " + Format("0x%x", d.cmd) + " " + Canonical(d));
    EXPECT_EQ((d.cmd >> 8) & 0xff, 0x64u) << "not a DRM command: " << Format("0x%x", d.cmd);
    EXPECT_EQ(d.result, -ENOTTY);
    EXPECT_GE(d.end_ns, d.start_ns);
    if (d.arg_unreadable) {
      // NULL and an unmapped page: flagged, still paired, nothing decoded.
      EXPECT_TRUE(d.arg == 0 || d.arg % 4096 == 0) << d.arg;
      EXPECT_TRUE(std::holds_alternative<std::monostate>(d.args));
    }
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(c.launches, 0u);
}

// Every place the ioctl programs attach: the default (the first hook the kernel takes) and each
// of the hooks --drm-hook asks for that a kernel without BPF trampolines still has. (fentry is
// the default's first choice where the kernel allows it.)
struct DrmHookCase {
  const char* name;
  const char* flag;  // nullptr: the default
};
class DrmHookTest : public DrmIntegrationTest, public ::testing::WithParamInterface<DrmHookCase> {};

TEST_P(DrmHookTest, DrmOnlyCapturesAProgramThatNeverUsesLevelZero) {
  const DrmHookCase hook = GetParam();
  const std::string log = Path("ioctls.tsv"), out = Path("drm.capnp");
  std::vector<std::string> argv = {kXtrace, "record", "--drm-only", "-o", out};
  if (hook.flag) argv.insert(argv.end(), {"--drm-hook", hook.flag});
  argv.insert(argv.end(), {"--", kDrmIoctls, "--threads", "2", "--repeat", "5",
                           "--log", log});
  auto r = RunCommand(argv, {}, 60s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  // A hook asked for is used without a word, and so is the default's fallback from fentry to
  // the ioctl trace events; only the raw syscall tracepoints, which every syscall pays for,
  // would be said.
  EXPECT_EQ(LinesWith(r.err, "DRM ioctls:").size(), 0u) << r.err;
  Capture c = ReadCapture(out);
  EXPECT_TRUE(c.complete);
  ExpectMatchesProgramLog(c, log);
  EXPECT_EQ(c.ioctls.size(), 2u * 5u * 16u);

  size_t unreadable = 0;
  for (size_t i = 0; i < c.ioctls.size(); ++i) {
    unreadable += c.ioctls[i].arg_unreadable;
    if (c.ioctls[i].cmd == 0xC0406400u) {
      EXPECT_EQ(c.ioctl_names[i], "DRM_IOCTL_VERSION");
    } else if (c.ioctls[i].cmd == 0x4008649Fu) {
      EXPECT_EQ(c.ioctl_names[i], "DRM_IOCTL_DRIVER_0x5f");
    }
    EXPECT_EQ(c.ioctl_causes[i], "");  // no API call to attribute it to
  }
  EXPECT_EQ(unreadable, 2u * 5u * 2u);

  // Level Zero was never probed; a driver's completion tracepoints this kernel lacks are said
  // once where that driver is on the machine (its tracepoints come with its module), and not
  // at all where it is not, as nothing of it can be missed (this kind of VM has neither); the
  // capture went on; libbpf's own complaints stay quiet.
  EXPECT_EQ(r.err.find("attached to pid"), std::string::npos) << r.err;
  EXPECT_EQ(LinesWith(r.err, "i915 request tracepoints").size(), HasModule("i915") ? 1u : 0u)
      << r.err;
  EXPECT_EQ(LinesWith(r.err, "xe hardware fence tracepoints").size(), HasModule("xe") ? 1u : 0u)
      << r.err;
  EXPECT_EQ(LinesWith(r.err, "libbpf:").size(), 0u) << r.err;
  EXPECT_NE(r.err.find("xtrace: DRM /dev/null (not a DRM device): 50 submissions, 0 bytes "
                       "created, 20 waits; 160 ioctls in all."),
            std::string::npos)
      << r.err;
}

// With --verbose, the completion tracepoints of a driver the machine does not have are said
// too, with why they are missing.
TEST_F(DrmIntegrationTest, VerboseSaysTheCompletionTracepointsOfDriversTheMachineLacks) {
  const std::string log = Path("ioctls.tsv"), out = Path("drm.capnp");
  auto r = RunCommand({kXtrace, "record", "--drm-only", "--verbose", "-o", out, "--",
                       kDrmIoctls, "--repeat", "1", "--log", log},
                      {}, 60s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  for (const char* module : {"i915", "xe"}) {
    const std::string why = std::string("no ") + module + " driver on this machine (/sys/module/" +
                            module + ")";
    EXPECT_EQ(LinesWith(r.err, why).size(), HasModule(module) ? 0u : 1u) << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Hooks, DrmHookTest,
                         ::testing::Values(DrmHookCase{"Default", nullptr},
                                           DrmHookCase{"IoctlTracepoints", "ioctl-tracepoints"},
                                           DrmHookCase{"SyscallTracepoints", "syscall-tracepoints"}),
                         [](const ::testing::TestParamInfo<DrmHookCase>& info) {
                           return std::string(info.param.name);
                         });

// Where the kernel refuses trampolines, the default takes the ioctl trace events, on which no
// other syscall runs a program, and not the raw syscall tracepoints, on which every one does.
// A hook asked for that the kernel refuses is named with the reason.
TEST_F(DrmIntegrationTest, DefaultHookIsTheCheapestTheKernelTakes) {
  auto r = RunCommand({kXtrace, "record", "-v", "--drm-only", "-o", Path("auto.capnp"), "--",
                       "/bin/true"},
                      {}, 60s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  ASSERT_EQ(LinesWith(r.err, "DRM ioctls: attached to ").size(), 1u) << r.err;
  const bool fentry = LinesWith(r.err, "attached to fentry/fexit on __x64_sys_ioctl").size() == 1;
  if (!fentry) {
    EXPECT_EQ(LinesWith(r.err, "DRM ioctls: attached to the ioctl trace events").size(), 1u) << r.err;
    EXPECT_EQ(LinesWith(r.err, "DRM ioctls: loading the DRM ioctl programs for fentry/fexit "
                               "on __x64_sys_ioctl: ").size(),
              1u)
        << r.err;
    auto asked = RunCommand({kXtrace, "record", "--drm-only", "--drm-hook", "fentry", "-o",
                             Path("fentry.capnp"), "--", "/bin/true"},
                            {}, 60s);
    // With --drm-only nothing is left to capture: an error, said once.
    EXPECT_EQ(asked.exit_code(), 1) << asked.err;
    EXPECT_EQ(LinesWith(asked.err, "xtrace record: loading the DRM ioctl programs for "
                                   "fentry/fexit on __x64_sys_ioctl: ").size(),
              1u)
        << asked.err;
    EXPECT_EQ(LinesWith(asked.err, "fentry").size(), 1u) << asked.err;
  }
  EXPECT_EQ(LinesWith(r.err, "raw syscall tracepoints").size(), 0u) << r.err;
}

// Runs `argv` in a mount namespace of its own with every tracefs and debugfs mount (debugfs
// would mount tracefs again on access) taken away: a machine whose init mounts neither.
RunResult RunWithoutTracefs(const std::vector<std::string>& argv) {
  const std::string script =
      "for m in $(awk '$3 == \"tracefs\" || $3 == \"debugfs\" {print $2}' /proc/mounts | sort -r);"
      " do umount \"$m\" || exit 97; done; exec \"$@\"";
  std::vector<std::string> command = {"/usr/bin/unshare", "--mount", "--propagation", "private",
                                      "/bin/sh", "-c", script, "sh"};
  command.insert(command.end(), argv.begin(), argv.end());
  return RunCommand(command, {}, 60s);
}

// Without tracefs mounted, xtrace mounts it (as root) and takes the ioctl trace events, which
// spare every other syscall; it says so.
TEST_F(DrmIntegrationTest, DefaultHookMountsTracefsWhereTheMachineHasNot) {
  const std::string log = Path("ioctls.tsv"), out = Path("mounted-tracefs.capnp");
  auto r = RunWithoutTracefs({kXtrace, "record", "-v", "--drm-only", "-o", out, "--", kDrmIoctls,
                              "--repeat", "2", "--log", log});
  ASSERT_NE(r.exit_code(), 97) << "could not unmount tracefs in a private mount namespace: " << r.err;
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(LinesWith(r.err, "DRM ioctls: mounted tracefs at /sys/kernel/tracing (it was not "
                                  "mounted)").size(),
            1u)
      << r.err;
  EXPECT_EQ(LinesWith(r.err, "DRM ioctls: attached to the ioctl trace events").size(), 1u) << r.err;
  EXPECT_EQ(LinesWith(r.err, "raw syscall tracepoints (sys_enter, sys_exit) instead").size(), 0u) << r.err;
  Capture c = ReadCapture(out);
  EXPECT_TRUE(c.complete);
  ExpectMatchesProgramLog(c, log);
  EXPECT_EQ(c.ioctls.size(), 2u * 16u);
}

// Without tracefs and without the right to mount it (a container given the collector's
// capabilities, CAP_SYS_ADMIN not among them) the ioctl trace events cannot be found, and the
// default falls back to the raw syscall tracepoints, saying why and what they cost; the
// ioctls are all captured still.
TEST_F(DrmIntegrationTest, DefaultHookWithoutTracefsFallsBackToTheRawSyscallTracepoints) {
  const std::string log = Path("ioctls.tsv"), out = Path("no-tracefs.capnp");
  auto r = RunWithoutTracefs({"/usr/bin/setpriv", "--bounding-set", "-sys_admin", "--", kXtrace,
                              "record", "--drm-only", "-o", out, "--", kDrmIoctls, "--repeat", "2",
                              "--log", log});
  ASSERT_NE(r.exit_code(), 97) << "could not unmount tracefs in a private mount namespace: " << r.err;
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(LinesWith(r.err, "(tracefs is not mounted at /sys/kernel/tracing and mounting it "
                             "failed (Operation not permitted)); using the raw syscall "
                             "tracepoints (sys_enter, sys_exit) instead, which every syscall "
                             "on the machine pays for while the capture runs")
                .size(),
            1u)
      << r.err;
  Capture c = ReadCapture(out);
  EXPECT_TRUE(c.complete);
  ExpectMatchesProgramLog(c, log);
  EXPECT_EQ(c.ioctls.size(), 2u * 16u);
}

TEST_F(DrmIntegrationTest, AttachToARunningProgramWithoutLevelZero) {
  const std::string log = Path("ioctls.tsv"), out = Path("attach.capnp");
  Subprocess program({kDrmIoctls, "--wait-for-signal", "--repeat", "3", "--log", log});
  const uint32_t pid = PidFromReadyLine(program.WaitStdout("ready", 30s));
  ASSERT_GT(pid, 0u) << program.stderr_text();

  // Without --drm-only: Level Zero is waited for, the DRM view is traced meanwhile, and the
  // end of the target ends the capture.
  Subprocess xtrace({kXtrace, "attach", "--pid", std::to_string(pid), "-o", out});
  ASSERT_TRUE(xtrace.WaitStderr("has not loaded Level Zero", 30s)) << xtrace.stderr_text();
  program.Signal(SIGUSR1);
  ASSERT_TRUE(program.WaitStdout("done", 30s)) << program.stderr_text();
  program.Wait(30s);
  auto status = xtrace.Wait(30s);
  ASSERT_TRUE(status.has_value()) << "xtrace did not stop when its target exited";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << xtrace.stderr_text();
  EXPECT_NE(xtrace.stderr_text().find("only its kernel-driver (DRM) calls were captured"),
            std::string::npos)
      << xtrace.stderr_text();

  Capture c = ReadCapture(out);
  ExpectMatchesProgramLog(c, log);
}

TEST_F(DrmIntegrationTest, NoDrmLeavesTheDriverViewOut) {
  const std::string out = Path("nodrm.capnp");
  auto r =
      RunCommand({kXtrace, "record", "--no-drm", "-o", out, "--", kWorkload, "--iterations", "2"},
                 {kSimDriver, "XTRACE_SIMZE_DRM=i915"}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(r.err.find("DRM"), std::string::npos) << r.err;
  Capture c = ReadCapture(out);
  EXPECT_EQ(c.launches, 10u);
  EXPECT_TRUE(c.ioctls.empty());
  EXPECT_TRUE(c.files.empty());
}

TEST_F(DrmIntegrationTest, ConflictingDrmOptionsAreAUsageError) {
  auto r = RunCommand({kXtrace, "record", "--no-drm", "--drm-only", "--", "/bin/true"});
  EXPECT_EQ(r.exit_code(), 2);
  EXPECT_NE(r.err.find("--no-drm and --drm-only exclude each other"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace xtrace

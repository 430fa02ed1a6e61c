// Tests for the log -> Chrome JSON converter (userspace/export/converter.cc): writes a log
// with LogWriter, converts it, parses the JSON back and checks metadata, events and names.
#include "export/converter.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "log/log_writer.h"
#include "xtrace/records.h"
#include "log_test_util.h"
#include "perfetto_trace_reader.h"
#include "trace_checks.h"
#include "trace_equivalence.h"
#include "trace_json_util.h"

namespace xtrace {
namespace {

using test_util::Contains;
using test_util::ReadFileBytes;
using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;
using test_util::WriteFileBytes;

constexpr uint32_t kPid = 4242;
constexpr uint32_t kMainTid = 4242;
constexpr uint32_t kWorkerTid = 4250;

// A small but complete capture: a process, its threads, a kernel created and launched, a
// launch of a kernel created before capture began, and a failed launch.
void WriteSampleCapture(const std::string& path, bool finish, size_t events_per_batch = 4096) {
  auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = events_per_batch});
  ASSERT_TRUE(writer.ok());
  StringTable& s = (*writer)->strings();
  LogWriter& w = **writer;
  w.Append(ProcessInfo{.pid = kPid,
                       .ns_pid = kPid,
                       .comm = s.Intern("python3"),
                       .command_line = s.Intern("python3 train.py --fast")});
  w.Append(ThreadInfo{.pid = kPid, .tid = kMainTid, .name = s.Intern("python3")});
  w.Append(ThreadInfo{.pid = kPid, .tid = kWorkerTid, .name = s.Intern("ze-worker")});

  KernelCreate create;
  create.pid = kPid;
  create.tid = kMainTid;
  create.start_ns = 5'000'000'000'000;
  create.end_ns = 5'000'000'012'345;
  create.module = 0x5555'0000'1000;
  create.kernel = 0x5555'0000'2000;
  create.name = s.Intern("gemm_f32");
  w.Append(create);

  KernelLaunch launch;
  launch.pid = kPid;
  launch.tid = kWorkerTid;
  launch.start_ns = 5'000'000'100'001;
  launch.end_ns = 5'000'000'103'500;
  launch.command_list = 0x5555'0000'3000;
  launch.kernel = 0x5555'0000'2000;
  launch.signal_event = 0x5555'0000'4000;
  launch.group_count[0] = 256;
  launch.group_count[1] = 2;
  launch.group_count[2] = 1;
  launch.num_wait_events = 1;
  launch.kernel_name = create.name;
  launch.name_known = true;
  w.Append(launch);

  KernelLaunch unknown = launch;
  unknown.start_ns = 5'000'000'200'000;
  unknown.end_ns = 5'000'000'201'000;
  unknown.kernel = 0x7777;
  unknown.signal_event = 0;
  unknown.num_wait_events = 0;
  unknown.kernel_name = s.Intern("kernel@0x7777");
  unknown.name_known = false;
  unknown.group_count_unreadable = true;
  w.Append(unknown);

  KernelLaunch failed = launch;
  failed.start_ns = 5'000'000'300'000;
  failed.end_ns = 5'000'000'300'100;
  failed.result = 0x78000004;         // ZE_RESULT_ERROR_INVALID_ARGUMENT
  failed.kernel_name = kEmptyString;  // the correlator gave no name at all
  w.Append(failed);

  if (finish) {
    ASSERT_TRUE(w.Finish(SampleSummary()).ok());
  } else {
    ASSERT_TRUE(w.Flush().ok());
  }
}

using test_util::Find;
using test_util::ParseFile;

TEST(ConverterTest, ConvertsMetadataEventsAndNames) {
  ScratchDir dir;
  const std::string in = dir.File("run.capnp");
  const std::string out = dir.File("run.json");
  WriteSampleCapture(in, /*finish=*/true);

  ConvertStats stats;
  const Status st = ConvertLog(in, out, {}, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(stats.events_in, 7u);
  EXPECT_EQ(stats.events_out, 7u);
  EXPECT_EQ(stats.batches_in, 1u);
  EXPECT_EQ(stats.bytes_written, std::filesystem::file_size(out));
  EXPECT_TRUE(stats.complete);
  EXPECT_FALSE(stats.salvaged);
  EXPECT_TRUE(stats.damage.empty());

  const nlohmann::json trace = ParseFile(out);
  EXPECT_EQ(trace["displayTimeUnit"], "ns");

  const auto processes = Find(trace, "M", "process_name");
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0]["pid"], kPid);
  EXPECT_EQ(processes[0]["args"]["name"], "python3");
  EXPECT_EQ(processes[0]["args"]["command_line"], "python3 train.py --fast");

  const auto threads = Find(trace, "M", "thread_name");
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[1]["pid"], kPid);
  EXPECT_EQ(threads[1]["tid"], kWorkerTid);
  EXPECT_EQ(threads[1]["args"]["name"], "ze-worker");

  const auto creates = Find(trace, "X", "zeKernelCreate");
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(creates[0]["cat"], "xpu_runtime");
  EXPECT_EQ(creates[0]["tid"], kMainTid);
  EXPECT_DOUBLE_EQ(creates[0]["ts"].get<double>(), 5'000'000'000.000);
  EXPECT_DOUBLE_EQ(creates[0]["dur"].get<double>(), 12.345);
  EXPECT_EQ(creates[0]["args"]["kernel_name"], "gemm_f32");
  EXPECT_EQ(creates[0]["args"]["module"], "0x555500001000");
  EXPECT_EQ(creates[0]["args"]["kernel"], "0x555500002000");
  EXPECT_FALSE(creates[0]["args"].contains("result"));

  const auto launches = Find(trace, "X", "gemm_f32");
  ASSERT_EQ(launches.size(), 1u);
  const nlohmann::json& l = launches[0];
  EXPECT_EQ(l["cat"], "xpu_runtime");
  EXPECT_EQ(l["pid"], kPid);
  EXPECT_EQ(l["tid"], kWorkerTid);
  EXPECT_DOUBLE_EQ(l["ts"].get<double>(), 5'000'000'100.001);
  EXPECT_DOUBLE_EQ(l["dur"].get<double>(), 3.499);
  EXPECT_EQ(l["args"]["group_count_x"], 256);
  EXPECT_EQ(l["args"]["group_count_y"], 2);
  EXPECT_EQ(l["args"]["group_count_z"], 1);
  EXPECT_EQ(l["args"]["kernel"], "0x555500002000");
  EXPECT_EQ(l["args"]["command_list"], "0x555500003000");
  EXPECT_EQ(l["args"]["signal_event"], "0x555500004000");
  EXPECT_EQ(l["args"]["num_wait_events"], 1);
  EXPECT_FALSE(l["args"].contains("result"));
  EXPECT_FALSE(l["args"].contains("name_known"));
  // The exact decimal text, not just a close double.
  EXPECT_TRUE(Contains(ReadFileBytes(out), "\"ts\":5000000100.001,\"dur\":3.499,"));

  const auto unknown = Find(trace, "X", "kernel@0x7777");
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0]["args"]["name_known"], false);
  EXPECT_EQ(unknown[0]["args"]["group_count"], "unreadable");
  EXPECT_FALSE(unknown[0]["args"].contains("group_count_x"));
  EXPECT_FALSE(unknown[0]["args"].contains("signal_event"));

  // No name at all: named after the handle rather than left blank.
  const auto failed = Find(trace, "X", "kernel@0x555500002000");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["args"]["result"], 0x78000004);

  const nlohmann::json& other = trace["otherData"];
  EXPECT_EQ(other["host"], "gpu-node-7");
  EXPECT_EQ(other["xtrace_version"], "0.1.0-test");
  EXPECT_EQ(other["kernel_release"], "6.18.0-test");
  EXPECT_EQ(other["boot_id"], "0f3c1d2e-aaaa-bbbb-cccc-0123456789ab");
  EXPECT_EQ(other["command_line"], "xtrace record -o run.capnp -- python train.py");
  EXPECT_EQ(other["clock"], "CLOCK_MONOTONIC");
  EXPECT_EQ(other["start_realtime_ns"], "1763000000000000789");
  EXPECT_EQ(other["capture_complete"], "true");
  EXPECT_EQ(other["dropped_records"], "7");
  EXPECT_FALSE(other.contains("damage"));
}

TEST(ConverterTest, NamespacePidIsShownWhenItDiffers) {
  ScratchDir dir;
  const std::string in = dir.File("run.capnp");
  {
    auto writer = LogWriter::Create(in, SampleHeader());
    ASSERT_TRUE(writer.ok());
    StringTable& s = (*writer)->strings();
    (*writer)->Append(ProcessInfo{.pid = 90001,
                                  .ns_pid = 7,
                                  .comm = s.Intern("vllm"),
                                  .command_line = 0,
                                  .cgroup = s.Intern("/kubepods/pod1/" + std::string(64, 'e')),
                                  .container_id = s.Intern(std::string(64, 'e'))});
    (*writer)->Append(ProcessInfo{
        .pid = 90002, .ns_pid = 0, .comm = 0, .command_line = s.Intern("/usr/bin/app -x")});
    (*writer)->Append(ProcessInfo{.pid = 90003, .ns_pid = 0, .comm = 0, .command_line = 0});
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  const std::string out = dir.File("run.json");
  ASSERT_TRUE(ConvertLog(in, out, {}, nullptr).ok());
  const auto processes = Find(ParseFile(out), "M", "process_name");
  ASSERT_EQ(processes.size(), 2u);  // a process with no name at all gets no metadata
  EXPECT_EQ(processes[0]["args"]["name"], "vllm (pid 7 in its namespace)");
  EXPECT_FALSE(processes[0]["args"].contains("command_line"));  // none recorded
  EXPECT_EQ(processes[0]["args"]["container_id"], std::string(64, 'e'));
  EXPECT_EQ(processes[0]["args"]["cgroup"], "/kubepods/pod1/" + std::string(64, 'e'));
  EXPECT_EQ(processes[1]["args"]["name"], "/usr/bin/app -x");
  EXPECT_FALSE(processes[1]["args"].contains("container_id"));
}

// `env A=1 python3 ...`: the process is labelled python3 in both formats, and the exec from
// env is an instant on its track at the exec's time.
TEST(ConverterTest, AProcessThatExecdIsLabelledWithItsLastNameAndShowsTheExec) {
  ScratchDir dir;
  const std::string in = dir.File("run.capnp");
  constexpr uint64_t kExecNs = 5'000'000'050'000;
  {
    auto writer = LogWriter::Create(in, SampleHeader());
    ASSERT_TRUE(writer.ok());
    StringTable& s = (*writer)->strings();
    (*writer)->Append(ProcessInfo{.pid = kPid, .ns_pid = kPid, .comm = s.Intern("env"),
                                  .command_line = s.Intern("env A=1 python3 a.py")});
    (*writer)->Append(ProcessInfo{.pid = kPid, .ns_pid = kPid, .comm = s.Intern("python3"),
                                  .command_line = s.Intern("python3 a.py"), .exec_ns = kExecNs});
    (*writer)->Append(ThreadInfo{.pid = kPid, .tid = kMainTid, .name = s.Intern("python3")});
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  ASSERT_TRUE(ConvertLog(in, dir.File("run.json"), {}, nullptr).ok());
  const nlohmann::json trace = ParseFile(dir.File("run.json"));
  const auto names = Find(trace, "M", "process_name");
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names.back()["args"]["name"], "python3") << "viewers keep the last name";
  EXPECT_EQ(names.back()["args"]["command_line"], "python3 a.py");
  const auto execs = Find(trace, "i", "exec: env -> python3");
  ASSERT_EQ(execs.size(), 1u);
  EXPECT_EQ(execs[0]["pid"], kPid);
  EXPECT_EQ(execs[0]["s"], "p");
  EXPECT_EQ(test_util::JsonNs(execs[0]["ts"]), kExecNs);
  EXPECT_EQ(execs[0]["args"]["was"], "env");

  ConvertOptions options;
  options.format = TraceFormat::kPerfetto;
  ASSERT_TRUE(ConvertLog(in, dir.File("run.pftrace"), options, nullptr).ok());
  test_util::PerfettoTraceReader pf(ReadFileBytes(dir.File("run.pftrace")));
  for (const std::string& e : pf.errors) ADD_FAILURE() << e;
  const auto* process = pf.FindTrack("python3");
  ASSERT_NE(process, nullptr);
  EXPECT_TRUE(process->is_process);
  EXPECT_EQ(pf.FindTrack("env"), nullptr) << "the process track was renamed, not duplicated";
  int exec_instants = 0;
  for (const auto& e : pf.events) {
    if (e.name != "exec: env -> python3") continue;
    ++exec_instants;
    EXPECT_EQ(e.type, 3u);
    EXPECT_EQ(e.ts, kExecNs);
    EXPECT_EQ(e.track, process->uuid);
  }
  EXPECT_EQ(exec_instants, 1);
}

TEST(ConverterTest, IncompleteLogConvertsWithoutSalvage) {
  ScratchDir dir;
  const std::string in = dir.File("killed.capnp");
  const std::string out = dir.File("killed.json");
  WriteSampleCapture(in, /*finish=*/false);
  ConvertStats stats;
  ASSERT_TRUE(ConvertLog(in, out, {}, &stats).ok());
  EXPECT_FALSE(stats.complete);
  EXPECT_FALSE(stats.salvaged);
  EXPECT_EQ(stats.events_in, 7u);
  const nlohmann::json trace = ParseFile(out);
  EXPECT_EQ(trace["otherData"]["capture_complete"], "false");
  EXPECT_FALSE(trace["otherData"].contains("dropped_records"));
}

TEST(ConverterTest, TruncatedLogFailsWithoutSalvageAndLeavesNoOutput) {
  ScratchDir dir;
  const std::string in = dir.File("run.capnp");
  WriteSampleCapture(in, /*finish=*/false, /*events_per_batch=*/3);  // batches of 3, 3, 1
  const std::string bytes = ReadFileBytes(in);
  WriteFileBytes(in, bytes.substr(0, bytes.size() - 5));  // cut into the last batch
  const std::string out = dir.File("run.json");

  ConvertStats stats;
  const Status st = ConvertLog(in, out, {}, &stats);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), in + ": batch 3 (at byte "));
  EXPECT_TRUE(Contains(st.message(), "truncated message (need "));
  EXPECT_EQ(stats.damage, st.message());
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(ConverterTest, SalvageConvertsEveryCompleteBatch) {
  ScratchDir dir;
  const std::string in = dir.File("run.capnp");
  WriteSampleCapture(in, /*finish=*/false, /*events_per_batch=*/3);
  const std::string bytes = ReadFileBytes(in);
  WriteFileBytes(in, bytes.substr(0, bytes.size() - 5));
  const std::string out = dir.File("run.json");

  ConvertStats stats;
  ConvertOptions options;
  options.salvage = true;
  const Status st = ConvertLog(in, out, options, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(stats.salvaged);
  EXPECT_FALSE(stats.complete);
  EXPECT_EQ(stats.events_in, 6u);  // the two complete batches
  EXPECT_TRUE(Contains(stats.damage, in + ": batch 3 (at byte "));

  const nlohmann::json trace = ParseFile(out);
  EXPECT_EQ(Find(trace, "X", "gemm_f32").size(), 1u);
  EXPECT_EQ(Find(trace, "X", "kernel@0x7777").size(), 1u);
  EXPECT_TRUE(Find(trace, "X", "kernel@0x555500002000").empty());  // was in batch 3
  EXPECT_EQ(trace["otherData"]["damage"], stats.damage);
  EXPECT_EQ(trace["otherData"]["capture_complete"], "false");
}

TEST(ConverterTest, MissingInputFailsAndCreatesNoOutput) {
  ScratchDir dir;
  const std::string in = dir.File("missing.capnp");
  const std::string out = dir.File("missing.json");
  const Status st = ConvertLog(in, out, {}, nullptr);
  EXPECT_EQ(st.message(), in + ": No such file or directory");
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(ConverterTest, UnwritableOutputIsReported) {
  XTRACE_REQUIRE_DEV_FULL();
  ScratchDir dir;
  const std::string in = dir.File("run.capnp");
  WriteSampleCapture(in, /*finish=*/true);
  const Status st = ConvertLog(in, "/dev/full", {}, nullptr);
  EXPECT_EQ(st.message(), "writing /dev/full: No space left on device");
  // The failed output is a device, not a half-written file: it must not be deleted.
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/full"));
}

TEST(ConverterTest, WritesToStandardOutput) {
  ScratchDir dir;
  const std::string in = dir.File("run.capnp");
  const std::string captured = dir.File("stdout.json");
  WriteSampleCapture(in, /*finish=*/true);

  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  FILE* file = std::fopen(captured.c_str(), "w");
  ASSERT_NE(file, nullptr);
  ::dup2(::fileno(file), STDOUT_FILENO);
  const Status st = ConvertLog(in, "-", {}, nullptr);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::fclose(file);

  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(Find(ParseFile(captured), "X", "gemm_f32").size(), 1u);
}

TEST(ConverterTest, ReportsProgress) {
  ScratchDir dir;
  const std::string in = dir.File("run.capnp");
  WriteSampleCapture(in, /*finish=*/true);
  uint64_t last_bytes = 0;
  std::optional<uint64_t> last_total;
  int calls = 0;
  ConvertOptions options;
  options.progress = [&](uint64_t bytes, std::optional<uint64_t> total) {
    ++calls;
    last_bytes = bytes;
    last_total = total;
  };
  ASSERT_TRUE(ConvertLog(in, dir.File("run.json"), options, nullptr).ok());
  EXPECT_GE(calls, 1);
  EXPECT_EQ(last_total, std::filesystem::file_size(in));
  EXPECT_EQ(last_bytes, std::filesystem::file_size(in));
}

// The sample capture plus what the other writers draw: a device with an engine, operations
// with flow arrows, memory counters, a DRM ioctl issued inside an API call, ITT spans.
void WriteTimelineCapture(const std::string& path) {
  auto writer = LogWriter::Create(path, SampleHeader(), {});
  ASSERT_TRUE(writer.ok());
  LogWriter& w = **writer;
  StringTable& s = w.strings();
  w.Append(ProcessInfo{.pid = kPid, .ns_pid = kPid, .comm = s.Intern("python3")});
  w.Append(ThreadInfo{.pid = kPid, .tid = kMainTid, .name = s.Intern("python3")});
  w.Append(DeviceInfo{0, s.Intern("Data Center GPU Max 1550"), 19'200'000, 32});
  w.Append(DeviceQueue{.pid = kPid, .device = 0, .handle = 0xa0, .track = 1});
  ApiCall execute{.pid = kPid, .tid = kMainTid, .start_ns = 1'000'000, .end_ns = 1'002'000, .fn = 1};
  w.Append(execute);
  w.Append(DrmFile{.pid = kPid, .fd = 5, .kind = DrmNodeKind::kRender,
                   .path = s.Intern("/dev/dri/renderD128"), .driver = s.Intern("xe")});
  w.Append(DrmIoctl{.pid = kPid, .tid = kMainTid, .start_ns = 1'001'000, .end_ns = 1'001'500,
                    .fd = 5, .cmd = 0x40386449, .name = s.Intern("DRM_IOCTL_XE_EXEC"),
                    .args = XeExecArgs{.exec_queue_id = 3}, .cause_start_ns = 1'000'000,
                    .cause = s.Intern("zeCommandQueueExecuteCommandLists")});
  for (uint64_t i = 0; i < 3; ++i) {
    DeviceOp op;
    op.pid = kPid;
    op.device = 0;
    op.queue = 0xa0;
    op.track = 1;
    op.id = i + 1;
    op.name = s.Intern(i == 1 ? "zeCommandListAppendMemoryCopy" : "gemm");
    op.kind = i == 1 ? DeviceOpKind::kCopy : DeviceOpKind::kKernel;
    op.start_ns = 1'010'000 + i * 20'000;
    op.end_ns = op.start_ns + 15'000;
    op.measured = i != 1;
    op.submit_tid = kMainTid;
    op.submit_ns = 1'000'000;
    op.sync_tid = kWorkerTid;
    op.sync_ns = 1'100'000;
    w.Append(op);
  }
  w.Append(ApiCall{.pid = kPid, .tid = kWorkerTid, .start_ns = 1'005'000, .end_ns = 1'100'000, .fn = 2});
  w.Append(MemoryUsage{1'000'500, 0, 0, 1 << 20, 4096, 0});
  w.Append(IttTask{.pid = kPid, .tid = kMainTid, .end_tid = kMainTid, .start_ns = 999'000,
                   .end_ns = 1'003'000, .domain = s.Intern("dnnl"), .name = s.Intern("matmul")});
  w.Append(IttTask{.pid = kPid, .tid = kMainTid, .end_tid = kWorkerTid, .start_ns = 999'500,
                   .end_ns = 1'200'000, .domain = s.Intern("app"), .name = s.Intern("step"),
                   .kind = IttTaskKind::kRegion, .id = 9});
  ASSERT_TRUE(w.Finish(SampleSummary()).ok());
}

TEST(ConverterTest, PerfettoTraceSaysWhatTheJsonSays) {
  ScratchDir dir;
  for (const bool timeline : {false, true}) {
    SCOPED_TRACE(timeline ? "timeline capture" : "sample capture");
    const std::string in = dir.File("run.capnp");
    if (timeline) {
      WriteTimelineCapture(in);
    } else {
      WriteSampleCapture(in, /*finish=*/true);
    }
    ConvertOptions options;
    options.format = TraceFormat::kPerfetto;
    ConvertStats stats;
    ASSERT_TRUE(ConvertLog(in, dir.File("run.pftrace"), options, &stats).ok());
    ASSERT_TRUE(ConvertLog(in, dir.File("run.json"), {}, nullptr).ok());
    EXPECT_EQ(stats.bytes_written, std::filesystem::file_size(dir.File("run.pftrace")));
    test_util::PerfettoTraceReader pf(ReadFileBytes(dir.File("run.pftrace")));
    for (const std::string& e : pf.errors) ADD_FAILURE() << e;
    for (const std::string& d : test_util::CompareJsonAndPerfetto(ParseFile(dir.File("run.json")), pf))
      ADD_FAILURE() << d;
    EXPECT_EQ(pf.clocks.at(3), SampleHeader().start_clock.monotonic_ns);
    EXPECT_EQ(pf.clocks.at(1), SampleHeader().start_clock.realtime_ns);
    ASSERT_EQ(pf.capture_facts.size(), 1u);
    EXPECT_EQ(pf.capture_facts[0].at("host"), SampleHeader().host);
    if (timeline) {
      const auto* gpu = pf.FindTrack("GPU 0: Data Center GPU Max 1550");
      ASSERT_NE(gpu, nullptr);
      EXPECT_EQ(pf.SlicesNamed("gemm").size(), 2u);
      for (const auto* op : pf.SlicesNamed("gemm")) EXPECT_EQ(pf.Root(op->track), gpu->uuid);
    }
  }
}

TEST(ConverterTest, FormatFollowsTheOutputName) {
  EXPECT_EQ(FormatForPath("run.pftrace"), TraceFormat::kPerfetto);
  EXPECT_EQ(FormatForPath("run.perfetto-trace"), TraceFormat::kPerfetto);
  EXPECT_EQ(FormatForPath("run.json"), TraceFormat::kChromeJson);
  EXPECT_EQ(FormatForPath("-"), TraceFormat::kChromeJson);
}

// The sample capture's log with another header: another machine, or a rotated file.
std::string WriteCaptureOf(const ScratchDir& dir, const std::string& name, LogHeader header,
                           int32_t rank = -1) {
  const std::string path = dir.File(name);
  auto writer = LogWriter::Create(path, header);
  EXPECT_TRUE(writer.ok());
  StringTable& s = (*writer)->strings();
  (*writer)->Append(ProcessInfo{.pid = kPid, .ns_pid = kPid, .comm = s.Intern("python3"), .rank = rank});
  (*writer)->Append(ThreadInfo{.pid = kPid, .tid = kWorkerTid, .name = s.Intern("ze-worker")});
  KernelLaunch launch;
  launch.pid = kPid;
  launch.tid = kWorkerTid;
  launch.start_ns = header.start_clock.monotonic_ns + 1'000'000;
  launch.end_ns = launch.start_ns + 500;
  launch.kernel_name = s.Intern("gemm_f32");
  (*writer)->Append(launch);
  EXPECT_TRUE((*writer)->Finish(SampleSummary()).ok());
  return path;
}

TEST(ConverterTest, LogsOfTwoMachinesShareOneTimelineWithPidsApart) {
  ScratchDir dir;
  LogHeader a = SampleHeader();
  LogHeader b = SampleHeader();
  b.host = "gpu-node-8";
  b.boot_id = "another-boot";
  // Node 8 booted 5 s later than node 7 (at the same wall-clock start, its monotonic clock
  // reads 5 s less).
  b.start_clock.monotonic_ns -= 5'000'000'000;
  const std::string in_a = WriteCaptureOf(dir, "a.capnp", a, 0);
  const std::string in_b = WriteCaptureOf(dir, "b.capnp", b, 1);
  const std::string out = dir.File("job.json");
  ConvertStats stats;
  ASSERT_TRUE(ConvertLogs({in_a, in_b}, out, {}, &stats).ok());
  EXPECT_EQ(stats.logs, 2u);
  EXPECT_EQ(stats.hosts, 2u);
  const nlohmann::json trace = ParseFile(out);
  const auto launches = Find(trace, "X", "gemm_f32");
  ASSERT_EQ(launches.size(), 2u);
  // The same wall-clock moment on both machines lands at the same trace time.
  EXPECT_EQ(launches[0]["ts"], launches[1]["ts"]);
  EXPECT_EQ(launches[0]["pid"], kPid);
  EXPECT_EQ(launches[1]["pid"], (1u << 22) | kPid);
  const auto processes = Find(trace, "M", "process_name");
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[0]["args"]["name"], "python3 (rank 0) [gpu-node-7]");
  EXPECT_EQ(processes[1]["args"]["name"], "python3 (rank 1) [gpu-node-8] (pid 4242)");
  EXPECT_EQ(processes[1]["args"]["rank"], "1");
  EXPECT_EQ(processes[1]["args"]["host"], "gpu-node-8");
  // Ranks in rank order, whatever their pids.
  const auto order = Find(trace, "M", "process_sort_index");
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0]["pid"], kPid);
  EXPECT_EQ(order[0]["args"]["sort_index"], 0);
  EXPECT_EQ(order[1]["pid"], (1u << 22) | kPid);
  EXPECT_EQ(order[1]["args"]["sort_index"], 1);
  EXPECT_TRUE(Contains(trace["otherData"]["clock_alignment"], "gpu-node-8 (boot another-boot): moved by 5000000000 ns"));
  EXPECT_EQ(trace["otherData"]["hosts"], "2");
  // The trace's facts are the job's, not the first log's: both hosts, the totals, and each
  // log's own command line and counts under its name.
  const nlohmann::json& other = trace["otherData"];
  EXPECT_EQ(other["host"], "gpu-node-7, gpu-node-8");
  EXPECT_EQ(other["events"], "24690");
  EXPECT_EQ(other["dropped_records"], "14");
  EXPECT_EQ(other["capture_complete"], "true");
  EXPECT_FALSE(other.contains("command_line")) << other;
  EXPECT_EQ(other["log 2"], in_b + " (host gpu-node-8, boot another-boot, command " + b.command_line +
                                ", 12345 events, 7 dropped)");
  EXPECT_EQ(other["start_realtime_ns"], std::to_string(a.start_clock.realtime_ns));
  // Node 8's realtime clock moved against its monotonic one during its log by what its
  // summary's end reading says.
  const LogSummary end = SampleSummary();
  const int64_t drift = int64_t(end.end_clock.realtime_ns - end.end_clock.monotonic_ns) -
                        int64_t(b.start_clock.realtime_ns - b.start_clock.monotonic_ns);
  EXPECT_TRUE(Contains(other["clock_alignment"], ", plus " + std::to_string(std::llabs(drift)) +
                                                     " ns by which its realtime clock moved against its monotonic clock"))
      << other["clock_alignment"];
}

TEST(ConverterTest, RotatedFilesOfOneCaptureNameEachProcessOnce) {
  ScratchDir dir;
  LogHeader second = SampleHeader();
  second.start_clock.monotonic_ns += 10'000'000;
  const std::string first = WriteCaptureOf(dir, "xtrace-1.capnp", SampleHeader());
  WriteCaptureOf(dir, "xtrace-2.capnp", second);
  const std::string out = dir.File("all.json");
  ConvertStats stats;
  ASSERT_TRUE(ConvertLogs({first, dir.File("xtrace-2.capnp")}, out, {}, &stats).ok());
  EXPECT_EQ(stats.hosts, 1u);
  const nlohmann::json trace = ParseFile(out);
  EXPECT_EQ(Find(trace, "M", "process_name").size(), 1u);
  EXPECT_EQ(Find(trace, "M", "thread_name").size(), 1u);
  EXPECT_EQ(Find(trace, "X", "gemm_f32").size(), 2u);
  EXPECT_EQ(Find(trace, "X", "gemm_f32")[0]["pid"], kPid) << "one boot: pids as they are";
  EXPECT_TRUE(Contains(trace["otherData"]["clock_alignment"], "share CLOCK_MONOTONIC exactly"));
}

TEST(ConverterTest, WindowPidAndRankSelectWhatIsKept) {
  ScratchDir dir;
  const std::string in = dir.File("run.capnp");
  WriteSampleCapture(in, /*finish=*/true);
  const uint64_t start = SampleHeader().start_clock.monotonic_ns;
  // Launches at 5e12 + 100'001, + 200'000 and + 300'000 ns; the window holds the second.
  ConvertOptions options;
  options.selection.from = TimeBound{TimeBound::Kind::kSinceStart, 5'000'000'150'000 - start};
  options.selection.to = TimeBound{TimeBound::Kind::kSinceStart, 5'000'000'250'000 - start};
  const std::string out = dir.File("window.json");
  ConvertStats stats;
  ASSERT_TRUE(ConvertLog(in, out, options, &stats).ok());
  nlohmann::json trace = ParseFile(out);
  EXPECT_EQ(Find(trace, "X").size(), 1u);
  EXPECT_EQ(Find(trace, "X", "kernel@0x7777").size(), 1u);
  EXPECT_EQ(Find(trace, "M", "process_name").size(), 1u);
  EXPECT_EQ(trace["otherData"]["window_from_monotonic_ns"], "5000000150000");

  options = {};
  options.selection.pids = {kPid + 1};
  ASSERT_TRUE(ConvertLog(in, out, options, &stats).ok());
  trace = ParseFile(out);
  EXPECT_EQ(Find(trace, "X").size(), 0u);
  EXPECT_EQ(Find(trace, "M", "process_name").size(), 0u) << "no events, no name";

  options = {};
  options.selection.ranks = {0};
  ASSERT_TRUE(ConvertLog(in, out, options, &stats).ok());
  EXPECT_EQ(Find(ParseFile(out), "X").size(), 0u) << "the sample's process has no rank";
  const std::string ranked = WriteCaptureOf(dir, "ranked.capnp", SampleHeader(), 0);
  ASSERT_TRUE(ConvertLog(ranked, out, options, &stats).ok());
  EXPECT_EQ(Find(ParseFile(out), "X").size(), 1u);
}

// A selection that keeps nothing of the traced processes is told apart from one that keeps
// something, and the stats say which processes the log holds, for the warning that says so.
TEST(ConverterTest, ASelectionThatKeepsNothingIsCountedWithTheProcessesHeld) {
  ScratchDir dir;
  const std::string in = dir.File("run.capnp");
  WriteSampleCapture(in, /*finish=*/true);
  const std::string out = dir.File("out.json");
  const uint64_t start = SampleHeader().start_clock.monotonic_ns;
  auto convert = [&](auto select) {
    ConvertOptions options;
    select(options.selection);
    ConvertStats stats;
    EXPECT_TRUE(ConvertLog(in, out, options, &stats).ok());
    return stats;
  };
  const ConvertStats other_pid = convert([](EventSelection& s) { s.pids = {999999}; });
  EXPECT_EQ(other_pid.selected_kept, 0u);
  ASSERT_EQ(other_pid.processes.size(), 1u);
  EXPECT_EQ(other_pid.processes.begin()->first, kPid);
  EXPECT_EQ(other_pid.processes.begin()->second.name, "python3");
  EXPECT_EQ(other_pid.logged_ns.value_or(0), SampleSummary().end_clock.monotonic_ns - start);
  EXPECT_GT(convert([](EventSelection& s) { s.pids = {kPid}; }).selected_kept, 0u);
  EXPECT_EQ(convert([](EventSelection& s) { s.name = std::regex("no such kernel"); }).selected_kept, 0u);
  EXPECT_GT(convert([](EventSelection& s) { s.name = std::regex("gemm"); }).selected_kept, 0u);
  // The launches are 4000 s after the start: a window of the first second holds none.
  EXPECT_EQ(convert([](EventSelection& s) {
              s.to = TimeBound{TimeBound::Kind::kSinceStart, 1'000'000'000};
            }).selected_kept,
            0u);
  EXPECT_GT(convert([&](EventSelection& s) {
              s.from = TimeBound{TimeBound::Kind::kSinceStart, 5'000'000'150'000 - start};
            }).selected_kept,
            0u);
}

TEST(ConverterTest, GzipOutputIsThePlainOutputCompressed) {
  ScratchDir dir;
  const std::string in = dir.File("run.capnp");
  WriteSampleCapture(in, /*finish=*/true);
  for (const std::string plain : {"run.json", "run.pftrace"}) {
    ConvertOptions options;
    options.format = FormatForPath(plain);
    ASSERT_TRUE(ConvertLog(in, dir.File(plain), options, nullptr).ok());
    ConvertStats stats;
    options.format = FormatForPath(plain + ".gz");
    ASSERT_TRUE(ConvertLog(in, dir.File(plain + ".gz"), options, &stats).ok());
    EXPECT_EQ(FormatForPath(plain + ".gz"), FormatForPath(plain));
    const std::string compressed = ReadFileBytes(dir.File(plain + ".gz"));
    ASSERT_GE(compressed.size(), 2u);
    EXPECT_EQ(compressed.substr(0, 2), "\x1f\x8b") << "a gzip member";
    EXPECT_EQ(stats.bytes_written, compressed.size());
    std::string unpacked(ReadFileBytes(dir.File(plain)).size() + 1, '\0');
    uLongf size = unpacked.size();
    z_stream z{};
    ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
    z.avail_in = static_cast<uInt>(compressed.size());
    z.next_out = reinterpret_cast<Bytef*>(unpacked.data());
    z.avail_out = static_cast<uInt>(size);
    EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
    unpacked.resize(z.total_out);
    inflateEnd(&z);
    EXPECT_EQ(unpacked, ReadFileBytes(dir.File(plain))) << plain;
  }
}

TEST(ConverterTest, ManyLogErrorsNameTheFile) {
  ScratchDir dir;
  const std::string good = dir.File("good.capnp");
  WriteSampleCapture(good, /*finish=*/true);
  const std::string bad = dir.File("bad.capnp");
  WriteFileBytes(bad, "not a log");
  const Status st = ConvertLogs({good, bad}, dir.File("out.json"), {}, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), bad));
  EXPECT_FALSE(std::filesystem::exists(dir.File("out.json")));
}

}  // namespace
}  // namespace xtrace

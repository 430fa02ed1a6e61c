// Tests for export/ze_export through the converter: Level Zero events written to a log come
// out as Chrome trace events with the right names, times, arguments and flags.
#include "export/ze_export.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "export/converter.h"
#include "kineto_checks.h"
#include "log/log_writer.h"
#include "log_test_util.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

using test_util::ReadFileBytes;
using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

nlohmann::json Convert(const ScratchDir& dir, const std::function<void(LogWriter&)>& write) {
  const std::string log = dir.File("in.capnp"), json = dir.File("out.json");
  {
    auto writer = LogWriter::Create(log, SampleHeader());
    EXPECT_TRUE(writer.ok());
    write(**writer);
    EXPECT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  Status st = ConvertLogToChromeJson(log, json, {}, nullptr);
  EXPECT_TRUE(st.ok()) << st.message();
  return nlohmann::json::parse(ReadFileBytes(json));
}

std::vector<nlohmann::json> Named(const nlohmann::json& trace, const std::string& name) {
  std::vector<nlohmann::json> found;
  for (const auto& e : trace["traceEvents"])
    if (e.value("name", "") == name) found.push_back(e);
  return found;
}

TEST(ZeExport, ApiCallsAreCompleteEventsWithNamedArguments) {
  ScratchDir dir;
  auto trace = Convert(dir, [](LogWriter& w) {
    ApiCall copy;
    copy.pid = 10;
    copy.tid = 11;
    copy.start_ns = 2'000'001'500;
    copy.end_ns = 2'000'004'000;
    copy.fn = XT_ZE_APPEND_MEMORY_COPY;
    const uint64_t args[] = {0xc1, 0xe1, 2, 0xd57, 0x5c, 4096};
    std::copy(std::begin(args), std::end(args), copy.arg);
    w.Append(copy);
    ApiCall sync;
    sync.pid = 10;
    sync.tid = 12;
    sync.start_ns = 2'000'010'000;
    sync.end_ns = 2'000'010'000;
    sync.fn = XT_ZE_EVENT_HOST_SYNCHRONIZE;
    sync.result = 1;  // ZE_RESULT_NOT_READY
    sync.arg[0] = 0xe1;
    sync.args_unreadable = true;
    w.Append(sync);
    ApiCall future;
    future.fn = 999;  // a function a newer xtrace records
    future.arg[5] = 0x77;
    future.start_ns = 2'000'020'000;
    future.end_ns = 2'000'020'100;
    w.Append(future);
  });
  auto copies = Named(trace, "zeCommandListAppendMemoryCopy");
  ASSERT_EQ(copies.size(), 1u);
  const auto& c = copies[0];
  EXPECT_EQ(c["ph"], "X");
  EXPECT_EQ(c["cat"], "xpu_runtime");
  EXPECT_EQ(c["args"]["correlation"], 1);  // an append may submit: it takes a correlation
  EXPECT_EQ(c["pid"], 10);
  EXPECT_EQ(c["tid"], 11);
  EXPECT_DOUBLE_EQ(c["ts"].get<double>(), 2'000'001.5);
  EXPECT_DOUBLE_EQ(c["dur"].get<double>(), 2.5);
  EXPECT_EQ(c["args"]["command_list"], "0xc1");
  EXPECT_EQ(c["args"]["signal_event"], "0xe1");
  EXPECT_EQ(c["args"]["num_wait_events"], 2);
  EXPECT_EQ(c["args"]["size"], 4096);
  EXPECT_FALSE(c["args"].contains("result"));

  auto syncs = Named(trace, "zeEventHostSynchronize");
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0]["args"]["result"], 1);
  EXPECT_EQ(syncs[0]["args"]["result_name"], "ZE_RESULT_NOT_READY");
  EXPECT_EQ(syncs[0]["args"]["args_unreadable"], true);
  EXPECT_EQ(syncs[0]["args"].size(), 5u);  // event, timeout, result, result_name, flag

  auto unknown = Named(trace, "ze function 999");
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0]["args"]["arg5"], "0x77");
}

TEST(ZeExport, AnUnfinishedCallIsASliceToItsThreadsEndSayingHowItEnded) {
  ScratchDir dir;
  auto trace = Convert(dir, [](LogWriter& w) {
    UnfinishedCall killed;
    killed.pid = 10;
    killed.tid = 12;
    killed.start_ns = 2'000'000'000;
    killed.end_ns = 2'300'000'000;
    killed.function = w.strings().Intern("zeFenceHostSynchronize");
    killed.signal = 9;
    w.Append(killed);
    UnfinishedCall exited = killed;
    exited.tid = 13;
    exited.signal = 0;
    w.Append(exited);
    UnfinishedCall at_stop = exited;
    at_stop.tid = 14;
    at_stop.capture_ended = true;
    w.Append(at_stop);
  });
  auto slices = Named(trace, "zeFenceHostSynchronize (unfinished)");
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[2]["args"]["unfinished"], "still inside the call when the capture stopped");
  EXPECT_EQ(slices[0]["ph"], "X");
  EXPECT_EQ(slices[0]["cat"], "xpu_runtime");
  EXPECT_EQ(slices[0]["tid"], 12);
  EXPECT_DOUBLE_EQ(slices[0]["ts"].get<double>(), 2'000'000.0);
  EXPECT_DOUBLE_EQ(slices[0]["dur"].get<double>(), 300'000.0);
  EXPECT_EQ(slices[0]["args"]["unfinished"], "its process was killed by SIGKILL inside the call");
  EXPECT_FALSE(slices[0]["args"].contains("result"));  // it never returned one
  EXPECT_EQ(slices[1]["args"]["unfinished"], "its thread (or its process) exited inside the call");
  EXPECT_TRUE(Named(trace, "zeFenceHostSynchronize").empty());
}

TEST(ZeExport, FailedKernelCreationNamesItsResult) {
  ScratchDir dir;
  auto trace = Convert(dir, [](LogWriter& w) {
    KernelCreate k;
    k.name = w.strings().Intern("xt_no_such_kernel");
    k.result = 0x78000011;
    w.Append(k);
    KernelLaunch l;
    l.kernel_name = k.name;
    l.launch_kind = XT_LAUNCH_COOPERATIVE;
    w.Append(l);
  });
  auto creates = Named(trace, "zeKernelCreate");
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(creates[0]["args"]["result_name"], "ZE_RESULT_ERROR_INVALID_KERNEL_NAME");
  auto launches = Named(trace, "xt_no_such_kernel");
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0]["args"]["launch"], "cooperative");
}

// The 1.14 launches say which they were, as the cooperative and indirect ones do.
TEST(ZeExport, LaunchesWithArgumentsAndWithParametersSayWhichTheyWere) {
  ScratchDir dir;
  auto trace = Convert(dir, [](LogWriter& w) {
    KernelCreate k;
    k.name = w.strings().Intern("softmax");
    w.Append(k);
    for (uint8_t kind : {uint8_t{XT_LAUNCH_WITH_ARGUMENTS}, uint8_t{XT_LAUNCH_WITH_PARAMETERS}}) {
      KernelLaunch l;
      l.kernel_name = k.name;
      l.launch_kind = kind;
      l.start_ns = 1000 * kind;
      w.Append(l);
    }
  });
  auto launches = Named(trace, "softmax");
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0]["args"]["launch"], "with arguments");
  EXPECT_EQ(launches[1]["args"]["launch"], "with parameters");
}

std::vector<nlohmann::json> Phase(const nlohmann::json& trace, const std::string& ph) {
  std::vector<nlohmann::json> found;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == ph) found.push_back(e);
  return found;
}

TEST(ZeExport, DevicesGetAProcessWithATrackPerEngineAndFlowArrows) {
  ScratchDir dir;
  auto trace = Convert(dir, [](LogWriter& w) {
    w.Append(DeviceInfo{0, w.strings().Intern("Data Center GPU Max 1550"), 19'200'000, 32});
    ApiCall execute;
    execute.pid = 42;
    execute.tid = 43;
    execute.start_ns = 1'000'001'000;
    execute.end_ns = 1'000'002'000;
    execute.fn = XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS;
    w.Append(execute);
    w.Append(DeviceQueue{.pid = 42, .device = 0, .handle = 0xa0, .immediate = false,
                         .ordinal = 0, .index = 1, .track = 1});
    // Made before the attach, its engine unknown: no ordinal and index claimed.
    w.Append(DeviceQueue{.pid = 42, .device = 0, .handle = 0xb0, .immediate = true,
                         .ordinal = 0, .index = 0, .track = 2, .engine_unknown = true});
    DeviceOp op;
    op.pid = 42;
    op.device = 0;
    op.queue = 0xa0;
    op.track = 1;
    op.command_list = 0xc1;
    op.id = 7;
    op.name = w.strings().Intern("gemm");
    op.start_ns = 1'000'010'000;
    op.end_ns = 1'000'030'000;
    op.measured = true;
    op.start_ticks = 100;
    op.end_ticks = 484;
    op.submit_tid = 43;
    op.submit_ns = 1'000'001'000;
    op.sync_tid = 44;
    op.sync_ns = 1'000'050'000;
    op.execution = 3;
    op.group_count[0] = 8;
    w.Append(op);
    DeviceOp copy = op;
    copy.id = 8;
    copy.kind = DeviceOpKind::kCopy;
    copy.name = w.strings().Intern("zeCommandListAppendMemoryCopy");
    copy.measured = false;
    copy.completion_seen = false;
    copy.bytes = 4096;
    copy.device = kUnknownDevice;
    w.Append(copy);
    w.Append(MemoryUsage{1'000'000'000, 0, 0, 1 << 20, 4096, 0});
    w.Append(MemoryUsage{1'000'000'500, 42, kUnknownDevice, 0, 0, 300});
  });
  const int64_t gpu0 = 0x40000000;
  bool named = false, tracked = false, unknown_tracked = false;
  for (const auto& m : Phase(trace, "M")) {
    if (m["name"] == "process_name" && m["pid"] == gpu0) {
      EXPECT_EQ(m["args"]["name"], "GPU 0: Data Center GPU Max 1550");
      named = true;
    }
    if (m["name"] == "thread_name" && m["pid"] == gpu0 && m["tid"] == 1) {
      EXPECT_EQ(m["args"]["name"], "queue 0xa0 (ordinal 0, index 1) of pid 42");
      tracked = true;
    }
    if (m["name"] == "thread_name" && m["pid"] == gpu0 && m["tid"] == 2) {
      EXPECT_EQ(m["args"]["name"], "immediate list 0xb0 (engine unknown: made before the attach) of pid 42");
      unknown_tracked = true;
    }
  }
  EXPECT_TRUE(named);
  EXPECT_TRUE(tracked);
  EXPECT_TRUE(unknown_tracked);

  auto gemm = Named(trace, "gemm");
  ASSERT_EQ(gemm.size(), 1u);
  EXPECT_EQ(gemm[0]["pid"], gpu0);
  EXPECT_EQ(gemm[0]["tid"], 1);
  EXPECT_EQ(gemm[0]["cat"], "kernel");
  EXPECT_EQ(gemm[0]["args"]["correlation"], 1);  // the execute's
  EXPECT_EQ(gemm[0]["args"]["device"], 0);
  EXPECT_EQ(gemm[0]["args"]["stream"], 1);
  EXPECT_DOUBLE_EQ(gemm[0]["ts"].get<double>(), 1'000'010.0);
  EXPECT_DOUBLE_EQ(gemm[0]["dur"].get<double>(), 20.0);
  EXPECT_EQ(gemm[0]["args"]["timing"], "measured");
  EXPECT_EQ(gemm[0]["args"]["id"], 7);
  EXPECT_EQ(gemm[0]["args"]["execution"], 3);
  EXPECT_EQ(gemm[0]["args"]["start_ticks"], 100);
  EXPECT_EQ(gemm[0]["args"]["group_count_x"], 8);

  auto copies = Named(trace, "zeCommandListAppendMemoryCopy");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]["pid"], gpu0 + 0xffff);  // unknown device: a process of its own
  EXPECT_EQ(copies[0]["cat"], "gpu_memcpy");
  EXPECT_EQ(copies[0]["args"]["device"], -1);
  EXPECT_EQ(copies[0]["args"]["correlation"], 1);  // submitted by the same execute
  EXPECT_EQ(copies[0]["args"]["timing"], "estimated");
  EXPECT_EQ(copies[0]["args"]["bytes"], 4096);
  EXPECT_EQ(copies[0]["args"]["completion"], "not seen by the host");
  EXPECT_FALSE(copies[0]["args"].contains("start_ticks"));

  // gemm: the launch arrow (ac2g, id = correlation) and the wait arrow (2^48 + id); the copy
  // was never seen complete: its launch arrow only, the same id again.
  const uint64_t base = uint64_t{1} << 48;
  auto starts = Phase(trace, "s"), ends = Phase(trace, "f");
  ASSERT_EQ(starts.size(), 3u);
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(starts[0]["id"], 1);
  EXPECT_EQ(starts[0]["cat"], "ac2g");
  EXPECT_EQ(starts[0]["name"], "ac2g");
  EXPECT_EQ(starts[0]["pid"], 42);
  EXPECT_EQ(starts[0]["tid"], 43);
  EXPECT_DOUBLE_EQ(starts[0]["ts"].get<double>(), 1'000'001.0);
  EXPECT_EQ(ends[0]["id"], 1);
  EXPECT_EQ(ends[0]["pid"], gpu0);
  EXPECT_EQ(ends[0]["bp"], "e");
  EXPECT_EQ(starts[1]["id"], base + 7);
  EXPECT_EQ(starts[1]["cat"], "ze.flow");
  EXPECT_EQ(starts[1]["pid"], gpu0);
  EXPECT_EQ(ends[1]["id"], base + 7);
  EXPECT_EQ(ends[1]["tid"], 44);
  EXPECT_DOUBLE_EQ(ends[1]["ts"].get<double>(), 1'000'049.999);  // inside the sync call
  EXPECT_EQ(starts[2]["id"], 1);
  EXPECT_EQ(ends[2]["id"], 1);
  EXPECT_EQ(ends[2]["pid"], gpu0 + 0xffff);

  auto counters = Phase(trace, "C");
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[0]["name"], "memory in use");
  EXPECT_EQ(counters[0]["pid"], gpu0);
  EXPECT_EQ(counters[0]["args"]["device"], 1 << 20);
  EXPECT_EQ(counters[0]["args"]["shared"], 4096);
  EXPECT_EQ(counters[1]["pid"], 42);
  EXPECT_EQ(counters[1]["args"]["host"], 300);
}

// What Holistic Trace Analysis and TensorBoard read (docs/kineto-json.md): every device
// operation joins exactly one host call by its integer correlation, one id per submitting
// call across processes, and the trace opens with the devices and the rank.
TEST(ZeExport, FollowsKinetoConventions) {
  ScratchDir dir;
  const std::string log = dir.File("in.capnp"), json = dir.File("out.json");
  {
    auto writer = LogWriter::Create(log, SampleHeader());
    ASSERT_TRUE(writer.ok());
    LogWriter& w = **writer;
    w.Append(ProcessInfo{.pid = 42, .comm = w.strings().Intern("trainer"), .rank = 3,
                         .world_size = 8});
    w.Append(DeviceInfo{0, w.strings().Intern("Data Center GPU Max 1550"), 19'200'000, 32});
    // Two processes launch at the same instant on threads of the same number: two ids.
    for (uint32_t pid : {42u, 77u}) {
      KernelLaunch launch;
      launch.pid = pid;
      launch.tid = 43;
      launch.start_ns = 1'000'001'000;
      launch.end_ns = 1'000'002'000;
      launch.kernel_name = w.strings().Intern("gemm");
      w.Append(launch);
    }
    for (uint32_t pid : {77u, 42u}) {
      DeviceOp op;
      op.pid = pid;
      op.device = 0;
      op.track = pid == 42 ? 1 : 2;
      op.id = pid;
      op.name = w.strings().Intern("gemm");
      op.start_ns = 1'000'010'000;
      op.end_ns = 1'000'020'000;
      op.submit_tid = 43;
      op.submit_ns = 1'000'001'000;
      w.Append(op);
    }
    DeviceOp orphan;  // submitted before the capture began
    orphan.pid = 42;
    orphan.device = 0;
    orphan.track = 1;
    orphan.id = 99;
    orphan.kind = DeviceOpKind::kFill;
    orphan.name = w.strings().Intern("zeCommandListAppendMemoryFill");
    orphan.start_ns = 1'000'030'000;
    orphan.end_ns = 1'000'031'000;
    w.Append(orphan);
    ASSERT_TRUE(w.Finish(SampleSummary()).ok());
  }
  ASSERT_TRUE(ConvertLogToChromeJson(log, json, {}, nullptr).ok());
  const std::string text = ReadFileBytes(json);
  const auto trace = nlohmann::json::parse(text);
  for (const std::string& p : test_util::KinetoConventionProblems(text, trace)) ADD_FAILURE() << p;

  std::map<uint64_t, uint64_t> launch_correlation_by_pid, op_correlation_by_pid;
  for (const auto& e : Named(trace, "gemm")) {
    const uint64_t correlation = e["args"]["correlation"];
    if (e["cat"] == "xpu_runtime") launch_correlation_by_pid[e["pid"]] = correlation;
    const uint64_t submitter = e["args"]["stream"] == 1 ? 42 : 77;  // tracks as written above
    if (e["cat"] == "kernel") op_correlation_by_pid[submitter] = correlation;
  }
  EXPECT_EQ(launch_correlation_by_pid, (std::map<uint64_t, uint64_t>{{42, 1}, {77, 2}}));
  EXPECT_EQ(op_correlation_by_pid, launch_correlation_by_pid);
  const auto fills = Named(trace, "zeCommandListAppendMemoryFill");
  ASSERT_EQ(fills.size(), 1u);
  EXPECT_EQ(fills[0]["cat"], "gpu_memset");
  EXPECT_EQ(fills[0]["args"]["correlation"], 0);  // HTA's "the linked call is not in the trace"

  EXPECT_EQ(trace["schemaVersion"], 1);
  EXPECT_EQ(trace["distributedInfo"]["rank"], 3);
  EXPECT_EQ(trace["distributedInfo"]["world_size"], 8);
  ASSERT_EQ(trace["deviceProperties"].size(), 1u);
  EXPECT_EQ(trace["deviceProperties"][0]["id"], 0);
  EXPECT_EQ(trace["deviceProperties"][0]["name"], "Data Center GPU Max 1550");
  // Wall time of an event = ts (µs) * 1000 + baseTimeNanoseconds.
  const ClockAnchor& clock = SampleHeader().start_clock;
  EXPECT_EQ(trace["baseTimeNanoseconds"], clock.realtime_ns - clock.monotonic_ns);
  // The rank is on the first line, where HTA's pattern "rank":\s+(\d+) finds it first.
  EXPECT_NE(text.substr(0, text.find('\n')).find("\"rank\": 3"), std::string::npos);
}

}  // namespace
}  // namespace xtrace

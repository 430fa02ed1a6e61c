// Tests for export/ze_export through the converter: Level Zero events written to a log come
// out as Chrome trace events with the right names, times, arguments and flags.
#include "export/ze_export.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "export/converter.h"
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
  EXPECT_EQ(c["cat"], "ze");
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

}  // namespace
}  // namespace xtrace

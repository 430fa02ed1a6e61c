// Tests of the trace description read ahead of a conversion: devices and ranks.
#include "export/trace_description.h"

#include <gtest/gtest.h>

#include "log/log_writer.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

TEST(TraceDescriptionTest, DevicesByIndexAndTheRanksProcessesRecorded) {
  ScratchDir dir;
  const std::string log = dir.File("in.capnp");
  {
    auto writer = LogWriter::Create(log, SampleHeader());
    ASSERT_TRUE(writer.ok());
    LogWriter& w = **writer;
    w.Append(DeviceInfo{1, w.strings().Intern("GPU B"), 1000, 64});
    w.Append(DeviceInfo{0, w.strings().Intern("GPU A"), 19'200'000, 32});
    w.Append(ProcessInfo{.pid = 5, .rank = 2, .world_size = 4});
    w.Append(ProcessInfo{.pid = 6});  // no rank
    w.Append(ProcessInfo{.pid = 7, .rank = 2, .world_size = 4});
    ASSERT_TRUE(w.Finish(SampleSummary()).ok());
  }
  const TraceDescription d = DescribeLog(log, false);
  ASSERT_EQ(d.devices.size(), 2u);
  EXPECT_EQ(d.devices[0].id, 0u);
  EXPECT_EQ(d.devices[0].name, "GPU A");
  EXPECT_EQ(d.devices[0].timer_hz, 19'200'000u);
  EXPECT_EQ(d.devices[0].kernel_timestamp_bits, 32u);
  EXPECT_EQ(d.devices[1].name, "GPU B");
  EXPECT_EQ(d.ranks, std::vector<int32_t>{2});
  EXPECT_EQ(d.world_size, 4);
}

TEST(TraceDescriptionTest, SeveralRanksAreAllListedAndDisagreeingSizesGiveNone) {
  StringTable strings;
  TraceDescriptionBuilder b;
  b.Add(ProcessInfo{.pid = 5, .rank = 3, .world_size = 4}, strings);
  b.Add(ProcessInfo{.pid = 6, .rank = 1, .world_size = 8}, strings);
  b.Add(ProcessInfo{.pid = 7, .rank = 3, .world_size = 4}, strings);
  const TraceDescription d = b.Build();
  EXPECT_EQ(d.ranks, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(d.world_size, std::nullopt);
}

TEST(TraceDescriptionTest, AnUnreadableLogDescribesNothing) {
  const TraceDescription d = DescribeLog("/nonexistent/xtrace.capnp", false);
  EXPECT_TRUE(d.devices.empty());
  EXPECT_TRUE(d.ranks.empty());
}

}  // namespace
}  // namespace xtrace

// Tests for log/ze_event_codec: the Level Zero events survive a write and a read with every
// field, next to the other kinds, in one log.
#include "log/ze_event_codec.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <vector>

#include "log/log_reader.h"
#include "log/log_writer.h"
#include "log_test_util.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

using test_util::ExpectSameEvent;
using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

std::vector<Event> RoundTrip(const std::vector<Event>& events, StringTable* strings_out = nullptr,
                             const std::function<void(StringTable&)>& intern = {}) {
  ScratchDir dir;
  const std::string path = dir.File("ze.capnp");
  {
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = 3});
    EXPECT_TRUE(writer.ok());
    if (intern) intern((*writer)->strings());
    for (const Event& e : events) (*writer)->Append(e);
    EXPECT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  auto reader = LogReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  std::vector<Event> read;
  Event e;
  while (true) {
    auto more = reader->Next(&e);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    read.push_back(e);
  }
  EXPECT_EQ(reader->unknown_events(), 0u);
  if (strings_out) {
    for (StringId id = 1; id < reader->strings().size(); ++id)
      strings_out->Intern(reader->strings().Get(id));
  }
  return read;
}

void ExpectRoundTrip(const std::vector<Event>& written) {
  const std::vector<Event> read = RoundTrip(written);
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < read.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    ExpectSameEvent(written[i], read[i]);
  }
}

TEST(ZeEventCodec, ApiCallsRoundTripWithEveryField) {
  ApiCall full;
  full.pid = 4'000'000;
  full.tid = 4'000'007;
  full.start_ns = 9'000'000'000'000'000'000u;
  full.end_ns = full.start_ns + 123'456'789;
  full.fn = XT_ZE_APPEND_MEMORY_COPY_REGION;
  full.result = 0x78000004;
  for (int i = 0; i < 6; ++i) full.arg[i] = 0xffff'0000'0000'0000u >> i;
  full.args_unreadable = true;
  full.truncated = true;
  full.learned = true;
  ApiCall minimal;
  minimal.fn = XT_ZE_INIT;
  ApiCall backwards = full;
  backwards.start_ns = std::numeric_limits<uint64_t>::max();
  backwards.end_ns = 1;
  backwards.result = -1;
  KernelLaunch launch;
  launch.start_ns = 5;
  launch.launch_kind = XT_LAUNCH_INDIRECT;
  ExpectRoundTrip({full, minimal, backwards, launch, full});
}

TEST(ZeEventCodec, UnfinishedCallsRoundTripWithEveryField) {
  UnfinishedCall killed;
  killed.pid = 4'000'000;
  killed.tid = 4'000'009;
  killed.start_ns = 9'000'000'000'000'000'000u;
  killed.end_ns = killed.start_ns + 300'000'000;
  killed.signal = 9;
  UnfinishedCall exited = killed;
  exited.signal = 0;
  exited.capture_ended = true;
  exited.start_ns = 12;
  exited.end_ns = 12;
  const std::vector<Event> written = {killed, exited};
  StringTable read_strings;
  const std::vector<Event> read = RoundTrip(written, &read_strings, [&](StringTable& strings) {
    const StringId name = strings.Intern("zeEventHostSynchronize");
    for (const Event& e : written) const_cast<UnfinishedCall&>(std::get<UnfinishedCall>(e)).function = name;
  });
  ASSERT_EQ(read.size(), 2u);
  for (size_t i = 0; i < read.size(); ++i) ExpectSameEvent(written[i], read[i]);
  EXPECT_EQ(read_strings.Get(std::get<UnfinishedCall>(read[0]).function), "zeEventHostSynchronize");
}

TEST(ZeEventCodec, DeviceEventsRoundTripWithEveryField) {
  // The writer's table gives the first strings ids 1 and 2.
  const StringId gemm = 1, gpu = 2;
  auto intern = [&](StringTable& s) {
    EXPECT_EQ(s.Intern("gemm<float>"), gemm);
    EXPECT_EQ(s.Intern("xtrace simulated GPU"), gpu);
  };
  std::vector<Event> written;
  {
    DeviceOp op;
    op.pid = 77;
    op.device = 1;
    op.queue = 0x5555'0000'1000;
    op.track = 3;
    op.command_list = 0x5555'0000'2000;
    op.id = 123'456;
    op.kind = DeviceOpKind::kFill;
    op.name = gemm;
    op.start_ns = 8'000'000'000'000'000'000u;
    op.end_ns = op.start_ns + 60'123;
    op.measured = true;
    op.completion_seen = false;
    op.start_ticks = 0xffff'ffff'0000'0001;
    op.end_ticks = 0xffff'ffff'0000'0fff;
    op.append_tid = 78;
    op.append_ns = op.start_ns - 9'000'000;
    op.submit_tid = 79;
    op.submit_ns = op.start_ns - 1'000;
    op.sync_tid = 80;
    op.sync_ns = op.end_ns + 5'000;
    op.execution = 41;
    op.kernel = 0x4e;
    op.group_count[0] = 1;
    op.group_count[1] = 2;
    op.group_count[2] = 3;
    op.bytes = 1ull << 40;
    op.signal_event = 0xe0;
    written.push_back(op);
    DeviceOp estimated;  // defaults: no sync call, completion seen
    estimated.start_ns = 5;
    estimated.end_ns = 9;
    written.push_back(estimated);
    written.push_back(DeviceQueue{77, 1, 0x1000, true, 1, 2, 3});
    written.push_back(DeviceQueue{77, 0, 0x2000, false, 0, 0, 4, /*engine_unknown=*/true});
    written.push_back(DeviceInfo{1, gpu, 19'200'000, 32, {0xf, 0x2}});
    written.push_back(ClockSample{1, 77, 0xffff'ffff'ffff, 123'456'789, 123'999'999, 1'763'000'000'000'000'000});
    written.push_back(ClockFit{1, 1'000, 19'200'001.25, 19'200'000, 42, 43, 12.5, 40.25, 17});
    written.push_back(MemoryUsage{8'000'000'000'000'000'100u, 0, 1, 1 << 20, 4096, 0});
    written.push_back(MemoryUsage{8'000'000'000'000'000'200u, 77, kUnknownDevice, 0, 0, 300});
  }
  StringTable read_strings;
  const std::vector<Event> read = RoundTrip(written, &read_strings, intern);
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < read.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    ExpectSameEvent(written[i], read[i]);
  }
  EXPECT_EQ(read_strings.Get(std::get<DeviceOp>(read[0]).name), "gemm<float>");
  EXPECT_EQ(read_strings.Get(std::get<DeviceInfo>(read[4]).name), "xtrace simulated GPU");
}

}  // namespace
}  // namespace xtrace

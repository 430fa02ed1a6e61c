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

}  // namespace
}  // namespace xtrace

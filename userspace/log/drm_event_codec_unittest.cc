// Tests for log/drm_event_codec: every DRM event kind and every decoded argument struct
// survives LogWriter -> LogReader unchanged, across batches.
#include "log/drm_event_codec.h"

#include <gtest/gtest.h>

#include <vector>

#include "log/log_reader.h"
#include "log/log_writer.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::SampleHeader;
using test_util::SampleSummary;
using test_util::ScratchDir;

std::vector<Event> DrmEvents(StringTable& s) {
  std::vector<Event> events;
  events.push_back(DrmFile{.pid = 10,
                           .fd = 4,
                           .kind = DrmNodeKind::kRender,
                           .path = s.Intern("/dev/dri/renderD128"),
                           .major = 226,
                           .minor = 128,
                           .driver = s.Intern("i915")});
  events.push_back(DrmFile{.pid = 10,
                           .fd = 3,
                           .kind = DrmNodeKind::kNotDrm,
                           .path = s.Intern("/dev/null"),
                           .major = 1,
                           .minor = 3});
  events.push_back(DrmFile{.pid = 11, .fd = 9, .kind = DrmNodeKind::kUnknown});
  const std::vector<DrmIoctlArgs> args = {
      std::monostate(),
      I915ExecbufferArgs{.context_id = 5,
                         .engine = 3,
                         .flags = 0x20803,
                         .buffer_count = 4,
                         .batch_start_offset = 0x40,
                         .batch_len = 264},
      I915GemCreateArgs{.size = 1 << 20, .handle = 9, .flags = 1, .extended = true},
      I915MmapOffsetArgs{.handle = 9, .offset = 0x1'0000'0000, .flags = 2},
      I915GemWaitArgs{.handle = 9, .flags = 0, .timeout_ns = -1},
      I915ContextCreateArgs{.context_id = 12, .flags = 2},
      XeExecArgs{
          .exec_queue_id = 3, .num_syncs = 2, .address = 0x8000'0000'1000, .num_batch_buffer = 1},
      XeVmBindArgs{.vm_id = 1,
                   .exec_queue_id = 2,
                   .num_binds = 1,
                   .num_syncs = 1,
                   .op = 2,
                   .obj = 7,
                   .obj_offset = 0x1000,
                   .range = 0x20000,
                   .addr = 0x7000'0000,
                   .bind_flags = 4},
      XeGemCreateArgs{
          .size = 2 << 20, .placement = 3, .flags = 4, .vm_id = 1, .handle = 8, .cpu_caching = 2},
      XeExecQueueCreateArgs{
          .width = 1, .num_placements = 2, .vm_id = 1, .flags = 0, .exec_queue_id = 6},
      XeWaitUserFenceArgs{.addr = 0x5000,
                          .op = 3,
                          .flags = 1,
                          .value = 9,
                          .mask = ~0ull,
                          .timeout_ns = 123456,
                          .exec_queue_id = 6},
  };
  uint64_t t = 7'000'000'000'000;
  for (size_t i = 0; i < args.size(); ++i, t += 10'000) {
    DrmIoctl d;
    d.pid = 10;
    d.tid = 20 + static_cast<uint32_t>(i % 2);
    d.start_ns = t;
    d.end_ns = t + 1'500 + i;
    d.fd = 4;
    d.cmd = 0xC0406469;
    d.result = i % 3 == 0 ? -25 : 0;
    d.name = s.Intern("DRM_IOCTL_" + std::to_string(i));
    d.arg = 0x7ffd'1234'0000 + i;
    d.arg_unreadable = i == 0;
    d.args = args[i];
    if (i % 2 == 1) {
      d.cause = s.Intern("zeCommandListAppendLaunchKernel");
      d.cause_start_ns = t - 700;
    }
    events.push_back(d);
  }
  events.push_back(DrmFenceSignal{.pid = 10,
                                  .tid = 21,
                                  .created_ns = t + 10,
                                  .signaled_ns = t + 90'000,
                                  .ioctl_start_ns = t,
                                  .context = 55,
                                  .seqno = 1234,
                                  .source = s.Intern("dma_fence_signaled")});
  return events;
}

TEST(DrmEventCodecTest, EveryDrmEventAndArgumentStructRoundTrips) {
  ScratchDir dir;
  const std::string path = dir.File("drm.capnp");
  std::vector<Event> written;
  {
    auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = 5});
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    written = DrmEvents((*writer)->strings());
    for (const Event& e : written) (*writer)->Append(e);
    ASSERT_TRUE((*writer)->Finish(SampleSummary()).ok());
  }
  auto reader = LogReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  std::vector<Event> read;
  Event e;
  for (;;) {
    auto more = reader->Next(&e);
    ASSERT_TRUE(more.ok()) << more.status().message();
    if (!*more) break;
    read.push_back(e);
  }
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < written.size(); ++i) {
    ASSERT_EQ(read[i].index(), written[i].index()) << "event " << i;
    std::visit(
        [&](const auto& w) {
          using T = std::decay_t<decltype(w)>;
          if constexpr (std::is_same_v<T, DrmFile> || std::is_same_v<T, DrmIoctl> ||
                        std::is_same_v<T, DrmFenceSignal>) {
            EXPECT_TRUE(w == std::get<T>(read[i])) << "event " << i;
          }
        },
        written[i]);
  }
  EXPECT_EQ(reader->strings().Get(std::get<DrmFile>(read[0]).driver), "i915");
}

}  // namespace
}  // namespace xtrace

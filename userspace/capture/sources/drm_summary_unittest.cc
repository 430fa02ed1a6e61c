// Tests for capture/sources/drm_summary: the per-device sentences of the capture summary.
#include "capture/sources/drm_summary.h"

#include <gtest/gtest.h>

#include <vector>

#include "correlate/correlator.h"
#include "log_test_util.h"

namespace xtrace {
namespace {

using test_util::Contains;

class NullSink : public EventSink {
 public:
  void OnEvent(const Event&) override {}
};

class NullDeviceInspector : public ProcessInspector {
 public:
  std::optional<ProcessDetails> Process(uint32_t) override { return std::nullopt; }
  FdDevice Fd(uint32_t, uint32_t, const FdFileAtCall&) override {
    return FdDevice{DrmNodeKind::kNotDrm, "/dev/null", 1, 3, ""};
  }
};

DecodedDrmIoctl Ioctl(uint32_t cmd, uint64_t t, const std::vector<std::byte>& in) {
  xt_record_header h{};
  h.type = XT_REC_DRM_IOCTL;
  h.pid = 5;
  h.tid = 5;
  h.start_ns = t;
  h.end_ns = t + 10;
  return DecodedDrmIoctl{h, -25, 0x1000, 3, cmd, (1u << 20) | 3, 0x21b6, in, {}};
}

TEST(DrmSummaryTest, NothingCapturedSaysNothing) {
  StringTable strings;
  NullSink sink;
  NullDeviceInspector inspector;
  DrmCorrelator drm(strings, sink, inspector);
  EXPECT_EQ(DrmSummary(drm, Counters{}), "");
}

TEST(DrmSummaryTest, OneSentencePerDeviceAndWhatWasMissed) {
  StringTable strings;
  NullSink sink;
  NullDeviceInspector inspector;
  DrmCorrelator drm(strings, sink, inspector);
  const std::vector<std::byte> exec(56), wait(16);
  drm.OnIoctl(Ioctl(0x40386449, 100, exec));
  drm.OnIoctl(Ioctl(0xC010646C, 200, wait));
  drm.Flush();
  Counters counters{};
  counters[XT_CNT_DRM_UNPAIRED_EXIT] = 2;
  const std::string text = DrmSummary(drm, counters);
  EXPECT_TRUE(Contains(text,
                       "\nxtrace: DRM /dev/null (not a DRM device): 1 submission (0 issued inside "
                       "a traced API call), 0 bytes created, 1 wait; 2 ioctls in all."));
  EXPECT_TRUE(Contains(text, "\nxtrace: 2 DRM ioctls were already running when the capture "
                             "began and are not shown."));
  // Without a source of host API calls the attribution count means nothing and is left out.
  drm.set_link_host_calls(false);
  EXPECT_TRUE(Contains(DrmSummary(drm, Counters{}), ": 1 submission, 0 bytes created"));
}

}  // namespace
}  // namespace xtrace

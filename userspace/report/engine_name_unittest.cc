// Tests of engine names: device, group type and ordinal.index when known, and saying so when
// the group type or the engine itself is not.
#include "report/engine_name.h"

#include <gtest/gtest.h>

namespace xtrace::report {
namespace {

DeviceQueue Queue(uint32_t device, uint32_t ordinal, uint32_t index, bool immediate = false) {
  return DeviceQueue{.pid = 7, .device = device, .handle = 0x7facd0000cf0, .immediate = immediate,
                     .ordinal = ordinal, .index = index, .track = 1};
}

TEST(EngineName, KnownGroupTypeNamesTheEngineAsAUserKnowsIt) {
  EngineIdentity e = EngineIdentity::Of(Queue(0, 0, 1));
  e.group_flags = 0x1 | 0x2 | 0x4;  // compute, copy, cooperative kernels
  EXPECT_EQ(EngineName(e, 0x7facd0000cf0), "GPU 0 compute 0.1");
  e = EngineIdentity::Of(Queue(1, 2, 3, /*immediate=*/true));
  e.group_flags = 0x2;
  EXPECT_EQ(EngineName(e, 1), "GPU 1 copy 2.3 immediate");
  e.group_flags = 0x8;  // metrics only
  EXPECT_EQ(EngineGroupType(e.group_flags), "other");
}

TEST(EngineName, UnknownGroupTypeIsSaidNotGuessed) {
  const EngineIdentity e = EngineIdentity::Of(Queue(0, 0, 1));
  EXPECT_EQ(EngineGroupType(e.group_flags), "");
  EXPECT_EQ(EngineName(e, 0x7facd0000cf0), "GPU 0 engine 0.1 (type unknown)");
  EXPECT_EQ(EngineName(EngineIdentity::Of(Queue(0, 1, 0, true)), 2),
            "GPU 0 engine 1.0 immediate (type unknown)");
}

TEST(EngineName, AnEngineNeverDescribedKeepsItsHandle) {
  EngineIdentity e;
  e.device = 0;
  EXPECT_EQ(EngineName(e, 0x7facd0000cf0), "GPU 0 queue 0x7facd0000cf0");
  EXPECT_EQ(EngineName(EngineIdentity{}, 0xab), "GPU ? queue 0xab");
}

// Made before the attach on a loader that cannot say its engine: its ordinal and index (0, 0)
// are nobody's answer, so it is named by its handle, an immediate list as one.
TEST(EngineName, AnEngineWhoseEngineIsUnknownIsNotNamedEngineZero) {
  DeviceQueue list = Queue(0, 0, 0, /*immediate=*/true);
  list.engine_unknown = true;
  EngineIdentity e = EngineIdentity::Of(list);
  e.group_flags = 0x1;
  EXPECT_FALSE(e.described);
  EXPECT_EQ(EngineName(e, 0x7facd0001280), "GPU 0 immediate list 0x7facd0001280");
  DeviceQueue queue = Queue(0, 0, 0);
  queue.engine_unknown = true;
  EXPECT_EQ(EngineName(EngineIdentity::Of(queue), 0x7facd0000cf0), "GPU 0 queue 0x7facd0000cf0");
  // Merged into a report row, it stays an immediate list.
  EngineIdentity row;
  row.Merge(e);
  EXPECT_EQ(EngineName(row, 0x7facd0001280), "GPU 0 immediate list 0x7facd0001280");
}

TEST(EngineName, MergeFillsInWhatIsMissing) {
  EngineIdentity a;
  EngineIdentity b = EngineIdentity::Of(Queue(0, 0, 2));
  b.group_flags = 1;
  a.Merge(b);
  EXPECT_EQ(EngineName(a, 0), "GPU 0 compute 0.2");
}

}  // namespace
}  // namespace xtrace::report

// Tests for drop_windows.cc: a window per look that finds new drops, by source, from the
// previous look to this one.
#include "capture/output/drop_windows.h"

#include <gtest/gtest.h>

namespace xtrace {
namespace {

Counters With(uint64_t ze, uint64_t itt, uint64_t drm, uint64_t other) {
  Counters c{};
  c[XT_CNT_DROPPED] = ze + itt + drm + other;
  c[XT_CNT_DROPPED_ZE] = ze;
  c[XT_CNT_DROPPED_ITT] = itt;
  c[XT_CNT_DROPPED_DRM] = drm;
  c[XT_CNT_DROPPED_OTHER] = other;
  return c;
}

TEST(DropWindowsTest, OneWindowPerLookWithNewDropsSpanningFromThePreviousLook) {
  DropWindows w;
  w.Start(With(5, 0, 0, 0), 1000);  // drops before the start are not this capture's windows
  EXPECT_FALSE(w.Look(With(5, 0, 0, 0), 2000).has_value());
  auto first = w.Look(With(8, 1, 2, 0), 3000);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->start_ns, 2000u);
  EXPECT_EQ(first->end_ns, 3000u);
  EXPECT_EQ(first->level_zero, 3u);
  EXPECT_EQ(first->itt, 1u);
  EXPECT_EQ(first->drm, 2u);
  EXPECT_EQ(first->other, 0u);
  EXPECT_EQ(first->total(), 6u);
  EXPECT_FALSE(w.Look(With(8, 1, 2, 0), 4000).has_value());
  auto second = w.Look(With(8, 1, 2, 7), 5000);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->start_ns, 4000u);
  EXPECT_EQ(second->other, 7u);
  EXPECT_EQ(w.total().total(), 13u);
}

// The programs' own ITT rings' share of the ITT drops (XT_CNT_DROPPED_ITT_RINGS) goes into
// each window and the total, so the log can name the remedy that fits.
TEST(DropWindowsTest, WindowsSayHowManyTheProgramsOwnIttRingsLost) {
  DropWindows w;
  Counters c = With(0, 4, 0, 0);
  c[XT_CNT_DROPPED_ITT_RINGS] = 3;  // before the start: not this capture's
  w.Start(c, 1000);
  c = With(0, 10, 0, 0);
  c[XT_CNT_DROPPED_ITT_RINGS] = 8;
  auto first = w.Look(c, 2000);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->itt, 6u);
  EXPECT_EQ(first->itt_rings, 5u);
  EXPECT_EQ(first->total(), 6u) << "ring drops are a part of the ITT drops, not added to them";
  c = With(2, 10, 0, 0);
  c[XT_CNT_DROPPED_ITT_RINGS] = 8;
  auto second = w.Look(c, 3000);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->itt_rings, 0u) << "the BPF ring lost these";
  EXPECT_EQ(w.total().itt_rings, 5u);
  EXPECT_EQ(w.total().total(), 8u);
}

}  // namespace
}  // namespace xtrace

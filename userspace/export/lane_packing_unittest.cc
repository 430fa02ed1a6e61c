// Tests of the first-free-lane packing the exporters share.
#include "export/lane_packing.h"

#include <gtest/gtest.h>

namespace xtrace {
namespace {

TEST(LanePacking, OverlapsOpenLanesAndFreedLanesAreReused) {
  LanePacking p;
  auto a = p.Place(0, 100);
  EXPECT_EQ(a.lane, 0u);
  EXPECT_TRUE(a.opened);
  auto b = p.Place(50, 150);  // overlaps a
  EXPECT_EQ(b.lane, 1u);
  EXPECT_TRUE(b.opened);
  auto c = p.Place(100, 120);  // a ended at its start: lane 0 is free again
  EXPECT_EQ(c.lane, 0u);
  EXPECT_FALSE(c.opened);
  auto d = p.Place(110, 130);  // both busy
  EXPECT_EQ(d.lane, 2u);
  EXPECT_TRUE(d.opened);
  auto e = p.Place(160, 170);  // the first free lane wins
  EXPECT_EQ(e.lane, 0u);
  EXPECT_EQ(p.lanes(), 3u);
}

}  // namespace
}  // namespace xtrace

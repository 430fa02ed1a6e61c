#include "export/id_ranges.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace xtrace {
namespace {

TEST(IdRanges, ConsecutiveIdsAreOneRangeInAnyOrder) {
  IdRanges ids;
  for (uint64_t id = 1000; id < 200000; ++id) ids.Insert(id);
  EXPECT_EQ(ids.ranges(), 1u);
  ids.Insert(10);
  ids.Insert(12);
  EXPECT_EQ(ids.ranges(), 3u);
  ids.Insert(11);  // joins the two before it
  EXPECT_EQ(ids.ranges(), 2u);
  ids.Insert(999);  // joins the large one from below
  EXPECT_EQ(ids.ranges(), 2u);
  EXPECT_TRUE(ids.Contains(999));
  EXPECT_TRUE(ids.Contains(199999));
  EXPECT_FALSE(ids.Contains(200000));
  EXPECT_FALSE(ids.Contains(13));
  EXPECT_FALSE(ids.Contains(9));
  EXPECT_FALSE(ids.Contains(0));
}

// Against a plain set, ids inserted in a shuffled order with gaps, duplicates included.
TEST(IdRanges, HoldsWhatASetHolds) {
  std::mt19937_64 random(7);
  IdRanges ids;
  std::set<uint64_t> expected;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t id = random() % 5000 + (uint64_t{3} << 32);
    ids.Insert(id);
    expected.insert(id);
  }
  for (uint64_t id = (uint64_t{3} << 32) - 2; id < (uint64_t{3} << 32) + 5002; ++id)
    ASSERT_EQ(ids.Contains(id), expected.count(id) == 1) << id;
  ids.Insert(UINT64_MAX);
  EXPECT_TRUE(ids.Contains(UINT64_MAX));
  EXPECT_FALSE(ids.Contains(UINT64_MAX - 1));
}

}  // namespace
}  // namespace xtrace

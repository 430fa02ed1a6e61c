// Tests of the correlation ids that tie a submitting call to its device operations.
#include "export/launch_correlation.h"

#include <gtest/gtest.h>

namespace xtrace {
namespace {

TEST(LaunchCorrelationTest, EachCallGetsTheNextIdAndOperationsFindIt) {
  LaunchCorrelation c;
  EXPECT_EQ(c.NoteCall(10, 11, 1000), 1u);
  EXPECT_EQ(c.NoteCall(10, 11, 2000), 2u);
  // Another process, the same tid and instant: its own id.
  EXPECT_EQ(c.NoteCall(20, 11, 1000), 3u);
  EXPECT_EQ(c.Find(10, 11, 1000), 1u);
  EXPECT_EQ(c.Find(10, 11, 2000), 2u);
  EXPECT_EQ(c.Find(20, 11, 1000), 3u);
  // Found as often as asked: a call that submitted several operations.
  EXPECT_EQ(c.Find(10, 11, 1000), 1u);
}

TEST(LaunchCorrelationTest, UnknownCallsHaveNoId) {
  LaunchCorrelation c;
  EXPECT_EQ(c.Find(10, 11, 1000), 0u);
  c.NoteCall(10, 11, 1000);
  EXPECT_EQ(c.Find(10, 11, 999), 0u);
  EXPECT_EQ(c.Find(10, 12, 1000), 0u);
}

TEST(LaunchCorrelationTest, AThreadRemembersItsLastCallsOnly) {
  LaunchCorrelation c;
  const size_t n = LaunchCorrelation::kRemembered;
  for (size_t i = 0; i < n + 10; ++i) c.NoteCall(1, 1, 1000 + i);
  EXPECT_EQ(c.Find(1, 1, 1000), 0u);  // pushed out
  EXPECT_EQ(c.Find(1, 1, 1000 + 9), 0u);
  EXPECT_EQ(c.Find(1, 1, 1000 + 10), 11u);        // the oldest still remembered
  EXPECT_EQ(c.Find(1, 1, 1000 + n + 9), n + 10);  // the newest
  // Other threads keep theirs.
  c.NoteCall(1, 2, 5);
  EXPECT_EQ(c.Find(1, 2, 5), n + 11);
}

}  // namespace
}  // namespace xtrace

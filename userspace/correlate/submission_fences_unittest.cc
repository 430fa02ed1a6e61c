// Tests for correlate/submission_fences: which host call's operations a fence signal bounds.
#include "correlate/submission_fences.h"

#include <gtest/gtest.h>

namespace xtrace {
namespace {

TEST(SubmissionFencesTest, ASignalBoundsTheCallContainingItsIoctl) {
  SubmissionFences fences;
  EXPECT_TRUE(fences.OnSubmittingCall(1, 2, 100, 200, 5, 7).empty());
  EXPECT_TRUE(fences.OnSubmittingCall(1, 2, 300, 400, 8, 8).empty());
  auto bound = fences.OnSignal(1, 2, 150, 900);
  ASSERT_TRUE(bound.has_value());
  EXPECT_EQ(bound->first_id, 5u);
  EXPECT_EQ(bound->last_id, 7u);
  EXPECT_EQ(bound->signaled_ns, 900u);
  EXPECT_FALSE(fences.OnSignal(1, 3, 150, 900)) << "another thread";
  EXPECT_FALSE(fences.OnSignal(1, 2, 250, 900)) << "between calls";
}

TEST(SubmissionFencesTest, AnEarlySignalWaitsForItsCall) {
  SubmissionFences fences;
  EXPECT_TRUE(fences.OnSubmittingCall(1, 2, 100, 200, 1, 1).empty());
  EXPECT_FALSE(fences.OnSignal(1, 2, 350, 500));  // its call has not returned yet
  EXPECT_FALSE(fences.OnSignal(1, 2, 250, 500));  // ran between calls: dropped
  const auto bounds = fences.OnSubmittingCall(1, 2, 300, 400, 2, 3);
  ASSERT_EQ(bounds.size(), 1u);
  EXPECT_EQ(bounds[0].first_id, 2u);
  EXPECT_EQ(bounds[0].last_id, 3u);
  EXPECT_EQ(bounds[0].signaled_ns, 500u);
  EXPECT_TRUE(fences.OnSubmittingCall(1, 2, 600, 700, 4, 4).empty()) << "used once";
}

}  // namespace
}  // namespace xtrace

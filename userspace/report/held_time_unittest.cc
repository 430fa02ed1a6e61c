// Tests of HeldTime: the records of one hold count once, holds of other threads and processes
// stay apart, and only the part of an interval under a hold is held.
#include "report/held_time.h"

#include <gtest/gtest.h>

#include "xtrace/records.h"

namespace xtrace::report {
namespace {

ApiCall Learned(uint32_t pid, uint32_t tid, uint64_t start, uint64_t end, bool learned = true) {
  ApiCall c;
  c.pid = pid;
  c.tid = tid;
  c.fn = XT_ZE_EVENT_CREATE;
  c.start_ns = start;
  c.end_ns = end;
  c.learned = learned;
  return c;
}

TEST(HeldTimeTest, RecordsOfOneHoldCountOnceAndOnlyTheirThreadIsHeld) {
  HeldTime held;
  EXPECT_FALSE(held.Note(Learned(1, 2, 100, 200, /*learned=*/false))) << "a call of the process's";
  EXPECT_FALSE(held.Note(KernelLaunch{}));
  EXPECT_EQ(held.Within(1, 2, 0, 1000), 0u);
  // One hold of thread 2, as three records (a kernel and two objects), in any order.
  KernelCreate kernel;
  kernel.pid = 1;
  kernel.tid = 2;
  kernel.start_ns = 1000;
  kernel.end_ns = 2000;
  kernel.learned = true;
  EXPECT_TRUE(held.Note(kernel));
  EXPECT_TRUE(held.Note(Learned(1, 2, 1000, 2000)));
  EXPECT_TRUE(held.Note(Learned(1, 2, 1000, 2000)));
  // A later hold of the same thread, one of another thread, one of another process.
  EXPECT_TRUE(held.Note(Learned(1, 2, 5000, 5500)));
  EXPECT_TRUE(held.Note(Learned(1, 3, 1000, 2000)));
  EXPECT_TRUE(held.Note(Learned(4, 2, 1000, 2000)));
  EXPECT_EQ(held.holds(), 4u);
  EXPECT_EQ(held.total_ns(), 1000u + 500u + 1000u + 1000u);

  EXPECT_EQ(held.Within(1, 2, 900, 2100), 1000u) << "a call around the hold";
  EXPECT_EQ(held.Within(1, 2, 1500, 5200), 500u + 200u) << "the ends of two holds";
  EXPECT_EQ(held.Within(1, 2, 2000, 5000), 0u) << "between them";
  EXPECT_EQ(held.Within(1, 2, 6000, 7000), 0u) << "after them";
  EXPECT_EQ(held.Within(1, 2, 1200, 1200), 0u) << "an empty interval";
  EXPECT_EQ(held.Within(1, 5, 0, 10000), 0u) << "a thread never held";
}

// A record whose span overlaps an earlier one's without being the same (it cannot happen for
// one thread, but a log is input): the time under both counts once.
TEST(HeldTimeTest, OverlappingSpansCountTheirUnionOnce) {
  HeldTime held;
  held.Note(Learned(1, 2, 3000, 4000));
  held.Note(Learned(1, 2, 1000, 2000));
  held.Note(Learned(1, 2, 1500, 3500));  // bridges both
  EXPECT_EQ(held.holds(), 2u);
  EXPECT_EQ(held.total_ns(), 3000u);
  EXPECT_EQ(held.Within(1, 2, 0, 10000), 3000u);
  EXPECT_EQ(held.Within(1, 2, 1800, 3200), 1400u);
}

}  // namespace
}  // namespace xtrace::report

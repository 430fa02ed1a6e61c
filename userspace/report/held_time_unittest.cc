// Tests of HeldTime: the records of one hold count once, holds of other threads and processes
// stay apart, and only the part of an interval under a hold is held; hold records count, a
// whole-process hold holds every thread of its process, and a log without hold records falls
// back to its learned creations' spans.
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

XtraceHold Hold(uint32_t pid, uint32_t tid, uint64_t start, uint64_t end, uint64_t process_end,
               HoldCause cause = HoldCause::kAttachQueries) {
  return XtraceHold{.pid = pid, .tid = tid, .start_ns = start, .end_ns = end,
                    .process_end_ns = process_end, .cause = cause};
}

// A hold that learned nothing has no learned creation: only its record says it. Its thread
// is held for the whole hold, the rest of its process until the thread was seized.
TEST(HeldTimeTest, HoldRecordsCountWhateverTheyLearned) {
  HeldTime held;
  EXPECT_TRUE(held.Note(Hold(1, 2, 1000, 3000, 1200)));
  EXPECT_EQ(held.holds(), 1u);
  EXPECT_EQ(held.total_ns(), 2000u);
  EXPECT_EQ(held.Within(1, 2, 0, 10000), 2000u) << "the held thread, the whole hold";
  EXPECT_EQ(held.Within(1, 7, 0, 10000), 200u) << "another thread, until the held one was seized";
  EXPECT_EQ(held.Within(1, 7, 1100, 2000), 100u);
  EXPECT_EQ(held.Within(4, 2, 0, 10000), 0u) << "another process";
  EXPECT_EQ(held.Unheld(1, 2, 500, 3500), 1000u);
  EXPECT_EQ(held.Causes(), " to ask about objects made before the attach");
}

// At an exec, a library load or a table getter every thread of the process stands still.
TEST(HeldTimeTest, AWholeProcessHoldHoldsEveryThreadOfItsProcess) {
  HeldTime held;
  held.Note(Hold(1, 1, 1000, 2000, 2000, HoldCause::kLibraryLoad));
  held.Note(Hold(1, 3, 5000, 6000, 6000, HoldCause::kTableGetter));
  held.Note(Hold(1, 2, 8000, 9000, 8100));
  for (uint32_t tid : {1u, 2u, 3u, 9u}) {
    EXPECT_EQ(held.Within(1, tid, 0, 4000), 1000u) << "thread " << tid;
    EXPECT_EQ(held.Within(1, tid, 5500, 7000), 500u) << "thread " << tid;
  }
  EXPECT_EQ(held.Within(1, 2, 7000, 10000), 1000u);
  EXPECT_EQ(held.Within(1, 9, 7000, 10000), 100u);
  EXPECT_EQ(held.Within(2, 1, 0, 10000), 0u);
  EXPECT_EQ(held.holds(), 3u);
  EXPECT_EQ(held.total_ns(), 3000u);
  EXPECT_EQ(held.Causes(),
            ": 1 to ask about objects made before the attach, 1 at a library load, 1 at a function "
            "table getter (zeGet*ProcAddrTable)");
}

// A log with hold records has the learned creations of each hold before its record, with its
// span: they are that hold, counted once, and the hold records are what is counted.
TEST(HeldTimeTest, LearnedCreationsOfAHoldWithARecordAreThatHold) {
  HeldTime held;
  EXPECT_TRUE(held.Note(Learned(1, 2, 1000, 2000)));
  EXPECT_TRUE(held.Note(Learned(1, 2, 1000, 2000)));
  EXPECT_EQ(held.holds(), 1u) << "no hold record yet: the learned spans";
  EXPECT_TRUE(held.Note(Hold(1, 2, 1000, 2000, 1100)));
  EXPECT_TRUE(held.Note(Hold(1, 3, 4000, 4500, 4050)));  // learned nothing
  EXPECT_EQ(held.holds(), 2u);
  EXPECT_EQ(held.total_ns(), 1500u);
  EXPECT_EQ(held.Within(1, 2, 0, 10000), 1000u + 50u);
  EXPECT_EQ(held.Within(1, 3, 0, 10000), 100u + 500u);
}

}  // namespace
}  // namespace xtrace::report

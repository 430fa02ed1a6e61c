// Tests for capture/left_out_processes: every process left out is named, with whose it is.
#include "capture/discovery/left_out_processes.h"

#include <gtest/gtest.h>

namespace xtrace {
namespace {

// A uid no account has on a test machine: described as "uid N" alone.
constexpr uid_t kNoName = 3999999;

TEST(LeftOutProcesses, NothingLeftOutSaysNothing) {
  LeftOutProcesses left_out;
  EXPECT_EQ(left_out.Note(0), "");
}

TEST(LeftOutProcesses, NamesEachPidWithItsCommAndUser) {
  LeftOutProcesses left_out;
  left_out.Add(1240, "", kNoName + 1);
  left_out.Add(1234, "setuid-workload", kNoName);
  EXPECT_EQ(left_out.Note(kNoName + 2),
            "2 processes left out as another user's: pid 1234 (setuid-workload) "
            "runs as uid 3999999, pid 1240 runs as uid 4000000; this capture "
            "covers the processes of uid 4000001 alone");
}

TEST(LeftOutProcesses, OnePidOnceAndTakenBackWhenItIsTheOwners) {
  LeftOutProcesses left_out;
  left_out.Add(7, "a", kNoName);
  left_out.Add(7, "b", kNoName);
  EXPECT_EQ(left_out.size(), 1u);
  EXPECT_NE(left_out.Note(kNoName + 1).find("1 process left out"), std::string::npos);
  EXPECT_NE(left_out.Note(kNoName + 1).find("pid 7 (b)"), std::string::npos);
  left_out.Remove(7);
  EXPECT_FALSE(left_out.Contains(7));
  EXPECT_EQ(left_out.Note(kNoName + 1), "");
}

TEST(LeftOutProcesses, ManyAreCountedAndTheFirstNamed) {
  LeftOutProcesses left_out;
  for (uint32_t pid = 100; pid < 100 + LeftOutProcesses::kNamed + 3; ++pid) left_out.Add(pid, "w", kNoName);
  const std::string note = left_out.Note(kNoName + 1);
  EXPECT_EQ(note.rfind("11 processes left out", 0), 0u) << note;
  EXPECT_NE(note.find("pid 107 (w)"), std::string::npos) << note;
  EXPECT_EQ(note.find("pid 108 "), std::string::npos) << note;
  EXPECT_NE(note.find(", and 3 more;"), std::string::npos) << note;
}

}  // namespace
}  // namespace xtrace

// Tests for capture/discovery/proc_stat: the fields of /proc/PID/stat, whatever the command name holds.
#include "capture/discovery/proc_stat.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace xtrace {
namespace {

// A /proc/PID/stat line with the given comm and state; ppid 4000, start time 123456.
std::string StatLine(std::string_view comm, char state = 'S') {
  return "4242 (" + std::string(comm) + ") " + state +
         " 4000 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 123456 1000000 200 "
         "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
}

TEST(ProcStat, ReadsStateParentAndStartTime) {
  auto stat = ParseProcStat(StatLine("python3"));
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->comm, "python3");
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 4000u);
  EXPECT_EQ(stat->start_ticks, 123456u);
  EXPECT_TRUE(stat->alive());
}

TEST(ProcStat, CommWithSpacesAndParentheses) {
  for (std::string_view comm : {"my app", "a) b (c", "x) S 1 2 3", ")", "(", ""}) {
    auto stat = ParseProcStat(StatLine(comm));
    ASSERT_TRUE(stat) << comm;
    EXPECT_EQ(stat->comm, comm);
    EXPECT_EQ(stat->ppid, 4000u) << comm;
    EXPECT_EQ(stat->start_ticks, 123456u) << comm;
  }
}

TEST(ProcStat, KernelThreadsAreToldByTheirFlags) {
  EXPECT_FALSE(ParseProcStat(StatLine("python3"))->kernel_thread());
  EXPECT_EQ(ParseProcStat(StatLine("python3"))->flags, 4194560u);
  // kthreadd: PF_KTHREAD | PF_NOFREEZE | PF_FORKNOEXEC | PF_SUPERPRIV... as the kernel shows it.
  auto kthreadd = ParseProcStat(
      "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0 18446744073709551615 0 0 0 0 0 0 0 "
      "2147483647 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
  ASSERT_TRUE(kthreadd);
  EXPECT_TRUE(kthreadd->kernel_thread());
  EXPECT_FALSE(ReadProcStat(static_cast<uint32_t>(getpid()))->kernel_thread());
  if (auto two = ReadProcStat(2); two && two->comm == "kthreadd") {
    EXPECT_TRUE(two->kernel_thread());
  }
}

TEST(ProcStat, ZombieAndDeadAreNotAlive) {
  EXPECT_FALSE(ParseProcStat(StatLine("app", 'Z'))->alive());
  EXPECT_FALSE(ParseProcStat(StatLine("app", 'X'))->alive());
  EXPECT_TRUE(ParseProcStat(StatLine("app", 'T'))->alive());
}

TEST(ProcStat, TruncatedAndMalformedGiveNothing) {
  const std::string line = StatLine("app");
  EXPECT_FALSE(ParseProcStat(""));
  EXPECT_FALSE(ParseProcStat("4242 app S 1"));                  // no parentheses
  EXPECT_FALSE(ParseProcStat("4242 (app) SS 4000"));            // state is one letter
  EXPECT_FALSE(ParseProcStat("4242 (app) S parent 1 2 3"));     // ppid not a number
  EXPECT_FALSE(ParseProcStat(line.substr(0, line.find("123456"))));  // cut before field 22
  EXPECT_FALSE(ParseProcStat("4242 (app) S 4000 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 12x"));
}

TEST(ProcStat, ReadsOwnProcess) {
  auto stat = ReadProcStat(static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->ppid, static_cast<uint32_t>(getppid()));
  EXPECT_GT(stat->start_ticks, 0u);
  EXPECT_TRUE(ProcessAlive(static_cast<uint32_t>(getpid())));
  EXPECT_FALSE(ReadProcStat(0x3fffffff));
  EXPECT_FALSE(ProcessAlive(0x3fffffff));
}

}  // namespace
}  // namespace xtrace

// Tests of reading a rank and world size from an environment block and from /proc.
#include "correlate/process_rank.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace xtrace {
namespace {

std::string Block(std::initializer_list<std::string> entries) {
  std::string out;
  for (const auto& e : entries) out += e + '\0';
  return out;
}

TEST(ProcessRankTest, TheMostSpecificVariableWins) {
  EXPECT_EQ(RankFromEnviron(Block({"HOME=/root", "LOCAL_RANK=1", "PMI_RANK=7"})), 7);
  EXPECT_EQ(RankFromEnviron(Block({"OMPI_COMM_WORLD_RANK=3", "RANK=5"})), 5);
  EXPECT_EQ(RankFromEnviron(Block({"PMIX_RANK=0"})), 0);
  EXPECT_EQ(RankFromEnviron(Block({"MPI_LOCALRANKID=2"})), 2);
}

TEST(ProcessRankTest, BadOrMissingValuesAreNoRank) {
  EXPECT_EQ(RankFromEnviron(Block({"HOME=/root"})), std::nullopt);
  EXPECT_EQ(RankFromEnviron(Block({"RANK=", "RANKING=4", "XRANK=4"})), std::nullopt);
  EXPECT_EQ(RankFromEnviron(Block({"RANK=-1"})), std::nullopt);
  EXPECT_EQ(RankFromEnviron(Block({"RANK=3x", "PMI_RANK=9"})), 9);  // a bad one is skipped
  EXPECT_EQ(RankFromEnviron(""), std::nullopt);
}

TEST(ProcessRankTest, WorldSizeIsTheFirstPositiveSizeVariable) {
  EXPECT_EQ(WorldSizeFromEnviron(Block({"RANK=1", "WORLD_SIZE=8", "PMI_SIZE=4"})), 8);
  EXPECT_EQ(WorldSizeFromEnviron(Block({"OMPI_COMM_WORLD_SIZE=16"})), 16);
  EXPECT_EQ(WorldSizeFromEnviron(Block({"WORLD_SIZE=0", "SLURM_NTASKS=2"})), 2);
  EXPECT_EQ(WorldSizeFromEnviron(Block({"LOCAL_WORLD_SIZE=2", "WORLD_SIZEX=3"})), std::nullopt);
}

TEST(ProcessRankTest, ReadsItsOwnProcess) {
  // /proc/PID/environ is the environment given at exec: start a child with a rank.
  char variable[] = "PMIX_RANK=41";
  char size[] = "PMI_SIZE=64";
  char* const environment[] = {variable, size, nullptr};
  const pid_t child = ::fork();
  if (child == 0) {
    ::execle("/bin/sleep", "sleep", "5", nullptr, environment);
    ::_exit(127);
  }
  DistributedIdentity identity;
  for (int i = 0; i < 200 && identity.rank != 41; ++i) {
    identity = ReadDistributedIdentity(static_cast<uint32_t>(child));
    ::usleep(10'000);
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(identity.rank, 41);
  EXPECT_EQ(identity.world_size, 64);
  EXPECT_EQ(ReadDistributedIdentity(0x7ffffff0).rank, std::nullopt);
}

}  // namespace
}  // namespace xtrace

// Tests for capture/discovery/slurm_job: a job's processes by their environment, its cgroup by path.
#include "capture/discovery/slurm_job.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace xtrace {
namespace {

using namespace std::string_literals;

TEST(SlurmJob, MatchesTheWholeVariable) {
  const std::string env = "HOME=/h\0SLURM_JOB_ID=42\0SLURM_PROCID=1\0"s;
  EXPECT_TRUE(EnvironHasSlurmJob(env, "42"));
  EXPECT_FALSE(EnvironHasSlurmJob(env, "4"));
  EXPECT_FALSE(EnvironHasSlurmJob("SLURM_JOB_ID=421\0"s, "42"));
  EXPECT_FALSE(EnvironHasSlurmJob("XSLURM_JOB_ID=42\0"s, "42"));
  EXPECT_TRUE(EnvironHasSlurmJob("SLURM_JOB_ID=42"s, "42"));  // last, without its NUL
  EXPECT_FALSE(EnvironHasSlurmJob("SLURM_JOBID=42\0"s, "42"));
  // On a node given by name: its tasks alone.
  const std::string on_n1 = "SLURMD_NODENAME=n1\0SLURM_JOB_ID=42\0"s;
  EXPECT_TRUE(EnvironHasSlurmJob(on_n1, "42", "n1"));
  EXPECT_FALSE(EnvironHasSlurmJob(on_n1, "42", "n2"));
  EXPECT_FALSE(EnvironHasSlurmJob(env, "42", "n1"));
}

TEST(SlurmJob, FindsTheJobCgroupInAPath) {
  EXPECT_EQ(SlurmJobCgroup("/system.slice/slurmstepd.scope/job_42/step_0/user/task_1", "42"),
            "/system.slice/slurmstepd.scope/job_42");
  EXPECT_EQ(SlurmJobCgroup("/slurm/uid_1000/job_42", "42"), "/slurm/uid_1000/job_42");
  EXPECT_EQ(SlurmJobCgroup("/slurm/uid_1000/job_421/step_0", "42"), "");
  EXPECT_EQ(SlurmJobCgroup("/user.slice/user-1000.slice", "42"), "");
}

TEST(SlurmJob, IdsAreDigits) {
  EXPECT_TRUE(CheckSlurmJobId("4242").ok());
  EXPECT_FALSE(CheckSlurmJobId("").ok());
  EXPECT_FALSE(CheckSlurmJobId("42_3").ok());
  EXPECT_FALSE(CheckSlurmJobId("../x").ok());
}

// A real process with a job id in its environment is found; the one asking is not.
TEST(SlurmJob, FindsProcessesByTheirEnvironment) {
  const std::string job = std::to_string(900000000 + getpid() % 1000000);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string var = "SLURM_JOB_ID=" + job;
    char* const argv[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("30"), nullptr};
    char* const envp[] = {const_cast<char*>(var.c_str()), nullptr};
    execve("/bin/sleep", argv, envp);
    _exit(127);
  }
  SlurmJobOnNode found;
  for (int i = 0; i < 100 && found.pids.empty(); ++i) {
    usleep(20000);  // until it has exec'd
    found = FindSlurmJobOnNode(job, "", 0);
  }
  EXPECT_EQ(found.pids, std::vector<uint32_t>{static_cast<uint32_t>(child)});
  EXPECT_TRUE(FindSlurmJobOnNode(job, "", static_cast<uint32_t>(child)).pids.empty());
  EXPECT_TRUE(FindSlurmJobOnNode(job, "no-such-node", 0).pids.empty());
  // Narrowed to one user's processes: found as its owner's, not as somebody else's.
  EXPECT_EQ(FindSlurmJobOnNode(job, "", 0, geteuid()).pids,
            std::vector<uint32_t>{static_cast<uint32_t>(child)});
  EXPECT_TRUE(FindSlurmJobOnNode(job, "", 0, geteuid() + 1).pids.empty());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace xtrace

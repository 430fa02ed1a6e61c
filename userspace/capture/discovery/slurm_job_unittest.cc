// Tests for capture/discovery/slurm_job: a job's processes by their environment, its cgroup by path.
#include "capture/discovery/slurm_job.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace xtrace {
namespace {

using namespace std::string_literals;

// Whether an environment belongs to a job: yes, no, or yes by job id (and node) alone.
SlurmJobMatch Match(const std::string& env, const std::string& job, const std::string& node = "",
                    const std::string& cluster = "") {
  return MatchSlurmJob(env, SlurmJobSelector{job, node, cluster});
}

constexpr auto kNo = SlurmJobMatch::kNo;
constexpr auto kYes = SlurmJobMatch::kYes;
constexpr auto kWithoutClusterName = SlurmJobMatch::kWithoutClusterName;

TEST(SlurmJob, MatchesTheWholeVariable) {
  const std::string env = "HOME=/h\0SLURM_JOB_ID=42\0SLURM_PROCID=1\0"s;
  EXPECT_EQ(Match(env, "42"), kYes);
  EXPECT_EQ(Match(env, "4"), kNo);
  EXPECT_EQ(Match("SLURM_JOB_ID=421\0"s, "42"), kNo);
  EXPECT_EQ(Match("XSLURM_JOB_ID=42\0"s, "42"), kNo);
  EXPECT_EQ(Match("SLURM_JOB_ID=42"s, "42"), kYes);  // last, without its NUL
  EXPECT_EQ(Match("SLURM_JOBID=42\0"s, "42"), kNo);
  // On a node given by name: its tasks alone.
  const std::string on_n1 = "SLURMD_NODENAME=n1\0SLURM_JOB_ID=42\0"s;
  EXPECT_EQ(Match(on_n1, "42", "n1"), kYes);
  EXPECT_EQ(Match(on_n1, "42", "n2"), kNo);
  EXPECT_EQ(Match(env, "42", "n1"), kNo);
}

// Job 42 of one cluster is not job 42 of another on the same host, even on a node of the
// same name: the cluster's name tells them apart.
TEST(SlurmJob, MatchesTheClusterWhereTheProcessNamesIt) {
  const std::string in_a = "SLURM_CLUSTER_NAME=a\0SLURMD_NODENAME=n1\0SLURM_JOB_ID=42\0"s;
  const std::string in_b = "SLURM_JOB_ID=42\0SLURMD_NODENAME=n1\0SLURM_CLUSTER_NAME=b"s;
  EXPECT_EQ(Match(in_a, "42", "n1", "a"), kYes);
  EXPECT_EQ(Match(in_b, "42", "n1", "a"), kNo);
  EXPECT_EQ(Match(in_b, "42", "n1", "b"), kYes);
  EXPECT_EQ(Match(in_a, "42", "", "a"), kYes);
  EXPECT_EQ(Match(in_a, "43", "n1", "a"), kNo);
  EXPECT_EQ(Match(in_a, "42", "n2", "a"), kNo);
  // The whole name: neither a prefix nor an extension of it.
  EXPECT_EQ(Match("SLURM_JOB_ID=42\0SLURM_CLUSTER_NAME=ab\0"s, "42", "", "a"), kNo);
  EXPECT_EQ(Match(in_a, "42", "", "ab"), kNo);
  EXPECT_EQ(Match("SLURM_JOB_ID=42\0SLURM_CLUSTER_NAME=\0"s, "42", "", "a"), kNo);
  // No cluster asked for: any cluster's job 42 (on the node).
  EXPECT_EQ(Match(in_a, "42", "n1"), kYes);
  EXPECT_EQ(Match(in_b, "42", "n1"), kYes);
  // A process without SLURM_CLUSTER_NAME: taken by its job id and node alone, and marked so.
  const std::string unnamed = "SLURM_JOB_ID=42\0SLURMD_NODENAME=n1\0"s;
  EXPECT_EQ(Match(unnamed, "42", "n1", "a"), kWithoutClusterName);
  EXPECT_EQ(Match(unnamed, "42", "n2", "a"), kNo);
  EXPECT_EQ(Match(unnamed, "42", "n1"), kYes);
  // A variable whose name merely ends like it is no cluster name.
  EXPECT_EQ(Match("SLURM_JOB_ID=42\0MY_SLURM_CLUSTER_NAME=b\0"s, "42", "", "a"), kWithoutClusterName);
}

TEST(SlurmJob, DescribesAJobAsFarAsItIsNamed) {
  EXPECT_EQ(DescribeSlurmJob({"42", "", ""}), "Slurm job 42");
  EXPECT_EQ(DescribeSlurmJob({"42", "n1", ""}), "Slurm job 42 on node n1");
  EXPECT_EQ(DescribeSlurmJob({"42", "n1", "c"}), "Slurm job 42 of cluster c on node n1");
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

// A /bin/sleep with exactly the environment given, killed and reaped with the object.
class ChildWithEnvironment {
 public:
  explicit ChildWithEnvironment(std::vector<std::string> env) {
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> envp;
      for (auto& e : env) envp.push_back(e.data());
      envp.push_back(nullptr);
      char* const argv[] = {const_cast<char*>("/bin/sleep"), const_cast<char*>("30"), nullptr};
      execve("/bin/sleep", argv, envp.data());
      _exit(127);
    }
  }
  ~ChildWithEnvironment() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  uint32_t pid() const { return static_cast<uint32_t>(pid_); }

 private:
  pid_t pid_ = -1;
};

// Looks for `job` until `want` processes have exec'd into it (a child reads its parent's
// environment until its exec), at most 2 s.
SlurmJobOnNode FindWhenStarted(const SlurmJobSelector& job, size_t want) {
  SlurmJobOnNode found;
  for (int i = 0; i < 100 && found.pids.size() < want; ++i) {
    usleep(20000);
    found = FindSlurmJobOnNode(job, 0);
  }
  return found;
}

// A real process with a job id in its environment is found; the one asking is not.
TEST(SlurmJob, FindsProcessesByTheirEnvironment) {
  const std::string job = std::to_string(900000000 + getpid() % 1000000);
  ChildWithEnvironment child({"SLURM_JOB_ID=" + job});
  ASSERT_GT(child.pid(), 0u);
  const SlurmJobOnNode found = FindWhenStarted({job, "", ""}, 1);
  EXPECT_EQ(found.pids, std::vector<uint32_t>{child.pid()});
  EXPECT_TRUE(FindSlurmJobOnNode({job, "", ""}, child.pid()).pids.empty());
  EXPECT_TRUE(FindSlurmJobOnNode({job, "no-such-node", ""}, 0).pids.empty());
  // Narrowed to one user's processes: found as its owner's, not as somebody else's.
  EXPECT_EQ(FindSlurmJobOnNode({job, "", ""}, 0, geteuid()).pids, std::vector<uint32_t>{child.pid()});
  EXPECT_TRUE(FindSlurmJobOnNode({job, "", ""}, 0, geteuid() + 1).pids.empty());
}

// Two clusters' job of the same id on nodes of the same name, on one host (two test clusters
// at once): each is found apart by its cluster; a process that names no cluster is found for
// either, and marked as taken without the name.
TEST(SlurmJob, TellsApartTwoClustersJobsOfOneIdOnOneHost) {
  const std::string job = std::to_string(800000000 + getpid() % 1000000);
  const std::string node = "n" + std::to_string(getpid());
  ChildWithEnvironment in_a({"SLURM_JOB_ID=" + job, "SLURMD_NODENAME=" + node, "SLURM_CLUSTER_NAME=a"});
  ChildWithEnvironment in_b({"SLURM_CLUSTER_NAME=b", "SLURM_JOB_ID=" + job, "SLURMD_NODENAME=" + node});
  ChildWithEnvironment unnamed({"SLURMD_NODENAME=" + node, "SLURM_JOB_ID=" + job});
  ASSERT_GT(in_a.pid(), 0u);
  ASSERT_GT(in_b.pid(), 0u);
  ASSERT_GT(unnamed.pid(), 0u);
  SlurmJobOnNode any = FindWhenStarted({job, node, ""}, 3);
  std::sort(any.pids.begin(), any.pids.end());
  std::vector<uint32_t> all = {in_a.pid(), in_b.pid(), unnamed.pid()};
  std::sort(all.begin(), all.end());
  EXPECT_EQ(any.pids, all);
  EXPECT_TRUE(any.without_cluster_name.empty());
  for (const auto& [cluster, pid] : {std::pair{"a", in_a.pid()}, std::pair{"b", in_b.pid()}}) {
    SlurmJobOnNode found = FindSlurmJobOnNode({job, node, cluster}, 0);
    std::sort(found.pids.begin(), found.pids.end());
    std::vector<uint32_t> want = {pid, unnamed.pid()};
    std::sort(want.begin(), want.end());
    EXPECT_EQ(found.pids, want) << cluster;
    EXPECT_EQ(found.without_cluster_name, std::vector<uint32_t>{unnamed.pid()}) << cluster;
  }
  EXPECT_EQ(FindSlurmJobOnNode({job, node, "c"}, 0).pids, std::vector<uint32_t>{unnamed.pid()});
}

}  // namespace
}  // namespace xtrace

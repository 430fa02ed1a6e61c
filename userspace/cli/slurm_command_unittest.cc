// Tests for cli/slurm_command: its command line, and how a node's step names the job's cluster.
#include "cli/slurm_command.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace xtrace {
namespace {

Result<SlurmCommandLine> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "slurm");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ParseSlurmCommandLine(static_cast<int>(argv.size()), argv.data());
}

TEST(SlurmCommand, ParsesTheJobAndItsOptions) {
  auto l = Parse({"4242", "--duration", "2s", "-o", "out", "--socket", "/run/%n.sock"});
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->job, "4242");
  EXPECT_EQ(l->duration_ns, 2'000'000'000ull);
  EXPECT_EQ(l->output_dir, "out");
  EXPECT_EQ(NodeSocketPath(l->socket_path, "n1"), "/run/n1.sock");
  EXPECT_FALSE(Parse({}).ok());
  EXPECT_FALSE(Parse({"42_1"}).ok());
  EXPECT_FALSE(Parse({"42", "--node-step"}).ok());  // needs --start-at and --output-dir
  auto step = Parse({"42", "--node-step", "--start-at", "1", "-o", "/o", "--cluster", "c1"});
  ASSERT_TRUE(step.ok()) << step.status().message();
  EXPECT_EQ(step->cluster, "c1");
}

// The step's own SLURM_CLUSTER_NAME, which Slurm gives it, is the name its job's tasks carry;
// what the command found out is for a step without one.
TEST(SlurmCommand, ANodeStepNamesTheClusterItRunsIn) {
  EXPECT_EQ(NodeStepCluster("c1", "c2"), "c1");
  EXPECT_EQ(NodeStepCluster(nullptr, "c2"), "c2");
  EXPECT_EQ(NodeStepCluster("", "c2"), "c2");
  EXPECT_EQ(NodeStepCluster(nullptr, ""), "");
}

TEST(SlurmCommand, ReadsTheClusterNameFromScontrolShowConfig) {
  EXPECT_EQ(ClusterNameInConfig("Configuration data as of 2026-11-27T07:00:00\n"
                                "CliFilterPlugins        = (null)\n"
                                "ClusterName             = xt-test-123\n"
                                "CompleteWait            = 0 sec\n"),
            "xt-test-123");
  EXPECT_EQ(ClusterNameInConfig("ClusterName = c\r\n"), "c");
  EXPECT_EQ(ClusterNameInConfig("ClusterNameX\nFoo = bar\n"), "");
  EXPECT_EQ(ClusterNameInConfig("ClusterNames = a\nClusterName=b\n"), "b");
  EXPECT_EQ(ClusterNameInConfig(""), "");
}

}  // namespace
}  // namespace xtrace

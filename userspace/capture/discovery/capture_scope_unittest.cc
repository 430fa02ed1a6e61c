// Tests for capture/discovery/capture_scope: how target options combine into the BPF scope and the
// user-space rule for processes already running; and capture/output/record_families.
#include "capture/discovery/capture_scope.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>

#include "capture/discovery/process_owner.h"

#include "capture/output/record_families.h"

namespace xtrace {
namespace {

TEST(CaptureScope, GivenPidsAloneAreExactlyTheFilter) {
  CaptureOptions o;
  o.pids = {42};
  auto s = ResolveCaptureScope(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->discovers());
  EXPECT_TRUE(s->ends_with_targets());
  EXPECT_EQ(s->ToConfig({}).scope, 0u);  // as before scopes existed: traced_pids alone
}

TEST(CaptureScope, ACommandFollowsItsChildrenUnlessToldNot) {
  CaptureOptions o;
  o.command = {"python3"};
  auto s = ResolveCaptureScope(o);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->discovers());
  EXPECT_TRUE(s->ends_with_targets());
  EXPECT_EQ(s->ToConfig({}).scope, unsigned(XT_SCOPE_FOLLOW_CHILDREN));
  o.follow_children = false;
  EXPECT_FALSE(ResolveCaptureScope(o)->discovers());
}

TEST(CaptureScope, SystemAndCommSelectAndNeverEndByThemselves) {
  CaptureOptions o;
  o.system = true;
  auto s = ResolveCaptureScope(o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->ToConfig({}).scope, unsigned(XT_SCOPE_ALL_PROCESSES));
  EXPECT_FALSE(s->ends_with_targets());
  EXPECT_TRUE(s->SelectsRunning("anything", "/"));
  EXPECT_EQ(s->Describe(), "every process");

  CaptureOptions c;
  c.comm = "python3";
  auto n = ResolveCaptureScope(c);
  ASSERT_TRUE(n.ok());
  const xt_capture_config config = n->ToConfig({});
  EXPECT_EQ(config.scope, unsigned(XT_SCOPE_COMM));
  EXPECT_STREQ(config.comm, "python3");
  EXPECT_TRUE(n->SelectsRunning("python3", "/"));
  EXPECT_FALSE(n->SelectsRunning("python", "/"));
  EXPECT_FALSE(n->ends_with_targets());
}

TEST(CaptureScope, ACollectorInAPidNamespaceSaysSo) {
  CaptureOptions o;
  o.system = true;
  const xt_capture_config config = ResolveCaptureScope(o)->ToConfig({.level = 2, .inum = 4026532001});
  EXPECT_EQ(config.scope, unsigned(XT_SCOPE_ALL_PROCESSES | XT_SCOPE_PID_NAMESPACE));
  EXPECT_EQ(config.pidns_level, 2u);
  EXPECT_EQ(config.pidns_inum, 4026532001u);
}

TEST(CaptureScope, UnusableTargetsAreClearErrors) {
  CaptureOptions none;
  auto s = ResolveCaptureScope(none);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("no target"), std::string::npos);

  CaptureOptions long_name;
  long_name.comm = "a-name-far-too-long";
  EXPECT_NE(ResolveCaptureScope(long_name).status().message().find("at most 15 characters"),
            std::string::npos);

  CaptureOptions both;
  both.cgroup = "/a";
  both.container = "0123456789ab";
  EXPECT_NE(ResolveCaptureScope(both).status().message().find("give one"), std::string::npos);

  CaptureOptions missing;
  missing.cgroup = "/xtrace-no-such-cgroup-here";
  auto m = ResolveCaptureScope(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("xtrace-no-such-cgroup-here"), std::string::npos)
      << m.status().message();
}

TEST(CaptureScope, ACgroupNarrowsEverySelection) {
  CaptureScope s;
  s.all_processes = true;
  s.cgroup = CgroupScope{"/sys/fs/cgroup/pod", "/pod", 77};
  EXPECT_TRUE(s.SelectsRunning("x", "/pod/ctr"));
  EXPECT_FALSE(s.SelectsRunning("x", "/podcast"));
  EXPECT_EQ(s.ToConfig({}).scope, unsigned(XT_SCOPE_ALL_PROCESSES | XT_SCOPE_CGROUP));
  EXPECT_EQ(s.Describe(), "every process in cgroup /pod");
}

TEST(RecordFamilies, TheAllocatedRangesNameTheirSources) {
  EXPECT_EQ(RecordFamily(XT_REC_LAUNCH_KERNEL), "Level Zero");
  EXPECT_EQ(RecordFamily(40), "Level Zero");
  EXPECT_EQ(RecordFamily(64), "ITT");
  EXPECT_EQ(RecordFamily(95), "DRM");
  EXPECT_EQ(RecordFamily(XT_REC_THREAD_NAME), "");
  EXPECT_EQ(RecordFamily(XT_REC_PROCESS_EXEC), "");
}

TEST(CaptureScope, AUserCapturesTheirOwnProcessesAlone) {
  CaptureOptions o;
  o.system = true;
  o.user = std::to_string(getuid());
  auto s = ResolveCaptureScope(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const xt_capture_config config = s->ToConfig({});
  EXPECT_EQ(config.scope, unsigned(XT_SCOPE_ALL_PROCESSES | XT_SCOPE_OWNER));
  EXPECT_EQ(config.owner_uid, getuid());
  EXPECT_TRUE(s->Owns(static_cast<uint32_t>(getpid())));
  EXPECT_NE(s->Describe().find("every process owned by "), std::string::npos) << s->Describe();

  // A process given by pid that is somebody else's is refused, naming its owner.
  CaptureOptions other;
  other.pids = {static_cast<uint32_t>(getpid())};
  other.user = std::to_string(getuid() + 4321);
  auto refused = ResolveCaptureScope(other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "pid " + std::to_string(getpid()) + " belongs to " + DescribeUser(getuid()) +
                ": this capture may cover only the processes of " + DescribeUser(getuid() + 4321));
  EXPECT_FALSE(ResolveCaptureScope([] { CaptureOptions u; u.system = true; u.user = "no-such-user-xt"; return u; }()).ok());
}

TEST(CaptureScope, ASlurmJobWithNoProcessHereIsAnError) {
  CaptureOptions o;
  o.slurm_job = "999999999";
  auto s = ResolveCaptureScope(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("no process of Slurm job 999999999 runs on this node"),
            std::string::npos) << s.status().message();
  o.slurm_job = "12ab";
  EXPECT_NE(ResolveCaptureScope(o).status().message().find("--slurm-job: '12ab' is not a Slurm job id"),
            std::string::npos) << ResolveCaptureScope(o).status().message();
}

TEST(CaptureScope, ASlurmClusterNarrowsAJobAndIsNamedWhenNothingMatches) {
  CaptureOptions o;
  o.slurm_cluster = "c1";
  EXPECT_EQ(ResolveCaptureScope(o).status().message(), "--slurm-cluster narrows --slurm-job; give the job too");
  o.slurm_job = "999999999";
  o.slurm_node = "n1";
  EXPECT_EQ(ResolveCaptureScope(o).status().message(),
            "no process of Slurm job 999999999 of cluster c1 on node n1 runs on this host (none has "
            "SLURM_JOB_ID=999999999 and SLURMD_NODENAME=n1 in its environment, with "
            "SLURM_CLUSTER_NAME=c1 or none)");
}

TEST(RecordFamilies, AnIttHandleTextIsBookkeepingAndAThreadNameACall) {
  const auto family = [](uint32_t kind) {
    xt_itt_name rec{};
    rec.hdr.type = XT_REC_ITT_NAME;
    rec.hdr.size = sizeof(rec);
    rec.kind = kind;
    return RecordFamily(std::as_bytes(std::span(&rec, 1)));
  };
  EXPECT_EQ(family(XT_ITT_NAME_DOMAIN), "");
  EXPECT_EQ(family(XT_ITT_NAME_STRING), "");
  EXPECT_EQ(family(XT_ITT_NAME_THREAD), "ITT");
  xt_itt_event event{};
  event.hdr.type = XT_REC_ITT_EVENT;
  EXPECT_EQ(RecordFamily(std::as_bytes(std::span(&event, 1))), "ITT");
  EXPECT_EQ(RecordFamily(std::as_bytes(std::span(&event, 1)).first(4)), "");  // no whole header
}

}  // namespace
}  // namespace xtrace

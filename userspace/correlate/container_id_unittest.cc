// Tests for correlate/container_id: container ids from the cgroup paths runtimes create.
#include "correlate/container_id.h"

#include <gtest/gtest.h>

#include <string>

namespace xtrace {
namespace {

const std::string kId = "3f2a9c1b7e5d4c3b2a190817263544536271809a8b7c6d5e4f3a2b1c0d9e8f7a";

TEST(ContainerId, EveryRuntimesNamingYieldsTheId) {
  EXPECT_EQ(ContainerIdFromCgroupPath("/system.slice/docker-" + kId + ".scope"), kId);
  EXPECT_EQ(ContainerIdFromCgroupPath("/docker/" + kId), kId);
  EXPECT_EQ(ContainerIdFromCgroupPath("/kubepods.slice/kubepods-burstable.slice/"
                                      "kubepods-burstable-pod1234_5678.slice/cri-containerd-" +
                                      kId + ".scope"),
            kId);
  EXPECT_EQ(ContainerIdFromCgroupPath("/kubepods/besteffort/pod0a1b2c3d-1111-2222-3333-444455556666/" + kId),
            kId);
  EXPECT_EQ(ContainerIdFromCgroupPath("/machine.slice/libpod-" + kId + ".scope/container"), kId);
  EXPECT_EQ(ContainerIdFromCgroupPath("/crio-" + kId + ".scope"), kId);
}

TEST(ContainerId, UppercaseIsFoldedAndTheInnermostIdWins) {
  std::string upper = kId;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(ContainerIdFromCgroupPath("/docker/" + upper), kId);
  const std::string outer(64, 'a');
  EXPECT_EQ(ContainerIdFromCgroupPath("/docker/" + outer + "/docker/" + kId), kId);
}

TEST(ContainerId, PathsWithoutAContainerYieldNothing) {
  EXPECT_EQ(ContainerIdFromCgroupPath("/"), "");
  EXPECT_EQ(ContainerIdFromCgroupPath(""), "");
  EXPECT_EQ(ContainerIdFromCgroupPath("/user.slice/user-1000.slice/session-3.scope"), "");
  // A pod uid is not a container id; 63 or 65 hex digits are not one either.
  EXPECT_EQ(ContainerIdFromCgroupPath("/kubepods/pod0a1b2c3d-1111-2222-3333-444455556666"), "");
  EXPECT_EQ(ContainerIdFromCgroupPath("/docker/" + kId.substr(1)), "");
  EXPECT_EQ(ContainerIdFromCgroupPath("/docker/" + kId + "0"), "");
  // The runtime's monitor process sits beside the container, not in it.
  EXPECT_EQ(ContainerIdFromCgroupPath("/machine.slice/libpod-conmon-" + kId + ".scope"), "");
}

}  // namespace
}  // namespace xtrace

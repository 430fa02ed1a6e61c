// Tests for cli/output_template: %r, %p, %h and their errors.
#include "cli/output_template.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

namespace xtrace {
namespace {

TEST(OutputTemplate, ExpandsRankPidAndHost) {
  const OutputTemplateValues v{3, 4242, "node7"};
  EXPECT_EQ(*ExpandOutputTemplate("run.%r.capnp", v), "run.3.capnp");
  EXPECT_EQ(*ExpandOutputTemplate("%h/%p-%r.capnp", v), "node7/4242-3.capnp");
  EXPECT_EQ(*ExpandOutputTemplate("100%%.capnp", v), "100%.capnp");
  EXPECT_EQ(*ExpandOutputTemplate("plain.capnp", v), "plain.capnp");
}

TEST(OutputTemplate, SaysWhatIsWrong) {
  const OutputTemplateValues no_rank{std::nullopt, 1, "h"};
  auto r = ExpandOutputTemplate("run.%r.capnp", no_rank);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("%r needs a rank"), std::string::npos) << r.status().message();
  EXPECT_EQ(ExpandOutputTemplate("run.%x", no_rank).status().message(),
            "'run.%x': unknown %x (templates: %r rank, %p pid, %h host, %% percent sign)");
  EXPECT_FALSE(ExpandOutputTemplate("run%", no_rank).ok());
}

TEST(OutputTemplate, ReadsTheRankALauncherSets) {
  const char* saved = getenv("OMPI_COMM_WORLD_RANK");
  setenv("OMPI_COMM_WORLD_RANK", "5", 1);
  const OutputTemplateValues v = CurrentOutputTemplateValues();
  if (saved) setenv("OMPI_COMM_WORLD_RANK", saved, 1);
  else unsetenv("OMPI_COMM_WORLD_RANK");
  // RANK or PMI_RANK, if this test runs under a launcher, come first; otherwise Open MPI's.
  if (!getenv("RANK") && !getenv("PMI_RANK")) {
    EXPECT_EQ(v.rank, 5);
  }
  EXPECT_EQ(v.pid, static_cast<uint32_t>(getpid()));
  EXPECT_FALSE(v.host.empty());
}

}  // namespace
}  // namespace xtrace

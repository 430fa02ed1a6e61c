// Tests for cli/env_command: the exact lines `xtrace env` prints, quoting, and finding the
// collector built next to this binary.
#include "cli/env_command.h"

#include <gtest/gtest.h>

#include <string>

namespace xtrace {
namespace {

const std::string kPath = "/opt/x/lib/libxtrace_itt.so";

TEST(EnvCommand, PrintsTheExactLineForEachPlace) {
  EXPECT_EQ(EnvText(kPath, EnvFormat::kShell),
            "export INTEL_LIBITTNOTIFY64=/opt/x/lib/libxtrace_itt.so\n");
  EXPECT_EQ(EnvText(kPath, EnvFormat::kSystemd),
            "Environment=INTEL_LIBITTNOTIFY64=/opt/x/lib/libxtrace_itt.so\n");
  EXPECT_EQ(EnvText(kPath, EnvFormat::kDocker),
            "-v /opt/x/lib/libxtrace_itt.so:/opt/xtrace/libxtrace_itt.so:ro "
            "-e INTEL_LIBITTNOTIFY64=/opt/xtrace/libxtrace_itt.so\n");
  const std::string k8s = EnvText(kPath, EnvFormat::kKubernetes);
  EXPECT_NE(k8s.find("    - name: INTEL_LIBITTNOTIFY64\n      value: /opt/xtrace/libxtrace_itt.so\n"),
            std::string::npos) << k8s;
  EXPECT_NE(k8s.find("      mountPath: /opt/xtrace/libxtrace_itt.so\n      readOnly: true\n"),
            std::string::npos) << k8s;
  EXPECT_NE(k8s.find("    hostPath:\n      path: /opt/x/lib/libxtrace_itt.so\n      type: File\n"),
            std::string::npos) << k8s;
}

TEST(EnvCommand, AllPlacesTogetherEachUnderAComment) {
  const std::string all = EnvText(kPath, EnvFormat::kAll);
  for (EnvFormat f : {EnvFormat::kShell, EnvFormat::kSystemd, EnvFormat::kDocker,
                      EnvFormat::kKubernetes})
    EXPECT_NE(all.find(EnvText(kPath, f)), std::string::npos);
  EXPECT_NE(all.find("# systemd unit, [Service] section"), std::string::npos);
}

TEST(EnvCommand, QuotesPathsThatNeedIt) {
  EXPECT_EQ(EnvText("/opt/my tools/it's/libxtrace_itt.so", EnvFormat::kShell),
            "export INTEL_LIBITTNOTIFY64='/opt/my tools/it'\\''s/libxtrace_itt.so'\n");
  EXPECT_EQ(EnvText("/opt/my tools/libxtrace_itt.so", EnvFormat::kSystemd),
            "Environment=\"INTEL_LIBITTNOTIFY64=/opt/my tools/libxtrace_itt.so\"\n");
}

TEST(EnvCommand, FindsTheCollectorBuiltNextToTheBinary) {
  auto found = FindCollector();
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_TRUE(found->ends_with("/lib/libxtrace_itt.so")) << *found;
  EXPECT_EQ(found->front(), '/');
}

}  // namespace
}  // namespace xtrace

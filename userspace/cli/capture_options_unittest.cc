// Tests for cli/capture_options: target and tuning options with their errors.
#include "cli/capture_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace xtrace {
namespace {

struct Parsed {
  CaptureOptions options;
  std::string error;
  bool ok = true;
};

Parsed Parse(std::vector<std::string> args) {
  Parsed p;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  const int argc = static_cast<int>(argv.size());
  for (int i = 0; i < argc; ++i) {
    OptionMatch m = ParseTargetOption(argc, argv.data(), i, p.options, &p.error);
    if (m == OptionMatch::kNotMine) m = ParseTuningOption(argc, argv.data(), i, p.options, &p.error);
    if (m != OptionMatch::kTaken) {
      p.ok = false;
      return p;
    }
  }
  return p;
}

TEST(CaptureOptions, TargetsAccumulate) {
  auto p = Parse({"-p", "1", "--pid", "2", "--comm", "python3", "--cgroup", "/a", "--system",
                  "--no-follow-children", "--duration", "30s", "--detach-after", "2s",
                  "--buffer-size", "64M", "--probes-per-process"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.options.pids, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(p.options.comm, "python3");
  EXPECT_EQ(p.options.cgroup, "/a");
  EXPECT_TRUE(p.options.system);
  EXPECT_EQ(p.options.follow_children, false);
  EXPECT_EQ(p.options.duration_ns, 30'000'000'000ull);
  EXPECT_EQ(p.options.library_grace_ns, 2'000'000'000ull);
  EXPECT_EQ(p.options.ring_bytes, 64ull << 20);
  EXPECT_TRUE(p.options.probes_per_process);
  EXPECT_FALSE(Parse({"--comm", "python3"}).options.probes_per_process);
}

TEST(CaptureOptions, BadValuesSayWhichOption) {
  EXPECT_NE(Parse({"--pid", "x"}).error.find("--pid: 'x' is not a process id"), std::string::npos);
  EXPECT_NE(Parse({"--container"}).error.find("--container needs a container id"), std::string::npos);
  EXPECT_NE(Parse({"--buffer-size", "3M"}).error.find("power of two"), std::string::npos);
  EXPECT_NE(Parse({"--detach-after", "soon"}).error.find("--detach-after: 'soon'"), std::string::npos);
  EXPECT_FALSE(Parse({"--frobnicate"}).ok);
}

}  // namespace
}  // namespace xtrace

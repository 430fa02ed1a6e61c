// Tests for cli/args: durations, sizes and pids as users type them.
#include "cli/args.h"

#include <gtest/gtest.h>

namespace xtrace {
namespace {

TEST(Args, Durations) {
  EXPECT_EQ(*ParseDuration("--duration", "10"), 10'000'000'000ull);
  EXPECT_EQ(*ParseDuration("--duration", "1.5s"), 1'500'000'000ull);
  EXPECT_EQ(*ParseDuration("--duration", "500ms"), 500'000'000ull);
  EXPECT_EQ(*ParseDuration("--duration", "2m"), 120'000'000'000ull);
  EXPECT_EQ(*ParseDuration("--duration", "1h"), 3'600'000'000'000ull);
  for (const char* bad : {"", "abc", "-1", "0", "10x", "1e30", "nan"}) {
    auto r = ParseDuration("--duration", bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--duration: '"), std::string::npos);
  }
}

TEST(Args, Sizes) {
  EXPECT_EQ(*ParseSize("--buffer-size", "4096"), 4096u);
  EXPECT_EQ(*ParseSize("--buffer-size", "16M"), 16u << 20);
  EXPECT_EQ(*ParseSize("--buffer-size", "64MiB"), 64u << 20);
  EXPECT_EQ(*ParseSize("--buffer-size", "1G"), 1ull << 30);
  for (const char* bad : {"", "M", "-4M", "0", "12Q", "99999999G"})
    EXPECT_FALSE(ParseSize("--buffer-size", bad).ok()) << bad;
}

TEST(Args, Counts) {
  EXPECT_EQ(*ParseCount("--max-files", "48", 1, 100), 48u);
  EXPECT_EQ(*ParseCount("--max-files", "100", 1, 100), 100u);
  for (const char* bad : {"", "0", "101", "-1", "4x", "99999999999999999999999"})
    EXPECT_EQ(ParseCount("--max-files", bad, 1, 100).status().message(),
              std::string("--max-files: '") + bad + "' is not a count from 1 to 100") << bad;
}

TEST(Args, Pids) {
  EXPECT_EQ(*ParsePid("--pid", "4242"), 4242u);
  for (const char* bad : {"", "0", "-3", "12ab", "99999999999"})
    EXPECT_FALSE(ParsePid("--pid", bad).ok()) << bad;
}

}  // namespace
}  // namespace xtrace

#include "base/human_bytes.h"

#include <gtest/gtest.h>

namespace xtrace {
namespace {

TEST(HumanBytes, EachUnitFromItsFirstWholeOne) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(880), "880 B");
  EXPECT_EQ(HumanBytes(1023), "1023 B");
  EXPECT_EQ(HumanBytes(1024), "1.0 KiB");
  EXPECT_EQ(HumanBytes(12800), "12.5 KiB");
  EXPECT_EQ(HumanBytes(3u << 20), "3.0 MiB");
  EXPECT_EQ(HumanBytes((uint64_t{1} << 30) - 1), "1024.0 MiB");  // rounds up, stays in MiB
  EXPECT_EQ(HumanBytes(uint64_t{5} << 29), "2.50 GiB");
  EXPECT_EQ(HumanBytes(uint64_t{3} << 40), "3072.00 GiB");
}

}  // namespace
}  // namespace xtrace

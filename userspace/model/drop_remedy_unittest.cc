// Tests for drop_remedy.cc: the sources named as the summary names them, and a remedy that
// fits the ring that lost the records: the BPF ring's, the programs' own ITT rings', or both.
#include "model/drop_remedy.h"

#include <gtest/gtest.h>

namespace xtrace {
namespace {

TEST(DropRemedyTest, SourcesAreNamedAsTheSummaryNamesThemAndOnlyWithDrops) {
  RecordsDropped d;
  d.level_zero = 4;
  d.drm = 1;
  const auto by_source = DroppedBySource(d);
  ASSERT_EQ(by_source.size(), 2u);
  EXPECT_EQ(by_source[0], (std::pair<std::string, uint64_t>{"Level Zero", 4}));
  EXPECT_EQ(by_source[1], (std::pair<std::string, uint64_t>{"DRM", 1}));
  EXPECT_TRUE(DroppedBySource(RecordsDropped()).empty());
  EXPECT_EQ(BySourceText(by_source), " (Level Zero 4, DRM 1)");
  EXPECT_EQ(BySourceText({{"ITT", 9}}), " (ITT 9)");
  EXPECT_EQ(BySourceText({}), "");
}

TEST(DropRemedyTest, LostInTheBpfRingOnly) {
  EXPECT_EQ(DropRemedyText(5, 0), "raise --buffer-size");
  EXPECT_EQ(DropRemedyText(5, 0, {" (now 8.0 MiB)", " (now 4.0 MiB)"}),
            "raise --buffer-size (now 8.0 MiB)");
}

TEST(DropRemedyTest, LostInTheProgramsOwnIttRingsOnly) {
  EXPECT_EQ(DropRemedyText(5, 5),
            "all in the programs' own ITT rings: raise --itt-ring-size or give xtrace a CPU the "
            "program does not use");
  EXPECT_EQ(DropRemedyText(5, 5, {" (now 8.0 MiB)", " (now 4.0 MiB)"}),
            "all in the programs' own ITT rings: raise --itt-ring-size (now 4.0 MiB) or give "
            "xtrace a CPU the program does not use");
  // A ring count read at another moment than the total is held to it.
  EXPECT_EQ(DropRemedyText(5, 9), DropRemedyText(5, 5));
}

TEST(DropRemedyTest, LostInBothRingsNamesBothRemedies) {
  EXPECT_EQ(DropRemedyText(5, 2),
            "raise --buffer-size; 2 of them in the programs' own ITT rings: raise "
            "--itt-ring-size or give xtrace a CPU the program does not use");
  EXPECT_EQ(DropRemedyText(5, 2, {" (now 8.0 MiB)", " (now 1.0 MiB)"}),
            "raise --buffer-size (now 8.0 MiB); 2 of them in the programs' own ITT rings: raise "
            "--itt-ring-size (now 1.0 MiB) or give xtrace a CPU the program does not use");
}

}  // namespace
}  // namespace xtrace

// Tests of the mark on cut texts: "…" appended, never after half a UTF-8 character.
#include "base/cut_text.h"

#include <gtest/gtest.h>

namespace xtrace {
namespace {

TEST(CutTextTest, AppendsTheEllipsis) {
  EXPECT_EQ(MarkCut("conv_fwd"), "conv_fwd\u2026");
  EXPECT_EQ(MarkCut(""), "\u2026");
}

TEST(CutTextTest, DropsACharacterTheCutSplit) {
  const std::string pi = "\xCF\x80", euro = "\xE2\x82\xAC", smile = "\xF0\x9F\x98\x80";
  EXPECT_EQ(MarkCut("a" + pi), "a" + pi + "\u2026") << "a whole character stays";
  EXPECT_EQ(MarkCut("a" + pi.substr(0, 1)), "a\u2026");
  EXPECT_EQ(MarkCut("a" + euro.substr(0, 2)), "a\u2026");
  EXPECT_EQ(MarkCut("a" + smile.substr(0, 3)), "a\u2026");
  EXPECT_EQ(MarkCut("a" + smile), "a" + smile + "\u2026");
  // Bytes that are not UTF-8 at all are left for the exporters to replace.
  EXPECT_EQ(MarkCut("a\xFF"), "a\xFF\u2026");
  EXPECT_EQ(MarkCut("\x80\x80\x80\x80"), "\x80\x80\x80\x80\u2026");
}

}  // namespace
}  // namespace xtrace

// Tests of category rules: each kind of match, first match wins, "other", and errors.
#include "report/categories.h"

#include <gtest/gtest.h>

namespace xtrace::report {
namespace {

TEST(CategoriesTest, FirstMatchingRuleWinsAndTheRestAreOther) {
  auto c = Categories::Parse(
      "# kernels by family\n"
      "gemm starts-with xt::gemm\n"
      "\n"
      "gemm regex ^matmul_[0-9]+$\n"
      "elementwise ends-with _f32\n"
      "memory equals zeCommandListAppendMemoryCopy\n"
      "all-xt starts-with xt\n",
      "cats.txt");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->Classify("xt::gemm<float>"), "gemm");
  EXPECT_EQ(c->Classify("matmul_12"), "gemm");
  EXPECT_EQ(c->Classify("matmul_x"), "other");
  EXPECT_EQ(c->Classify("xt_scale_f32"), "elementwise");  // before all-xt
  EXPECT_EQ(c->Classify("xt_reduce"), "all-xt");
  EXPECT_EQ(c->Classify("zeCommandListAppendMemoryCopy"), "memory");
  EXPECT_EQ(c->Classify("zeCommandListAppendMemoryFill"), "other");
}

TEST(CategoriesTest, PatternsKeepTheirSpaces) {
  auto c = Categories::Parse("lambda equals typeinfo name for main::{lambda()#1}\n", "f");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->Classify("typeinfo name for main::{lambda()#1}"), "lambda");
}

TEST(CategoriesTest, ErrorsNameTheFileAndLine) {
  auto bad_match = Categories::Parse("\ngemm contains gemm\n", "cats.txt");
  ASSERT_FALSE(bad_match.ok());
  EXPECT_NE(bad_match.status().message().find("cats.txt:2"), std::string::npos)
      << bad_match.status().message();
  auto bad_regex = Categories::Parse("x regex ([\n", "cats.txt");
  ASSERT_FALSE(bad_regex.ok());
  EXPECT_NE(bad_regex.status().message().find("bad regex"), std::string::npos);
  EXPECT_FALSE(Categories::Parse("x equals\n", "f").ok());
  EXPECT_FALSE(Categories::Load("/nonexistent/cats").ok());
}

}  // namespace
}  // namespace xtrace::report

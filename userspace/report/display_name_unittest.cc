// Tests of demangling kernel names and of cutting names to a width without losing what tells
// them apart.
#include "report/display_name.h"

#include <gtest/gtest.h>

#include <set>

namespace xtrace::report {
namespace {

bool Contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST(DemangledName, CxxFunctionsAsTheProfilersShowThem) {
  EXPECT_EQ(DemangledName("_Z3addPfS_i"), "add(float*, float*, int)");
  EXPECT_EQ(DemangledName("_ZN2xt4gemmILi256EEEvPKfPf"), "void xt::gemm<256>(float const*, float*)");
}

TEST(DemangledName, SyclKernelTypeinfoNamesShowTheType) {
  // What DPC++ names a lambda kernel submitted from run_layer(sycl::queue&).
  EXPECT_EQ(DemangledName("_ZTSZZ9run_layerRN4sycl3_V15queueEENKUlRNS0_7handlerEE_clES4_EUlNS0_"
                          "7nd_itemILi1EEEE_"),
            "run_layer(sycl::_V1::queue&)::{lambda(sycl::_V1::handler&)#1}::operator()(sycl::_V1::"
            "handler&) const::{lambda(sycl::_V1::nd_item<1>)#1}");
  // A named kernel class.
  EXPECT_EQ(DemangledName("_ZTS12VectorAddKer"), "VectorAddKer");
}

TEST(DemangledName, OtherNamesAreLeftAlone) {
  EXPECT_EQ(DemangledName("xt_scale_f32"), "xt_scale_f32");
  EXPECT_EQ(DemangledName("zeCommandListAppendMemoryCopy"), "zeCommandListAppendMemoryCopy");
  EXPECT_EQ(DemangledName("xt::softmax<float, 128>(const float*, float*)"),
            "xt::softmax<float, 128>(const float*, float*)");
  EXPECT_EQ(DemangledName("_Z!bad"), "_Z!bad");
  EXPECT_EQ(DemangledName(""), "");
}

TEST(CutNames, NamesThatFitStayWhole) {
  const std::vector<std::string> names = {"xt_scale_f32", "gemm"};
  EXPECT_EQ(CutNames(names, 40), names);
}

TEST(CutNames, ALongNameKeepsItsStartAndEndAndShowsTheCut) {
  const std::string name = "void xt::gemm<" + std::string(500, 'x') + ">(float*, float*)";
  const std::vector<std::string> cut = CutNames({name}, 60);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(DisplayWidth(cut[0]), 60u);
  EXPECT_TRUE(cut[0].starts_with("void xt::gemm<")) << cut[0];
  EXPECT_TRUE(cut[0].ends_with(">(float*, float*)")) << cut[0];
  EXPECT_TRUE(Contains(cut[0], kCutMark)) << cut[0];
}

// Template names of one library share a long start and the same parameter list: the part
// that differs is in the middle, and the cut shows it.
TEST(CutNames, KeepsTheDistinguishingMiddleOfTemplateNames) {
  const std::string head = "void xt::gemm<xt::dtype::bf16, " + std::string(300, 'p') + ", xt::tile_shape<";
  const std::string tail = ">, " + std::string(400, 's') + ">(xt::matrix_ref<float, 2>, float)";
  const std::vector<std::string> names = {head + "256, 128, 32" + tail, head + "128, 128, 64" + tail,
                                          "xt_scale_f32"};
  for (size_t width : {60, 80, 120}) {
    SCOPED_TRACE(width);
    const std::vector<std::string> cut = CutNames(names, width);
    ASSERT_EQ(cut.size(), 3u);
    EXPECT_TRUE(Contains(cut[0], "256, 128, 32")) << cut[0];
    EXPECT_TRUE(Contains(cut[1], "128, 128, 64")) << cut[1];
    EXPECT_EQ(cut[2], "xt_scale_f32");
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_LE(DisplayWidth(cut[i]), width) << cut[i];
      EXPECT_TRUE(cut[i].starts_with("void xt::gemm<")) << cut[i];
      EXPECT_TRUE(Contains(cut[i], kCutMark)) << cut[i];
    }
  }
}

// Lambda kernels of one function differ in their number at the very end.
TEST(CutNames, KeepsADifferingEnd) {
  std::vector<std::string> names;
  for (int i = 1; i <= 3; ++i)
    names.push_back("run_layer(sycl::_V1::queue&)::{lambda(sycl::_V1::handler&)#1}::operator()"
                    "(sycl::_V1::handler&) const::{lambda(sycl::_V1::nd_item<1>)#" +
                    std::to_string(i) + "}");
  const std::vector<std::string> cut = CutNames(names, 60);
  EXPECT_EQ(std::set<std::string>(cut.begin(), cut.end()).size(), 3u);
  for (size_t i = 0; i < cut.size(); ++i) {
    EXPECT_TRUE(cut[i].ends_with("#" + std::to_string(i + 1) + "}")) << cut[i];
    EXPECT_LE(DisplayWidth(cut[i]), 60u);
  }
}

TEST(CutNames, NeverNarrowerThanTheMinimumNorSplittingACharacter) {
  const std::string name = "k\u00e9rnel_" + std::string(100, 'a') + "_\u00e9nd";
  static_assert(kMinCutWidth < 100);
  const std::vector<std::string> cut = CutNames({name, name}, 3);
  EXPECT_EQ(DisplayWidth(cut[0]), kMinCutWidth);
  EXPECT_TRUE(cut[0].starts_with("k\u00e9rnel_")) << cut[0];
  EXPECT_TRUE(cut[0].ends_with("_\u00e9nd")) << cut[0];
}

// A list is cut by whole items, the rest counted, never through an item's figure.
TEST(DisplayNameTest, ListsAreCutByWholeItems) {
  const std::string list = "zeEventHostSynchronize 5.91 ms, zeFenceReset 79.93 us, zeCommandListReset 1.2 us";
  EXPECT_EQ(CutList(list, 200), list);
  EXPECT_EQ(CutList(list, 62), "zeEventHostSynchronize 5.91 ms, zeFenceReset 79.93 us, +1 more");
  EXPECT_EQ(CutList(list, 61), "zeEventHostSynchronize 5.91 ms, +2 more");
  EXPECT_EQ(CutList(list, 40), "zeEventHostSynchronize 5.91 ms, +2 more");
  // Not even the first item with its count fits: that item cut in its middle, its figure and
  // the count kept.
  const std::string longer = "zeEventHostSynchronize 262.51 us, zeFenceReset 79.93 us, x 1 us";
  const std::string first_cut = CutList(longer, 40);
  EXPECT_LE(DisplayWidth(first_cut), 40u) << first_cut;
  EXPECT_TRUE(first_cut.starts_with("zeEvent")) << first_cut;
  EXPECT_TRUE(first_cut.ends_with("262.51 us, +2 more")) << first_cut;
  EXPECT_NE(first_cut.find(kCutMark), std::string::npos) << first_cut;
  // A single call too wide: its name cut the same way, its figure kept.
  EXPECT_EQ(CutList("zeCommandListAppendLaunchKernel 1.50 us", 24), "zeCommandListAp\u2026 1.50 us");
  // Narrower than any name with its figure: the calls counted.
  EXPECT_EQ(CutList(longer, 19), "3 calls");
  EXPECT_EQ(CutList("zeCommandListAppendLaunchKernel 1.50 us", 12), "1 call");
}

}  // namespace
}  // namespace xtrace::report

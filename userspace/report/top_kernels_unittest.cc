// Tests of the capture summary's top kernels.
#include "report/top_kernels.h"

#include <gtest/gtest.h>

namespace xtrace::report {
namespace {

DeviceOp Kernel(StringId name, uint64_t ns, bool measured = true) {
  DeviceOp op;
  op.name = name;
  op.start_ns = 1'000'000;
  op.end_ns = op.start_ns + ns;
  op.measured = measured;
  return op;
}

TEST(TopKernelsTest, RanksKernelsByMeasuredTimeAndKeepsEstimatesApart) {
  StringTable strings;
  TopKernels top;
  for (int i = 0; i < 3; ++i) top.Add(Kernel(strings.Intern("gemm"), 2'000'000), strings);
  top.Add(Kernel(strings.Intern("softmax"), 1'000'000), strings);
  top.Add(Kernel(strings.Intern("tiny"), 1'000), strings);
  top.Add(Kernel(strings.Intern("softmax"), 9'000'000, false), strings);
  DeviceOp copy = Kernel(strings.Intern("zeCommandListAppendMemoryCopy"), 50'000'000);
  copy.kind = DeviceOpKind::kCopy;
  top.Add(copy, strings);                            // not a kernel
  top.Add(ThreadInfo{.pid = 1, .tid = 1}, strings);  // not a device operation
  const std::string text = top.Format(2);
  EXPECT_EQ(text,
            "Top 2 kernels by device time:\n"
            "   85.7%     6.00 ms        3 calls  avg    2.00 ms  gemm\n"
            "   14.3%     1.00 ms        2 calls  avg    1.00 ms  softmax\n"
            "  (1 kernel runs had no timestamps: not in these times; their host-side bound is "
            "9.00 ms)\n"
            "  'xtrace report LOG' shows every kernel, API call and idle gap.\n");
  EXPECT_EQ(TopKernels().Format(5), "");
}

// A kernel none of whose runs had timestamps shows its bound, marked as one, not "0.0% 0 ns";
// names are demangled.
TEST(TopKernelsTest, AKernelWithoutTimestampsShowsItsBound) {
  StringTable strings;
  TopKernels top;
  top.Add(Kernel(strings.Intern("gemm"), 2'000'000), strings);
  top.Add(Kernel(strings.Intern("_ZTS12VectorAddKer"), 3'000'000, false), strings);
  top.Add(Kernel(strings.Intern("_ZTS12VectorAddKer"), 1'000'000, false), strings);
  EXPECT_EQ(top.Format(5),
            "Top 2 kernels by device time:\n"
            "  100.0%     2.00 ms        1 calls  avg    2.00 ms  gemm\n"
            "   bound     4.00 ms        2 calls  avg          -  VectorAddKer\n"
            "  (2 kernel runs had no timestamps: not in these times; their host-side bound is "
            "4.00 ms)\n"
            "  'xtrace report LOG' shows every kernel, API call and idle gap.\n");
}

}  // namespace
}  // namespace xtrace::report

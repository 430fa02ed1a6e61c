// Tests for correlate/api_call_builder: record words become the event arguments the table
// describes (registers, descriptor words, outputs, derived sizes, clamped output arrays).
#include "correlate/api_call_builder.h"

#include <gtest/gtest.h>

#include <cstring>

namespace xtrace {
namespace {

DecodedZeCall Call(uint16_t fn) {
  DecodedZeCall r{};
  r.hdr.type = XT_REC_ZE_CALL;
  r.hdr.pid = 7;
  r.hdr.tid = 8;
  r.hdr.start_ns = 1000;
  r.hdr.end_ns = 1500;
  r.fn = fn;
  return r;
}

void SetWord32(DecodedZeCall& r, int index, uint32_t v) {
  std::memcpy(reinterpret_cast<char*>(r.data) + 4 * index, &v, 4);
}

TEST(ApiCallBuilder, AppendTakesRegistersInTableOrder) {
  auto r = Call(XT_ZE_APPEND_MEMORY_COPY);  // (cl, dst, src, size, signal, num_wait)
  const uint64_t regs[] = {0xc1, 0xd57, 0x5c, 4096, 0xe1, 2};
  std::memcpy(r.arg, regs, sizeof(regs));
  r.result = 0x78000004;
  r.hdr.flags = XT_FLAG_ARG_UNREADABLE;
  ApiCall c = BuildApiCall(r);
  EXPECT_EQ(c.pid, 7u);
  EXPECT_EQ(c.tid, 8u);
  EXPECT_EQ(c.start_ns, 1000u);
  EXPECT_EQ(c.end_ns, 1500u);
  EXPECT_EQ(c.fn, XT_ZE_APPEND_MEMORY_COPY);
  EXPECT_EQ(c.result, 0x78000004);
  EXPECT_TRUE(c.args_unreadable);
  const uint64_t want[] = {0xc1, 0xe1, 2, 0xd57, 0x5c, 4096};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.arg[i], want[i]) << i;
}

TEST(ApiCallBuilder, StackArgumentsAndRegionSize) {
  auto r = Call(XT_ZE_APPEND_MEMORY_COPY_REGION);
  r.arg[0] = 0xc1;
  r.arg[1] = 0xd57;
  r.arg[5] = 0x5c;
  r.arg[6] = 0xe1;  // hSignalEvent, copied from the stack
  r.arg[7] = 3;     // numWaitEvents
  SetWord32(r, 3, 64);  // width
  SetWord32(r, 4, 16);  // height
  SetWord32(r, 5, 0);   // depth 0: a 2D copy
  ApiCall c = BuildApiCall(r);
  EXPECT_EQ(c.arg[1], 0xe1u);
  EXPECT_EQ(c.arg[2], 3u);
  EXPECT_EQ(c.arg[5], 64u * 16u);
  SetWord32(r, 5, 4);
  EXPECT_EQ(BuildApiCall(r).arg[5], 64u * 16u * 4u);
}

TEST(ApiCallBuilder, DescriptorFieldsAndCreatedHandle) {
  auto r = Call(XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE);
  r.arg[0] = 0xc0;
  r.arg[1] = 0xde;
  SetWord32(r, 0, 1);  // ordinal
  SetWord32(r, 1, 2);  // index
  SetWord32(r, 3, 1);  // mode: synchronous
  r.data[4] = 0x11e;   // *phCommandList
  ApiCall c = BuildApiCall(r);
  const uint64_t want[] = {0xc0, 0xde, 1, 2, 1, 0x11e};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.arg[i], want[i]) << i;
}

TEST(ApiCallBuilder, OutputArrayIsClampedToItsCount) {
  auto r = Call(XT_ZE_DEVICE_GET);
  r.arg[0] = 0xd1;
  SetWord32(r, 0, 2);  // *pCount
  r.data[4] = 0xa;
  r.data[5] = 0xb;
  r.data[6] = 0xdead;  // beyond the count: whatever followed the array in the caller's memory
  r.data[7] = 0xbeef;
  ApiCall c = BuildApiCall(r);
  EXPECT_EQ(c.arg[1], 2u);
  EXPECT_EQ(c.arg[2], 0xau);
  EXPECT_EQ(c.arg[3], 0xbu);
  EXPECT_EQ(c.arg[4], 0u);
  EXPECT_EQ(c.arg[5], 0u);
}

TEST(ApiCallBuilder, ExecuteTakesItsListsFromTheRecord) {
  const uint64_t lists[] = {0x1001, 0x1002};
  DecodedZeExecute r{};
  r.hdr.pid = 3;
  r.hdr.flags = XT_FLAG_TRUNCATED;
  r.queue = 0x9;
  r.fence = 0xf;
  r.num_lists = 70;
  r.lists_copied = 2;
  r.lists = reinterpret_cast<const std::byte*>(lists);
  ApiCall c = BuildApiCall(r);
  EXPECT_EQ(c.fn, XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS);
  EXPECT_EQ(c.arg[0], 0x9u);
  EXPECT_EQ(c.arg[1], 0xfu);
  EXPECT_EQ(c.arg[2], 70u);
  EXPECT_EQ(c.arg[3], 0x1001u);
  EXPECT_TRUE(c.truncated);
  EXPECT_EQ(r.list(1), 0x1002u);
  EXPECT_EQ(r.list(2), 0u);
}

}  // namespace
}  // namespace xtrace

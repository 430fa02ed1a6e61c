// Tests for model/ze_api_views: a named argument is read from the slot the table gives it,
// typed by how the probe read it; GetOrZero, output arrays, and dispatch by function id.
// (That each name the device timeline reads is the Level Zero parameter it means is tested,
// from raw records, in correlate/device_timeline_calls_unittest.cc.)
#include "model/ze_api_views.h"

#include <gtest/gtest.h>

#include <type_traits>
#include <vector>

namespace xtrace {
namespace {

// Every slot holds a value that says which slot it is.
ApiCall SlotNumbered(uint16_t fn) {
  ApiCall c;
  c.fn = fn;
  c.pid = 5;
  c.tid = 6;
  c.start_ns = 100;
  c.end_ns = 200;
  for (int i = 0; i < kApiCallArgs; ++i) c.arg[i] = 0x100 + i;
  return c;
}

static_assert(ZeCall<XT_ZE_COMMAND_QUEUE_CREATE>::Has<"device">);
static_assert(!ZeCall<XT_ZE_COMMAND_QUEUE_CREATE>::Has<"event">);
static_assert(!ZeCall<XT_ZE_APPEND_WAIT_ON_EVENTS>::Has<"signal_event">);
static_assert(IsZeAppend(XT_ZE_APPEND_MEMORY_COPY) && IsZeAppend(XT_ZE_APPEND_QUERY_KERNEL_TIMESTAMPS));
static_assert(!IsZeAppend(XT_ZE_COMMAND_LIST_CREATE));

TEST(ZeApiViews, NamedArgumentReadsTheTableSlot) {
  // Checked against the table rather than written out: every named argument of every
  // function reads its own slot.
  for (const ZeApiInfo& api : ZeApiTable()) {
    for (int i = 0; i < kApiCallArgs; ++i) {
      if (!api.args[i].name) {
        EXPECT_NE(ZeArgSlot(api.fn, "unnamed"), i);
        continue;
      }
      EXPECT_EQ(ZeArgSlot(api.fn, api.args[i].name), i) << api.symbol << " " << api.args[i].name;
    }
  }
  EXPECT_EQ(ZeArgSlot(XT_ZE_COMMAND_QUEUE_CREATE, "no such argument"), -1);
  EXPECT_EQ(ZeArgSlot(0, "device"), -1);
  EXPECT_EQ(ZeArgSlot(XT_ZE_FN_COUNT, "device"), -1);

  const ApiCall call = SlotNumbered(XT_ZE_COMMAND_QUEUE_CREATE);
  const ZeCall<XT_ZE_COMMAND_QUEUE_CREATE> c(call);
  EXPECT_EQ(c.Get<"context">(), 0x100u);
  EXPECT_EQ(c.Get<"device">(), 0x101u);
  EXPECT_EQ(c.Get<"ordinal">(), 0x102u);
  EXPECT_EQ(c.Get<"index">(), 0x103u);
  EXPECT_EQ(c.Get<"mode">(), 0x104u);
  EXPECT_EQ(c.Get<"command_queue">(), 0x105u);
  EXPECT_EQ(c.pid(), 5u);
  EXPECT_EQ(c.tid(), 6u);
  EXPECT_EQ(c.start_ns(), 100u);
  EXPECT_EQ(c.end_ns(), 200u);
  EXPECT_TRUE(c.ok());
}

TEST(ZeApiViews, ThirtyTwoBitFieldsReadAsThirtyTwoBits) {
  ApiCall call = SlotNumbered(XT_ZE_COMMAND_QUEUE_CREATE);
  call.arg[2] = 0x1'0000'0007;  // a descriptor word is 32 bits: nothing above them
  const ZeCall<XT_ZE_COMMAND_QUEUE_CREATE> c(call);
  static_assert(std::is_same_v<decltype(c.Get<"ordinal">()), uint32_t>);
  static_assert(std::is_same_v<decltype(c.Get<"command_queue">()), uint64_t>);
  static_assert(std::is_same_v<decltype(c.Get<"device">()), uint64_t>);
  EXPECT_EQ(c.Get<"ordinal">(), 7u);
}

TEST(ZeApiViews, GetOrZeroForAFunctionWithoutTheArgument) {
  const ApiCall wait = SlotNumbered(XT_ZE_APPEND_WAIT_ON_EVENTS);
  EXPECT_EQ(ZeCall<XT_ZE_APPEND_WAIT_ON_EVENTS>(wait).GetOrZero<"signal_event">(), 0u);
  const ApiCall barrier = SlotNumbered(XT_ZE_APPEND_BARRIER);
  EXPECT_EQ(ZeCall<XT_ZE_APPEND_BARRIER>(barrier).GetOrZero<"signal_event">(), 0x101u);
}

TEST(ZeApiViews, ElementsStopAtTheCount) {
  ApiCall call = SlotNumbered(XT_ZE_DEVICE_GET);  // driver, count, device0..3
  call.arg[1] = 2;
  auto devices = ZeCall<XT_ZE_DEVICE_GET>(call).Elements();
  EXPECT_EQ(std::vector<uint64_t>(devices.begin(), devices.end()),
            (std::vector<uint64_t>{0x102, 0x103}));
  call.arg[1] = 1000;  // more than the record holds
  EXPECT_EQ(ZeCall<XT_ZE_DEVICE_GET>(call).Elements().size(), 4u);
  call.arg[1] = 0;
  EXPECT_TRUE(ZeCall<XT_ZE_DEVICE_GET>(call).Elements().empty());
}

// Notes the function of every call it is handed; one function has an overload of its own.
struct Visitor {
  std::vector<uint16_t>* seen;
  uint64_t* queue;
  template <uint16_t Fn>
  void operator()(const ZeCall<Fn>& c) {
    EXPECT_EQ(c.call().fn, Fn);
    seen->push_back(Fn);
  }
  void operator()(const ZeCall<XT_ZE_COMMAND_QUEUE_DESTROY>& c) {
    seen->push_back(XT_ZE_COMMAND_QUEUE_DESTROY);
    *queue = c.Get<"command_queue">();
  }
};

TEST(ZeApiViews, VisitHandsEachCallToTheViewOfItsFunction) {
  std::vector<uint16_t> seen;
  uint64_t queue = 0;
  for (const ZeApiInfo& api : ZeApiTable())
    EXPECT_TRUE(VisitZeCall(SlotNumbered(api.fn), Visitor{&seen, &queue})) << api.symbol;
  ASSERT_EQ(seen.size(), ZeApiTable().size());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], ZeApiTable()[i].fn);
  EXPECT_EQ(queue, 0x100u);

  seen.clear();
  EXPECT_FALSE(VisitZeCall(SlotNumbered(0), Visitor{&seen, &queue}));
  EXPECT_FALSE(VisitZeCall(SlotNumbered(XT_ZE_FN_COUNT), Visitor{&seen, &queue}));
  EXPECT_TRUE(seen.empty());
}

}  // namespace
}  // namespace xtrace

// Tests for model/ze_api: the table's descriptor offsets against the real Level Zero header,
// the cookie encoding against the macros the BPF programs decode it with, and its invariants.
#include "model/ze_api.h"

#include <gtest/gtest.h>
#include <level_zero/ze_api.h>

#include <cstddef>
#include <set>
#include <string>

namespace xtrace {
namespace {

const ZeApiInfo& Api(uint16_t fn) {
  const ZeApiInfo* api = FindZeApi(fn);
  EXPECT_NE(api, nullptr) << fn;
  static const ZeApiInfo kNone{};
  return api ? *api : kNone;
}

TEST(ZeApi, EveryFunctionHasOneEntryInIdOrder) {
  std::set<std::string> symbols;
  for (const ZeApiInfo& api : ZeApiTable()) {
    EXPECT_EQ(FindZeApi(api.fn), &api);
    EXPECT_TRUE(symbols.insert(api.symbol).second) << api.symbol;
    EXPECT_EQ(std::string(api.symbol).rfind("ze", 0), 0u);
  }
  EXPECT_EQ(ZeApiTable().size(), size_t{XT_ZE_FN_COUNT - 1});
  EXPECT_EQ(FindZeApi(0), nullptr);
  EXPECT_EQ(FindZeApi(XT_ZE_FN_COUNT), nullptr);
}

// The table's habits (see its comment): correlation reads by name, but the log keeps these
// positions, so an entry that broke them would have moved an argument.
TEST(ZeApi, ArgumentConventionsHold) {
  for (const ZeApiInfo& api : ZeApiTable()) {
    const std::string symbol = api.symbol;
    const bool in_append_range =
        (api.fn >= XT_ZE_APPEND_MEMORY_COPY && api.fn <= XT_ZE_APPEND_QUERY_KERNEL_TIMESTAMPS) ||
        api.fn == XT_ZE_APPEND_LAUNCH_MULTIPLE_KERNELS_INDIRECT ||
        api.fn == XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP || api.fn == XT_ZE_APPEND_HOST_FUNCTION ||
        api.fn == XT_ZE_EX_APPEND_HOST_FUNCTION;
    const bool append = symbol.find("zeCommandListAppend") == 0 ||
                        symbol.find("zexCommandListAppend") == 0;
    EXPECT_EQ(append, in_append_range) << symbol;
    if (append) {
      ASSERT_NE(api.args[0].name, nullptr) << symbol;
      EXPECT_STREQ(api.args[0].name, "command_list") << symbol;
      if (api.args[1].name) {
        EXPECT_STREQ(api.args[1].name, "signal_event") << symbol;
      }
      if (api.args[2].name) {
        EXPECT_STREQ(api.args[2].name, "num_wait_events") << symbol;
      }
    }
    const bool creates = symbol.find("Create") != std::string::npos ||
                         symbol.find("zeMemAlloc") == 0;
    if (creates) {
      ASSERT_NE(api.args[5].name, nullptr) << symbol;
      EXPECT_TRUE(api.args[5].hex) << symbol;
      EXPECT_TRUE(api.reads[1].output) << symbol;
    }
    for (const ZeRead& r : api.reads) {
      EXPECT_EQ(r.size % 4, 0) << symbol;
      EXPECT_LE(r.size, XT_ZE_READ_MAX) << symbol;
      EXPECT_LT(r.arg, XT_ZE_CALL_ARGS) << symbol;
      if (r.arg >= 6 && r.size > 0) {
        EXPECT_LT(r.arg - 6, api.stack_count) << symbol << ": reads a stack argument not copied";
      }
    }
  }
}

TEST(ZeApi, CookieDecodesWithTheBpfMacros) {
  for (const ZeApiInfo& api : ZeApiTable()) {
    const uint64_t c = ZeProbeCookie(api);
    EXPECT_EQ(XT_ZE_COOKIE_FN(c), api.fn);
    EXPECT_EQ(XT_ZE_COOKIE_STACK_COUNT(c), api.stack_count) << api.symbol;
    if (api.stack_count) {
      EXPECT_EQ(XT_ZE_COOKIE_STACK_FIRST(c), api.stack_first) << api.symbol;
    }
    for (int i = 0; i < 2; ++i) {
      const uint32_t r = XT_ZE_COOKIE_READ(c, i);
      EXPECT_EQ(XT_ZE_READ_SIZE(r), api.reads[i].size) << api.symbol;
      if (api.reads[i].size == 0) continue;
      EXPECT_EQ(XT_ZE_READ_ARG(r), api.reads[i].arg) << api.symbol;
      EXPECT_EQ(XT_ZE_READ_OFFSET(r), api.reads[i].offset) << api.symbol;
      EXPECT_EQ(XT_ZE_READ_OUTPUT(r), api.reads[i].output ? 1u : 0u) << api.symbol;
    }
  }
}

// The reads name struct fields by offset: check them against level_zero/ze_api.h.
TEST(ZeApi, DescriptorOffsetsMatchTheHeader) {
  EXPECT_EQ(Api(XT_ZE_COMMAND_QUEUE_CREATE).reads[0].offset,
            offsetof(ze_command_queue_desc_t, ordinal));
  EXPECT_EQ(offsetof(ze_command_queue_desc_t, ordinal) + 4 * 4,
            offsetof(ze_command_queue_desc_t, priority));
  EXPECT_EQ(Api(XT_ZE_COMMAND_QUEUE_CREATE).reads[0].size,
            offsetof(ze_command_queue_desc_t, priority) + 4 - offsetof(ze_command_queue_desc_t, ordinal));
  EXPECT_EQ(offsetof(ze_command_queue_desc_t, mode) - offsetof(ze_command_queue_desc_t, ordinal),
            3u * 4);  // D32(3) is mode
  EXPECT_EQ(Api(XT_ZE_COMMAND_LIST_CREATE).reads[0].offset,
            offsetof(ze_command_list_desc_t, commandQueueGroupOrdinal));
  EXPECT_EQ(offsetof(ze_command_list_desc_t, flags),
            offsetof(ze_command_list_desc_t, commandQueueGroupOrdinal) + 4);
  EXPECT_EQ(Api(XT_ZE_DEVICE_GET_PROPERTIES).reads[0].offset, offsetof(ze_device_properties_t, uuid));
  EXPECT_EQ(Api(XT_ZE_DEVICE_GET_PROPERTIES).reads[0].size, sizeof(ze_device_uuid_t));
  EXPECT_EQ(Api(XT_ZE_EVENT_POOL_CREATE).reads[0].offset, offsetof(ze_event_pool_desc_t, flags));
  EXPECT_EQ(offsetof(ze_event_pool_desc_t, count), offsetof(ze_event_pool_desc_t, flags) + 4);
  EXPECT_EQ(Api(XT_ZE_EVENT_CREATE).reads[0].offset, offsetof(ze_event_desc_t, index));
  EXPECT_EQ(offsetof(ze_event_desc_t, wait), offsetof(ze_event_desc_t, index) + 8);
  EXPECT_EQ(Api(XT_ZE_MODULE_CREATE).reads[0].offset, offsetof(ze_module_desc_t, format));
  EXPECT_EQ(offsetof(ze_module_desc_t, inputSize), offsetof(ze_module_desc_t, format) + 8);
  EXPECT_EQ(Api(XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP).reads[0].size,
            sizeof(ze_kernel_timestamp_result_t));
  EXPECT_EQ(offsetof(ze_kernel_timestamp_result_t, global) +
                offsetof(ze_kernel_timestamp_data_t, kernelEnd),
            8u);  // D64(1) is global_end
  EXPECT_EQ(Api(XT_ZE_APPEND_MEMORY_COPY_REGION).reads[0].size, sizeof(ze_copy_region_t));
  EXPECT_EQ(offsetof(ze_copy_region_t, width), 3u * 4);
}

// The host call each launch kind is reported as: the entry point the process called.
TEST(ZeApi, NamesEachLaunchKindsEntryPoint) {
  EXPECT_EQ(ZeLaunchSymbol(XT_LAUNCH_PLAIN), "zeCommandListAppendLaunchKernel");
  EXPECT_EQ(ZeLaunchSymbol(XT_LAUNCH_COOPERATIVE), "zeCommandListAppendLaunchCooperativeKernel");
  EXPECT_EQ(ZeLaunchSymbol(XT_LAUNCH_INDIRECT), "zeCommandListAppendLaunchKernelIndirect");
  EXPECT_EQ(ZeLaunchSymbol(XT_LAUNCH_WITH_ARGUMENTS), "zeCommandListAppendLaunchKernelWithArguments");
  EXPECT_EQ(ZeLaunchSymbol(XT_LAUNCH_WITH_PARAMETERS),
            "zeCommandListAppendLaunchKernelWithParameters");
}

TEST(ZeApi, NamesResults) {
  EXPECT_EQ(ZeResultName(ZE_RESULT_SUCCESS), "ZE_RESULT_SUCCESS");
  EXPECT_EQ(ZeResultName(ZE_RESULT_NOT_READY), "ZE_RESULT_NOT_READY");
  EXPECT_EQ(ZeResultName(ZE_RESULT_ERROR_INVALID_KERNEL_NAME), "ZE_RESULT_ERROR_INVALID_KERNEL_NAME");
  EXPECT_EQ(ZeResultName(ZE_RESULT_ERROR_UNKNOWN), "ZE_RESULT_ERROR_UNKNOWN");
  EXPECT_EQ(ZeResultName(12345), "");
}

}  // namespace
}  // namespace xtrace

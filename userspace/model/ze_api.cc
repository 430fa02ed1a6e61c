// The table of recorded Level Zero calls (see ze_api.h; the table itself is in
// ze_api_table.h). ze_api_unittest.cc checks its struct offsets against the real header.
#include "model/ze_api.h"

#include <array>

#include "model/ze_api_table.h"

namespace xtrace {
namespace {

struct ResultName {
  int32_t value;
  std::string_view name;
};

constexpr ResultName kResults[] = {
    {0, "ZE_RESULT_SUCCESS"},
    {1, "ZE_RESULT_NOT_READY"},
    {0x70000001, "ZE_RESULT_ERROR_DEVICE_LOST"},
    {0x70000002, "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY"},
    {0x70000003, "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"},
    {0x70000004, "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"},
    {0x70000005, "ZE_RESULT_ERROR_MODULE_LINK_FAILURE"},
    {0x70000006, "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET"},
    {0x70000007, "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE"},
    {0x70010000, "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS"},
    {0x70010001, "ZE_RESULT_ERROR_NOT_AVAILABLE"},
    {0x70020000, "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE"},
    {0x70020001, "ZE_RESULT_WARNING_DROPPED_DATA"},
    {0x78000001, "ZE_RESULT_ERROR_UNINITIALIZED"},
    {0x78000002, "ZE_RESULT_ERROR_UNSUPPORTED_VERSION"},
    {0x78000003, "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE"},
    {0x78000004, "ZE_RESULT_ERROR_INVALID_ARGUMENT"},
    {0x78000005, "ZE_RESULT_ERROR_INVALID_NULL_HANDLE"},
    {0x78000006, "ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE"},
    {0x78000007, "ZE_RESULT_ERROR_INVALID_NULL_POINTER"},
    {0x78000008, "ZE_RESULT_ERROR_INVALID_SIZE"},
    {0x78000009, "ZE_RESULT_ERROR_UNSUPPORTED_SIZE"},
    {0x7800000a, "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT"},
    {0x7800000b, "ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT"},
    {0x7800000c, "ZE_RESULT_ERROR_INVALID_ENUMERATION"},
    {0x7800000d, "ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION"},
    {0x7800000e, "ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT"},
    {0x7800000f, "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY"},
    {0x78000010, "ZE_RESULT_ERROR_INVALID_GLOBAL_NAME"},
    {0x78000011, "ZE_RESULT_ERROR_INVALID_KERNEL_NAME"},
    {0x78000012, "ZE_RESULT_ERROR_INVALID_FUNCTION_NAME"},
    {0x78000013, "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION"},
    {0x78000014, "ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION"},
    {0x78000015, "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX"},
    {0x78000016, "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE"},
    {0x78000017, "ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE"},
    {0x78000018, "ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED"},
    {0x78000019, "ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE"},
    {0x7800001a, "ZE_RESULT_ERROR_OVERLAPPING_REGIONS"},
    {0x7800001b, "ZE_RESULT_WARNING_ACTION_REQUIRED"},
    {0x7ffffffe, "ZE_RESULT_ERROR_UNKNOWN"},
};

uint64_t ReadBits(const ZeRead& r) {
  if (r.size == 0) return 0;
  return uint64_t{r.arg} | uint64_t{static_cast<uint8_t>(r.size / 4)} << 3 |
         uint64_t{r.offset} << 7 | uint64_t{r.output} << 15;
}

}  // namespace

std::span<const ZeApiInfo> ZeApiTable() { return kZeApiTable; }

std::string_view ZeLaunchSymbol(uint32_t kind) {
  switch (kind) {
    case XT_LAUNCH_COOPERATIVE:
      return "zeCommandListAppendLaunchCooperativeKernel";
    case XT_LAUNCH_INDIRECT:
      return "zeCommandListAppendLaunchKernelIndirect";
    case XT_LAUNCH_WITH_ARGUMENTS:
      return "zeCommandListAppendLaunchKernelWithArguments";
    case XT_LAUNCH_WITH_PARAMETERS:
      return "zeCommandListAppendLaunchKernelWithParameters";
    default:
      return "zeCommandListAppendLaunchKernel";
  }
}

const ZeApiInfo* FindZeApi(uint16_t fn) {
  if (fn == 0 || fn > std::size(kZeApiTable)) return nullptr;
  return &kZeApiTable[fn - 1];
}

uint64_t ZeProbeCookie(const ZeApiInfo& api) {
  uint64_t cookie = api.fn;
  if (api.stack_count > 0) {
    cookie |= uint64_t(api.stack_first - 6) << 8;
    cookie |= uint64_t(api.stack_count) << 12;
  }
  cookie |= ReadBits(api.reads[0]) << 16;
  cookie |= ReadBits(api.reads[1]) << 32;
  return cookie;
}

std::string_view ZeResultName(int32_t result) {
  for (const auto& r : kResults)
    if (r.value == result) return r.name;
  return {};
}

}  // namespace xtrace

// Host API call record types and names; see host_api_calls.h.
#include "correlate/host_api_calls.h"

#include "model/ze_api.h"
#include "xtrace/records.h"

namespace xtrace {
namespace {

// Record types reserved for Level Zero calls (include/xtrace/records.h allocation).
constexpr uint16_t kFirstLevelZeroType = 16;
constexpr uint16_t kLastLevelZeroType = 63;

}  // namespace

bool IsHostApiCall(uint16_t record_type) {
  return record_type == XT_REC_KERNEL_CREATE || record_type == XT_REC_LAUNCH_KERNEL ||
         (record_type >= kFirstLevelZeroType && record_type <= kLastLevelZeroType);
}

std::string_view HostApiCallName(uint16_t record_type) {
  switch (record_type) {
    case XT_REC_KERNEL_CREATE:
      return "zeKernelCreate";
    case XT_REC_LAUNCH_KERNEL:
      return "zeCommandListAppendLaunchKernel";
  }
  return IsHostApiCall(record_type) ? "Level Zero call" : "";
}

std::string_view HostApiCallName(const DecodedRecord& record) {
  if (const auto* c = std::get_if<DecodedZeCall>(&record)) {
    if (const ZeApiInfo* api = FindZeApi(c->fn)) return api->symbol;
  }
  if (const auto* e = std::get_if<DecodedZeExecute>(&record)) {
    if (const ZeApiInfo* api = FindZeApi(e->fn)) return api->symbol;
  }
  if (const auto* l = std::get_if<DecodedLaunchKernel>(&record)) return ZeLaunchSymbol(l->kind);
  return HostApiCallName(HeaderOf(record).type);
}

}  // namespace xtrace

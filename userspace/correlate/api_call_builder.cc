// ApiCall construction from xt_ze_call / xt_ze_execute records (see api_call_builder.h).
#include "correlate/api_call_builder.h"

#include <algorithm>
#include <cstring>

#include "model/ze_api.h"
#include "model/ze_api_views.h"

namespace xtrace {
namespace {

uint32_t Word32(const DecodedZeCall& r, uint8_t index) {
  uint32_t v = 0;
  if (index < XT_ZE_CALL_DATA_WORDS * 2) std::memcpy(&v, reinterpret_cast<const char*>(r.data) + 4 * index, 4);
  return v;
}

uint64_t Resolve(const DecodedZeCall& r, const ZeArgSource& source) {
  switch (source.kind) {
    case ZeArgSource::kNone:
      return 0;
    case ZeArgSource::kArg:
      return source.index < XT_ZE_CALL_ARGS ? r.arg[source.index] : 0;
    case ZeArgSource::kData32:
      return Word32(r, source.index);
    case ZeArgSource::kData64:
      return source.index < XT_ZE_CALL_DATA_WORDS ? r.data[source.index] : 0;
    case ZeArgSource::kRegionBytes:
      // ze_copy_region_t: originX, originY, originZ, width, height, depth; 2D copies pass depth 0.
      return uint64_t{Word32(r, 3)} * Word32(r, 4) * std::max<uint32_t>(Word32(r, 5), 1);
  }
  return 0;
}

ApiCall Begin(const xt_record_header& hdr, uint16_t fn, int32_t result) {
  ApiCall call;
  call.pid = hdr.pid;
  call.tid = hdr.tid;
  call.start_ns = hdr.start_ns;
  call.end_ns = hdr.end_ns;
  call.fn = fn;
  call.result = result;
  call.args_unreadable = (hdr.flags & XT_FLAG_ARG_UNREADABLE) != 0;
  call.truncated = (hdr.flags & XT_FLAG_TRUNCATED) != 0;
  return call;
}

}  // namespace

ApiCall BuildApiCall(const DecodedZeCall& record) {
  ApiCall call = Begin(record.hdr, record.fn, record.result);
  if (const ZeApiInfo* api = FindZeApi(record.fn)) {
    for (int i = 0; i < kApiCallArgs; ++i) call.arg[i] = Resolve(record, api->args[i].source);
    if (api->array_count >= 0) {
      const uint64_t count = call.arg[api->array_count];
      for (int i = api->array_first; i < kApiCallArgs; ++i)
        if (uint64_t(i - api->array_first) >= count) call.arg[i] = 0;
    }
  }
  return call;
}

ApiCall BuildApiCall(const DecodedZeExecute& record) {
  if (record.fn == XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP) {
    constexpr uint16_t kFn = XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP;
    ApiCall call = Begin(record.hdr, kFn, record.result);
    call.arg[kZeArgSlot<kFn, "command_list">] = record.queue;
    call.arg[kZeArgSlot<kFn, "signal_event">] = record.fence;
    call.arg[kZeArgSlot<kFn, "num_wait_events">] = record.num_wait_events;
    call.arg[kZeArgSlot<kFn, "num_command_lists">] = record.num_lists;
    call.arg[kZeArgSlot<kFn, "first_command_list">] = record.list(0);
    return call;
  }
  ApiCall call = Begin(record.hdr, XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS, record.result);
  constexpr uint16_t kFn = XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS;
  call.arg[kZeArgSlot<kFn, "command_queue">] = record.queue;
  call.arg[kZeArgSlot<kFn, "fence">] = record.fence;
  call.arg[kZeArgSlot<kFn, "num_command_lists">] = record.num_lists;
  call.arg[kZeArgSlot<kFn, "command_list">] = record.list(0);  // the first (the record holds all)
  return call;
}

}  // namespace xtrace

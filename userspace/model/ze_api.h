// The Level Zero calls xtrace records as ApiCall events: for each function its id (stored in
// the log), its name, what the generic probe copies (see the cookie layout in records.h) and
// what each of the event's six arguments means. Capture, correlation and export all read
// this one table (its entries are in ze_api_table.h; ze_api_views.h reads an ApiCall's
// arguments by their names in it), so a function's meaning is written down once.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "xtrace/records.h"

namespace xtrace {

inline constexpr int kApiCallArgs = 6;

// A pointer read done at the call's return (descriptor fields, output handles or values).
struct ZeRead {
  uint8_t arg = 0;       // which argument holds the pointer
  uint8_t size = 0;      // bytes, a multiple of 4, at most XT_ZE_READ_MAX; 0: none
  uint8_t offset = 0;    // into the pointed-to struct
  bool output = false;   // written by the call: read only when it succeeded
};

// Where an event argument comes from in an xt_ze_call record.
struct ZeArgSource {
  enum Kind : uint8_t {
    kNone,         // not recorded: 0
    kArg,          // arg[index], as passed
    kData32,       // the index-th 32-bit word of data (read 0: words 0-7, read 1: 8-15)
    kData64,       // the index-th 64-bit word of data (read 0: 0-3, read 1: 4-7)
    kRegionBytes,  // width x height x max(depth, 1) of a ze_copy_region_t read into words 0-5
  };
  Kind kind = kNone;
  uint8_t index = 0;
};

struct ZeArgInfo {
  const char* name = nullptr;  // nullptr: the slot is unused
  bool hex = false;            // handles, pointers and flags print in hex
  ZeArgSource source;
};

struct ZeApiInfo {
  uint16_t fn = 0;  // enum xt_ze_fn
  const char* symbol = nullptr;
  uint8_t stack_first = 6;  // first stack argument to copy into arg[6] (x86-64: from 6)
  uint8_t stack_count = 0;  // 0-2
  ZeRead reads[2] = {};
  ZeArgInfo args[kApiCallArgs] = {};
  // Its return is probed by a program of its own (not the generic one).
  bool dedicated_return = false;
  // Output arrays: event args from array_first on are elements of an array whose length is
  // event arg array_count; elements past it were not written by the call and read as 0.
  int8_t array_count = -1;
  uint8_t array_first = 0;
  // Intel's extension, exported by no loader: an application calls it through the pointer
  // zeDriverGetExtensionFunctionAddress hands out, so it is probed in the driver file.
  bool driver_only = false;
  // Newer than the loaders in use: exported by the loaders that have it, and handed out by
  // the driver (zeDriverGetExtensionFunctionAddress) to processes whose loader lacks it, so
  // it is probed in both files (a call through both is recorded once).
  bool also_in_driver = false;
};

// Every function recorded as an ApiCall, in enum xt_ze_fn order.
std::span<const ZeApiInfo> ZeApiTable();

// The entry for `fn`, or nullptr for an id this build does not know.
const ZeApiInfo* FindZeApi(uint16_t fn);

// The uprobe cookie that makes the generic BPF programs copy what `api` describes.
uint64_t ZeProbeCookie(const ZeApiInfo& api);

// The entry point of a launch (enum xt_launch_kind): "zeCommandListAppendLaunchKernel", ...
std::string_view ZeLaunchSymbol(uint32_t kind);

// "ZE_RESULT_ERROR_INVALID_ARGUMENT" for a ze_result_t; "" for one this build does not know.
std::string_view ZeResultName(int32_t result);

}  // namespace xtrace

// Level Zero events beyond kernel creation and launch: every other recorded API call, and
// (from correlation) what ran on the device, device clocks and memory in use.
#pragma once

#include <cstdint>

#include "model/string_table.h"

namespace xtrace {

// A Level Zero call other than zeKernelCreate and the kernel launches: which function (enum
// xt_ze_fn, described in model/ze_api.h, which also names the six arguments), its result and
// its arguments as ze_api.h's table gives them their meaning.
struct ApiCall {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint16_t fn = 0;
  int32_t result = 0;  // ze_result_t
  uint64_t arg[6] = {0, 0, 0, 0, 0, 0};
  bool args_unreadable = false;  // a pointer argument could not be read
  bool truncated = false;        // a list argument was longer than the probe copies
};

}  // namespace xtrace

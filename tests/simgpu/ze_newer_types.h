// Level Zero types newer than the headers this builds against (bookworm's end at 1.4), as the
// specification lays them out (x86-64): one declaration for the simulated driver, its tests
// and the workloads that call the newer entry points.
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>

namespace ze_newer {

// ze_group_size_t (1.14): the group size a launch with arguments carries by value.
struct GroupSize {
  uint32_t x, y, z;
};

// ze_init_driver_type_desc_t (1.10): stype, pNext, flags (ZE_INIT_DRIVER_TYPE_FLAG_GPU = 1).
struct InitDriverTypeDesc {
  ze_structure_type_t stype;
  const void* pNext;
  uint32_t flags;
};
inline constexpr auto kStructureTypeInitDriverTypeDesc = static_cast<ze_structure_type_t>(0x00020021);
inline constexpr uint32_t kInitDriverTypeGpu = 1;

// ze_event_counter_based_desc_t (1.14) and Intel's zex_counter_based_event_desc_t: the same
// layout and flag bits.
struct CounterBasedEventDesc {
  ze_structure_type_t stype;
  const void* pNext;
  uint32_t flags;
  ze_event_scope_flags_t signal;
  ze_event_scope_flags_t wait;
};
inline constexpr auto kStructureTypeCounterBasedEventDesc =
    static_cast<ze_structure_type_t>(0x0003001c);
inline constexpr uint32_t kCounterBasedImmediate = 1, kCounterBasedNonImmediate = 2,
                          kCounterBasedHostVisible = 4, kCounterBasedIpc = 8,
                          kCounterBasedKernelTimestamp = 16, kCounterBasedMappedTimestamp = 32;

}  // namespace ze_newer

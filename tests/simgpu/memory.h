// Device, host and shared allocations. The simulated GPU shares the host's memory, so every
// allocation is real host memory; the registry remembers what kind each one claims to be.
#pragma once

#include <level_zero/ze_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace simze {

struct Device;

struct Allocation {
  void* base;
  size_t size;
  ze_memory_type_t type;
  Device* device;  // null for host allocations
  uint64_t id;
};

// ZE_RESULT_SUCCESS and *out set, or the error the Level Zero spec names.
ze_result_t memory_allocate(size_t size, size_t alignment, ze_memory_type_t type, Device* device,
                            void** out);
bool memory_free(void* ptr);
// Finds the allocation containing ptr (interior pointers too, as Intel's driver does).
std::optional<Allocation> memory_lookup(const void* ptr);

inline constexpr uint64_t kMaxAllocSize = uint64_t{4} << 30;  // maxMemAllocSize

}  // namespace simze

// Allocation registry: an ordered map from base address so interior pointers resolve.
#include "memory.h"

#include <cstdlib>
#include <map>
#include <mutex>

namespace simze {
namespace {

std::mutex& registry_mutex() {
  static std::mutex* const m = new std::mutex;
  return *m;
}
std::map<uintptr_t, Allocation>& registry() {
  static auto* const r = new std::map<uintptr_t, Allocation>;
  return *r;
}
uint64_t next_id = 1;  // guarded by registry_mutex()

}  // namespace

ze_result_t memory_allocate(size_t size, size_t alignment, ze_memory_type_t type, Device* device,
                            void** out) {
  if (out == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0 || size > kMaxAllocSize) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (alignment != 0 && (alignment & (alignment - 1)) != 0) {
    return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  }
  // Intel's driver aligns to at least a cache line (device allocations to pages).
  size_t align = alignment < 64 ? 64 : alignment;
  if (type != ZE_MEMORY_TYPE_HOST && align < 4096) align = 4096;
  size_t rounded = (size + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (p == nullptr) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  std::lock_guard lock(registry_mutex());
  registry()[reinterpret_cast<uintptr_t>(p)] = {p, size, type, device, next_id++};
  *out = p;
  return ZE_RESULT_SUCCESS;
}

bool memory_free(void* ptr) {
  {
    std::lock_guard lock(registry_mutex());
    if (registry().erase(reinterpret_cast<uintptr_t>(ptr)) == 0) return false;
  }
  std::free(ptr);
  return true;
}

std::optional<Allocation> memory_lookup(const void* ptr) {
  auto addr = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard lock(registry_mutex());
  auto it = registry().upper_bound(addr);
  if (it == registry().begin()) return std::nullopt;
  --it;
  if (addr >= it->first + it->second.size) return std::nullopt;
  return it->second;
}

}  // namespace simze

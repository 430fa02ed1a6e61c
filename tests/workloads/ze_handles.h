// Owning wrappers for Level Zero handles used by ze_workload: each object is destroyed
// exactly once, in reverse order of creation, and a failing destroy is reported by name
// (a driver that rejects a destroy is a bug the tests should see).
#pragma once

#include <level_zero/ze_api.h>

#include <cstddef>
#include <utility>

#include "ze_result.h"

namespace xtrace::workloads {

template <typename Handle, ze_result_t (*Destroy)(Handle), const char* Name>
class ZeOwned {
 public:
  ZeOwned() = default;
  ~ZeOwned() { reset(); }
  ZeOwned(ZeOwned&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  ZeOwned& operator=(ZeOwned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ZeOwned(const ZeOwned&) = delete;
  ZeOwned& operator=(const ZeOwned&) = delete;

  Handle get() const { return handle_; }
  // For create calls: zeFooCreate(..., x.out()).
  Handle* out() {
    reset();
    return &handle_;
  }
  void reset() {
    if (handle_) {
      ze_result_t r = Destroy(std::exchange(handle_, nullptr));
      if (r != ZE_RESULT_SUCCESS) ze_fail(Name, r);
    }
  }

 private:
  Handle handle_ = nullptr;
};

namespace destroy_names {
inline constexpr char kContext[] = "zeContextDestroy";
inline constexpr char kModule[] = "zeModuleDestroy";
inline constexpr char kBuildLog[] = "zeModuleBuildLogDestroy";
inline constexpr char kKernel[] = "zeKernelDestroy";
inline constexpr char kQueue[] = "zeCommandQueueDestroy";
inline constexpr char kList[] = "zeCommandListDestroy";
inline constexpr char kFence[] = "zeFenceDestroy";
inline constexpr char kEventPool[] = "zeEventPoolDestroy";
inline constexpr char kEvent[] = "zeEventDestroy";
}  // namespace destroy_names

using ZeContext = ZeOwned<ze_context_handle_t, zeContextDestroy, destroy_names::kContext>;
using ZeModule = ZeOwned<ze_module_handle_t, zeModuleDestroy, destroy_names::kModule>;
using ZeBuildLog =
    ZeOwned<ze_module_build_log_handle_t, zeModuleBuildLogDestroy, destroy_names::kBuildLog>;
using ZeKernel = ZeOwned<ze_kernel_handle_t, zeKernelDestroy, destroy_names::kKernel>;
using ZeQueue = ZeOwned<ze_command_queue_handle_t, zeCommandQueueDestroy, destroy_names::kQueue>;
using ZeList = ZeOwned<ze_command_list_handle_t, zeCommandListDestroy, destroy_names::kList>;
using ZeFence = ZeOwned<ze_fence_handle_t, zeFenceDestroy, destroy_names::kFence>;
using ZeEventPool = ZeOwned<ze_event_pool_handle_t, zeEventPoolDestroy, destroy_names::kEventPool>;
using ZeEvent = ZeOwned<ze_event_handle_t, zeEventDestroy, destroy_names::kEvent>;

// A USM allocation (device, host or shared) freed with zeMemFree in its context.
class ZeMemory {
 public:
  ZeMemory() = default;
  ~ZeMemory() { reset(); }
  ZeMemory(ZeMemory&& other) noexcept
      : context_(other.context_), ptr_(std::exchange(other.ptr_, nullptr)) {}
  ZeMemory& operator=(ZeMemory&& other) noexcept {
    if (this != &other) {
      reset();
      context_ = other.context_;
      ptr_ = std::exchange(other.ptr_, nullptr);
    }
    return *this;
  }
  ZeMemory(const ZeMemory&) = delete;
  ZeMemory& operator=(const ZeMemory&) = delete;

  static ZeMemory device(ze_context_handle_t ctx, ze_device_handle_t dev, std::size_t size) {
    ze_device_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
    ZeMemory m(ctx);
    ZE_CHECK(zeMemAllocDevice(ctx, &desc, size, 64, dev, &m.ptr_));
    return m;
  }
  static ZeMemory host(ze_context_handle_t ctx, std::size_t size) {
    ze_host_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    ZeMemory m(ctx);
    ZE_CHECK(zeMemAllocHost(ctx, &desc, size, 64, &m.ptr_));
    return m;
  }
  static ZeMemory shared(ze_context_handle_t ctx, ze_device_handle_t dev, std::size_t size) {
    ze_device_mem_alloc_desc_t ddesc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
    ze_host_mem_alloc_desc_t hdesc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    ZeMemory m(ctx);
    ZE_CHECK(zeMemAllocShared(ctx, &ddesc, &hdesc, size, 64, dev, &m.ptr_));
    return m;
  }

  void* get() const { return ptr_; }
  void reset() {
    if (ptr_) {
      ze_result_t r = zeMemFree(context_, std::exchange(ptr_, nullptr));
      if (r != ZE_RESULT_SUCCESS) ze_fail("zeMemFree", r);
    }
  }

 private:
  explicit ZeMemory(ze_context_handle_t ctx) : context_(ctx) {}
  ze_context_handle_t context_ = nullptr;
  void* ptr_ = nullptr;
};

}  // namespace xtrace::workloads

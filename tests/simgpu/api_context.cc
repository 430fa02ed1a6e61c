// Contexts and memory allocation. Residency calls succeed trivially: all memory is host memory
// and always resident.
#include "api.h"
#include "memory.h"
#include "objects.h"

namespace simze::api {

ze_result_t ContextCreate(ze_driver_handle_t hDriver, const ze_context_desc_t* desc,
                          ze_context_handle_t* phContext) {
  Driver* d = from_handle<Driver>(hDriver);
  if (d == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || phContext == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  auto* c = new Context;
  c->driver = d;
  *phContext = to_handle<ze_context_handle_t>(c);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ContextCreateEx(ze_driver_handle_t hDriver, const ze_context_desc_t* desc,
                            uint32_t numDevices, ze_device_handle_t* phDevices,
                            ze_context_handle_t* phContext) {
  for (uint32_t i = 0; i < numDevices; ++i) {
    if (phDevices == nullptr || from_handle<Device>(phDevices[i]) == nullptr) {
      return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
  }
  return ContextCreate(hDriver, desc, phContext);
}

ze_result_t ContextDestroy(ze_context_handle_t hContext) {
  Context* c = from_handle<Context>(hContext);
  if (c == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete c;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ContextGetStatus(ze_context_handle_t hContext) {
  return from_handle<Context>(hContext) == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_HANDLE
                                                   : ZE_RESULT_SUCCESS;
}

ze_result_t ContextSystemBarrier(ze_context_handle_t hContext, ze_device_handle_t hDevice) {
  if (from_handle<Context>(hContext) == nullptr || from_handle<Device>(hDevice) == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t ContextMakeMemoryResident(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                      void* ptr, size_t) {
  if (from_handle<Context>(hContext) == nullptr || from_handle<Device>(hDevice) == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  return ptr == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_POINTER : ZE_RESULT_SUCCESS;
}

ze_result_t ContextEvictMemory(ze_context_handle_t hContext, ze_device_handle_t hDevice, void* ptr,
                               size_t size) {
  return ContextMakeMemoryResident(hContext, hDevice, ptr, size);
}

ze_result_t MemAllocShared(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t* device_desc,
                           const ze_host_mem_alloc_desc_t* host_desc, size_t size, size_t alignment,
                           ze_device_handle_t hDevice, void** pptr) {
  if (from_handle<Context>(hContext) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (device_desc == nullptr || host_desc == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // A shared allocation may be made without a device (then it is shared by all of them).
  Device* dev = hDevice == nullptr ? nullptr : from_handle<Device>(hDevice);
  if (hDevice != nullptr && dev == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return memory_allocate(size, alignment, ZE_MEMORY_TYPE_SHARED, dev, pptr);
}

ze_result_t MemAllocDevice(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t* device_desc,
                           size_t size, size_t alignment, ze_device_handle_t hDevice, void** pptr) {
  Device* dev = from_handle<Device>(hDevice);
  if (from_handle<Context>(hContext) == nullptr || dev == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  if (device_desc == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return memory_allocate(size, alignment, ZE_MEMORY_TYPE_DEVICE, dev, pptr);
}

ze_result_t MemAllocHost(ze_context_handle_t hContext, const ze_host_mem_alloc_desc_t* host_desc,
                         size_t size, size_t alignment, void** pptr) {
  if (from_handle<Context>(hContext) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (host_desc == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return memory_allocate(size, alignment, ZE_MEMORY_TYPE_HOST, nullptr, pptr);
}

ze_result_t MemFree(ze_context_handle_t hContext, void* ptr) {
  if (from_handle<Context>(hContext) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (ptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return memory_free(ptr) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t MemFreeExt(ze_context_handle_t hContext, const ze_memory_free_ext_desc_t* desc,
                       void* ptr) {
  if (desc == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // Execution is in order per queue and work never outlives its submission for long; both
  // free policies (deferred or blocking) behave alike here.
  return MemFree(hContext, ptr);
}

ze_result_t MemGetAllocProperties(ze_context_handle_t hContext, const void* ptr,
                                  ze_memory_allocation_properties_t* props,
                                  ze_device_handle_t* phDevice) {
  if (from_handle<Context>(hContext) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (ptr == nullptr || props == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  std::optional<Allocation> a = memory_lookup(ptr);
  if (!a) {
    // Not ours (e.g. malloc'd memory): the spec answers "unknown" rather than failing.
    props->type = ZE_MEMORY_TYPE_UNKNOWN;
    props->id = 0;
    props->pageSize = 0;
    if (phDevice != nullptr) *phDevice = nullptr;
    return ZE_RESULT_SUCCESS;
  }
  props->type = a->type;
  props->id = a->id;
  props->pageSize = a->type == ZE_MEMORY_TYPE_HOST ? 4096 : 65536;
  if (phDevice != nullptr) *phDevice = to_handle<ze_device_handle_t>(a->device);
  return ZE_RESULT_SUCCESS;
}

ze_result_t MemGetAddressRange(ze_context_handle_t hContext, const void* ptr, void** pBase,
                               size_t* pSize) {
  if (from_handle<Context>(hContext) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (ptr == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  std::optional<Allocation> a = memory_lookup(ptr);
  if (!a) return ZE_RESULT_ERROR_UNKNOWN;
  if (pBase != nullptr) *pBase = a->base;
  if (pSize != nullptr) *pSize = a->size;
  return ZE_RESULT_SUCCESS;
}

}  // namespace simze::api

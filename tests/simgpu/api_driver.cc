// zeInit, driver and device discovery, device properties and the device clock query.
// Property values model a Data Center GPU Max (Xe-HPC) closely enough for real programs.
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "api.h"
#include "config.h"
#include "memory.h"
#include "objects.h"

// glibc's own answer to a smashed stack: it says so on stderr and aborts.
extern "C" [[noreturn]] void __stack_chk_fail();

namespace simze {
namespace {

constexpr uint32_t kVendorIntel = 0x8086;
constexpr uint32_t kDeviceIdPvc = 0x0bd5;  // PCI id of Data Center GPU Max 1550
// Separate GPUs have unrelated counters: device i runs i x this many ticks ahead of device 0.
constexpr int64_t kPerDeviceOffsetTicks = 1'000'000'000'000;

Driver* make_driver() {
  const Config& cfg = config();
  auto* d = new Driver;
  std::memcpy(d->uuid.id, "xtrace-simze-drv", ZE_MAX_DRIVER_UUID_SIZE);
  const uint64_t origin = cfg.clock_origin_at_init ? raw_now_ns() : cfg.clock_origin_raw_ns;
  for (uint32_t i = 0; i < cfg.device_count; ++i) {
    DeviceClock clock(cfg.timer_hz,
                      cfg.clock_offset_ticks + static_cast<int64_t>(i) * kPerDeviceOffsetTicks,
                      origin, cfg.drift_ppm);
    auto dev = std::make_unique<Device>(d, i, clock);
    // Stable and distinct, from what identifies the device rather than where a process's
    // list puts it (Intel's driver builds it from the PCI ids and address).
    std::memcpy(dev->uuid.id, "xtsimgpu", 8);
    uint32_t ids[2] = {kDeviceIdPvc, i};
    std::memcpy(dev->uuid.id + 8, ids, sizeof ids);
    d->devices.push_back(std::move(dev));
  }
  return d;
}

// Level Zero's count/array idiom: *pCount == 0 or no array asks for the count.
template <typename T, typename Fill>
ze_result_t enumerate(uint32_t* pCount, T* out, uint32_t available, Fill fill) {
  if (pCount == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*pCount == 0 || out == nullptr) {
    *pCount = available;
    return ZE_RESULT_SUCCESS;
  }
  uint32_t n = std::min(*pCount, available);
  for (uint32_t i = 0; i < n; ++i) fill(i, out[i]);
  *pCount = n;
  return ZE_RESULT_SUCCESS;
}

}  // namespace

Driver& driver() {
  // Never destroyed: handles must stay valid until the process is gone.
  static Driver* const instance = make_driver();
  return *instance;
}

namespace api {

ze_result_t Init(ze_init_flags_t flags) {
  // A GPU driver has nothing to offer a VPU-only request.
  if (flags != 0 && (flags & ZE_INIT_FLAG_GPU_ONLY) == 0) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (config().crash_in_init) __stack_chk_fail();
  while (config().hang_in_init) pause();
  driver();  // the loader calls this more than once; creation happens once
  return ZE_RESULT_SUCCESS;
}

ze_result_t InitDrivers(uint32_t* pCount, ze_driver_handle_t* phDrivers, InitDriverTypeDesc* desc) {
  if (pCount == nullptr || desc == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  constexpr uint32_t kGpu = 1;  // ZE_INIT_DRIVER_TYPE_FLAG_GPU
  if ((desc->flags & kGpu) == 0) {
    *pCount = 0;
    return ZE_RESULT_SUCCESS;
  }
  if (ze_result_t r = Init(ZE_INIT_FLAG_GPU_ONLY); r != ZE_RESULT_SUCCESS) return r;
  return DriverGet(pCount, phDrivers);
}

ze_result_t DriverGet(uint32_t* pCount, ze_driver_handle_t* phDrivers) {
  return enumerate(pCount, phDrivers, 1, [](uint32_t, ze_driver_handle_t& h) {
    h = to_handle<ze_driver_handle_t>(&driver());
  });
}

ze_result_t DriverGetApiVersion(ze_driver_handle_t hDriver, ze_api_version_t* version) {
  if (from_handle<Driver>(hDriver) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (version == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *version = ZE_API_VERSION_CURRENT;
  return ZE_RESULT_SUCCESS;
}

ze_result_t DriverGetProperties(ze_driver_handle_t hDriver, ze_driver_properties_t* props) {
  Driver* d = from_handle<Driver>(hDriver);
  if (d == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (props == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  props->uuid = d->uuid;
  props->driverVersion = 0x0001'0000;  // 0.1.0 of xtrace's simulated driver
  return ZE_RESULT_SUCCESS;
}

ze_result_t DriverGetIpcProperties(ze_driver_handle_t hDriver, ze_driver_ipc_properties_t* props) {
  if (from_handle<Driver>(hDriver) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (props == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  props->flags = 0;  // no IPC: handles cannot cross processes
  return ZE_RESULT_SUCCESS;
}

ze_result_t DriverGetExtensionProperties(ze_driver_handle_t hDriver, uint32_t* pCount,
                                         ze_driver_extension_properties_t* props) {
  if (from_handle<Driver>(hDriver) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  // Intel's graphs are announced by this name (zex_graph.h), version 1.0.
  static const struct {
    const char* name;
    uint32_t version;
  } kExtensions[] = {
      {ZE_EVENT_QUERY_TIMESTAMPS_EXP_NAME, ZE_EVENT_QUERY_TIMESTAMPS_EXP_VERSION_CURRENT},
      {"ZE_experimental_record_replay_graph", ZE_MAKE_VERSION(1, 0)},
  };
  return enumerate(pCount, props, static_cast<uint32_t>(std::size(kExtensions)),
                   [](uint32_t i, ze_driver_extension_properties_t& p) {
                     std::memset(p.name, 0, sizeof p.name);
                     std::strncpy(p.name, kExtensions[i].name, sizeof p.name - 1);
                     p.version = kExtensions[i].version;
                   });
}

ze_result_t DriverGetExtensionFunctionAddress(ze_driver_handle_t hDriver, const char* name,
                                              void** ppFunctionAddress) {
  if (from_handle<Driver>(hDriver) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (name == nullptr || ppFunctionAddress == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // What SYCL's adapter and oneDNN look up at start. Intel's driver (compute-runtime's
  // extension_function_address.cpp) hands out both launches, zexCounterBasedEventCreate2, the
  // graph functions and the host function (by its zex name from 25.35 to 25.48, by its ze name
  // since); the core functions after them it leaves to the loader, and this driver hands them
  // out too so that a workload reaches them through a loader that lacks them (bookworm's 1.8):
  // the last two only with XTRACE_SIMZE_HAND_OUT_CORE=1 (a program could then call them past
  // such a loader, where xtrace probes neither, and xtrace warns of it).
  static const struct {
    const char* name;
    void* function;
    bool on_request = false;  // only with XTRACE_SIMZE_HAND_OUT_CORE=1
  } kExtensions[] = {
      {"zeCommandListAppendLaunchKernelWithArguments",
       reinterpret_cast<void*>(&CommandListAppendLaunchKernelWithArguments)},
      {"zeCommandListAppendLaunchKernelWithParameters",
       reinterpret_cast<void*>(&CommandListAppendLaunchKernelWithParameters)},
      {"zexCounterBasedEventCreate2", reinterpret_cast<void*>(&ExCounterBasedEventCreate2)},
      {"zeGraphCreateExp", reinterpret_cast<void*>(&GraphCreateExp)},
      {"zeCommandListBeginGraphCaptureExp", reinterpret_cast<void*>(&CommandListBeginGraphCaptureExp)},
      {"zeCommandListBeginCaptureIntoGraphExp",
       reinterpret_cast<void*>(&CommandListBeginCaptureIntoGraphExp)},
      {"zeCommandListEndGraphCaptureExp", reinterpret_cast<void*>(&CommandListEndGraphCaptureExp)},
      {"zeCommandListInstantiateGraphExp", reinterpret_cast<void*>(&CommandListInstantiateGraphExp)},
      {"zeCommandListAppendGraphExp", reinterpret_cast<void*>(&CommandListAppendGraphExp)},
      {"zeGraphDestroyExp", reinterpret_cast<void*>(&GraphDestroyExp)},
      {"zeExecutableGraphDestroyExp", reinterpret_cast<void*>(&ExecutableGraphDestroyExp)},
      {"zeCommandListAppendHostFunction", reinterpret_cast<void*>(&CommandListAppendHostFunction)},
      {"zexCommandListAppendHostFunction",
       reinterpret_cast<void*>(&ExCommandListAppendHostFunction)},
      // Core functions Intel's driver leaves to the loader.
      {"zeEventQueryTimestampsExp", reinterpret_cast<void*>(&EventQueryTimestampsExp)},
      {"zeEventCounterBasedCreate", reinterpret_cast<void*>(&CoreEventCounterBasedCreate)},
      {"zeCommandListHostSynchronize", reinterpret_cast<void*>(&CommandListHostSynchronize), true},
      {"zeCommandListImmediateAppendCommandListsExp",
       reinterpret_cast<void*>(&CommandListImmediateAppendCommandListsExp), true},
  };
  for (const auto& e : kExtensions) {
    if (std::strcmp(name, e.name) == 0 && (!e.on_request || config().hand_out_core)) {
      *ppFunctionAddress = e.function;
      return ZE_RESULT_SUCCESS;
    }
  }
  return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t DeviceGet(ze_driver_handle_t hDriver, uint32_t* pCount, ze_device_handle_t* phDevices) {
  Driver* d = from_handle<Driver>(hDriver);
  if (d == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  const std::vector<uint32_t>& order = config().device_order;
  const auto listed = static_cast<uint32_t>(order.empty() ? d->devices.size() : order.size());
  return enumerate(pCount, phDevices, listed, [d, &order](uint32_t i, ze_device_handle_t& h) {
    h = to_handle<ze_device_handle_t>(d->devices[order.empty() ? i : order[i]].get());
  });
}

ze_result_t DeviceGetSubDevices(ze_device_handle_t hDevice, uint32_t* pCount,
                                ze_device_handle_t* phSubdevices) {
  if (from_handle<Device>(hDevice) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return enumerate(pCount, phSubdevices, 0, [](uint32_t, ze_device_handle_t&) {});
}

ze_result_t DeviceGetProperties(ze_device_handle_t hDevice, ze_device_properties_t* p) {
  Device* dev = from_handle<Device>(hDevice);
  if (dev == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // stype and pNext belong to the caller; the stype also selects timerResolution's unit.
  p->type = ZE_DEVICE_TYPE_GPU;
  p->vendorId = kVendorIntel;
  p->deviceId = kDeviceIdPvc;
  p->flags = 0;  // discrete, not a sub-device, no ECC reported
  p->subdeviceId = 0;
  p->coreClockRate = 1600;  // MHz
  p->maxMemAllocSize = kMaxAllocSize;
  p->maxHardwareContexts = 65536;
  p->maxCommandQueuePriority = 0;
  p->numThreadsPerEU = 8;
  p->physicalEUSimdWidth = 16;
  p->numEUsPerSubslice = 8;
  p->numSubslicesPerSlice = 64;
  p->numSlices = 1;
  const uint64_t hz = dev->clock.hz();
  if (p->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2) {
    p->timerResolution = hz;  // cycles per second
  } else {
    // Nanoseconds per tick, truncated to an integer as Intel's driver reports it (52 at 19.2 MHz).
    p->timerResolution = std::max<uint64_t>(1, 1'000'000'000ULL / hz);
  }
  p->timestampValidBits = DeviceClock::kGlobalValidBits;
  p->kernelTimestampValidBits = DeviceClock::kKernelValidBits;
  p->uuid = dev->uuid;
  std::memset(p->name, 0, sizeof p->name);
  std::strncpy(p->name, config().device_name.c_str(), sizeof p->name - 1);
  return ZE_RESULT_SUCCESS;
}

ze_result_t DeviceGetComputeProperties(ze_device_handle_t hDevice,
                                       ze_device_compute_properties_t* p) {
  if (from_handle<Device>(hDevice) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->maxTotalGroupSize = 1024;
  p->maxGroupSizeX = 1024;
  p->maxGroupSizeY = 1024;
  p->maxGroupSizeZ = 1024;
  p->maxGroupCountX = UINT32_MAX;
  p->maxGroupCountY = UINT32_MAX;
  p->maxGroupCountZ = UINT32_MAX;
  p->maxSharedLocalMemory = 128 * 1024;
  std::memset(p->subGroupSizes, 0, sizeof p->subGroupSizes);
  p->numSubGroupSizes = 2;
  p->subGroupSizes[0] = 16;
  p->subGroupSizes[1] = 32;
  return ZE_RESULT_SUCCESS;
}

ze_result_t DeviceGetModuleProperties(ze_device_handle_t hDevice, ze_device_module_properties_t* p) {
  if (from_handle<Device>(hDevice) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->spirvVersionSupported = ZE_MAKE_VERSION(1, 4);
  p->flags = ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64 |
             ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS | ZE_DEVICE_MODULE_FLAG_DP4A;
  const ze_device_fp_flags_t fp = ZE_DEVICE_FP_FLAG_DENORM | ZE_DEVICE_FP_FLAG_INF_NAN |
                                  ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST |
                                  ZE_DEVICE_FP_FLAG_ROUND_TO_ZERO |
                                  ZE_DEVICE_FP_FLAG_ROUND_TO_INF | ZE_DEVICE_FP_FLAG_FMA;
  p->fp16flags = fp;
  p->fp32flags = fp | ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT;
  p->fp64flags = fp;
  p->maxArgumentsSize = 2048;
  p->printfBufferSize = 4 * 1024 * 1024;
  std::memset(p->nativeKernelSupported.id, 0, sizeof p->nativeKernelSupported.id);
  std::memcpy(p->nativeKernelSupported.id, "xtsimgpu-native", 15);
  return ZE_RESULT_SUCCESS;
}

ze_result_t DeviceGetCommandQueueGroupProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                                 ze_command_queue_group_properties_t* props) {
  if (from_handle<Device>(hDevice) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return enumerate(pCount, props, kOrdinalCount,
                   [](uint32_t i, ze_command_queue_group_properties_t& p) {
                     if (i == kComputeOrdinal) {
                       p.flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
                                 ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY |
                                 ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS |
                                 ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_METRICS;
                       p.maxMemoryFillPatternSize = 128;
                       p.numQueues = 4;  // four compute engines (CCS0-3)
                     } else {
                       p.flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
                       p.maxMemoryFillPatternSize = 4;  // the blitter fills with a dword at most
                       p.numQueues = 1;
                     }
                   });
}

ze_result_t DeviceGetMemoryProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                      ze_device_memory_properties_t* props) {
  if (from_handle<Device>(hDevice) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return enumerate(pCount, props, 1, [](uint32_t, ze_device_memory_properties_t& p) {
    p.flags = 0;
    p.maxClockRate = 3200;
    p.maxBusWidth = 8192;
    p.totalSize = uint64_t{64} << 30;
    std::memset(p.name, 0, sizeof p.name);
    std::strncpy(p.name, "HBM", sizeof p.name - 1);
  });
}

ze_result_t DeviceGetMemoryAccessProperties(ze_device_handle_t hDevice,
                                            ze_device_memory_access_properties_t* p) {
  if (from_handle<Device>(hDevice) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const ze_memory_access_cap_flags_t all =
      ZE_MEMORY_ACCESS_CAP_FLAG_RW | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC |
      ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT | ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
  p->hostAllocCapabilities = all;
  p->deviceAllocCapabilities = all;
  p->sharedSingleDeviceAllocCapabilities = all;
  p->sharedCrossDeviceAllocCapabilities = 0;
  p->sharedSystemAllocCapabilities = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t DeviceGetCacheProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                     ze_device_cache_properties_t* props) {
  if (from_handle<Device>(hDevice) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return enumerate(pCount, props, 1, [](uint32_t, ze_device_cache_properties_t& p) {
    p.flags = 0;
    p.cacheSize = size_t{408} << 20;  // L2
  });
}

ze_result_t DeviceGetImageProperties(ze_device_handle_t hDevice, ze_device_image_properties_t* p) {
  if (from_handle<Device>(hDevice) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // Images are not simulated: zeros tell the application so.
  p->maxImageDims1D = p->maxImageDims2D = p->maxImageDims3D = 0;
  p->maxImageBufferSize = 0;
  p->maxImageArraySlices = p->maxSamplers = p->maxReadImageArgs = p->maxWriteImageArgs = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t DeviceGetExternalMemoryProperties(ze_device_handle_t hDevice,
                                              ze_device_external_memory_properties_t* p) {
  if (from_handle<Device>(hDevice) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->memoryAllocationImportTypes = 0;
  p->memoryAllocationExportTypes = 0;
  p->imageImportTypes = 0;
  p->imageExportTypes = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t DeviceGetP2PProperties(ze_device_handle_t hDevice, ze_device_handle_t hPeer,
                                   ze_device_p2p_properties_t* p) {
  if (from_handle<Device>(hDevice) == nullptr || from_handle<Device>(hPeer) == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->flags = ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS;
  return ZE_RESULT_SUCCESS;
}

ze_result_t DeviceCanAccessPeer(ze_device_handle_t hDevice, ze_device_handle_t hPeer,
                                ze_bool_t* value) {
  if (from_handle<Device>(hDevice) == nullptr || from_handle<Device>(hPeer) == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  if (value == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *value = 1;  // all simulated devices share host memory
  return ZE_RESULT_SUCCESS;
}

ze_result_t DeviceGetStatus(ze_device_handle_t hDevice) {
  return from_handle<Device>(hDevice) == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_HANDLE
                                                 : ZE_RESULT_SUCCESS;
}

ze_result_t DeviceGetGlobalTimestamps(ze_device_handle_t hDevice, uint64_t* hostTimestamp,
                                      uint64_t* deviceTimestamp) {
  Device* dev = from_handle<Device>(hDevice);
  if (dev == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (hostTimestamp == nullptr || deviceTimestamp == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  }
  // Host time is CLOCK_MONOTONIC_RAW, as in Intel's driver; the device counter is read at the
  // same instant, so the pair is an exact point of the device->host mapping.
  const uint64_t host = raw_now_ns();
  *hostTimestamp = host;
  *deviceTimestamp = dev->clock.ticks_at(host);
  return ZE_RESULT_SUCCESS;
}

}  // namespace api
}  // namespace simze

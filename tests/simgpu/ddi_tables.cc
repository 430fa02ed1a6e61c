// The driver's only exported symbols: the 53 *Get*ProcAddrTable functions through which the
// Level Zero loader discovers a driver. Every getter must exist and succeed (the loader gives
// up on a driver otherwise); tables are filled with what is implemented and null elsewhere,
// which the loader turns into ZE_RESULT_ERROR_UNSUPPORTED_FEATURE for the application.
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include <cstring>

#include "api.h"

namespace {

// The loader hands us its version; any 1.x loader understands our 1.x tables.
ze_result_t check(ze_api_version_t version, const void* table) {
  if (table == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT)) {
    return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
  }
  return ZE_RESULT_SUCCESS;
}

// Slots a loader newer than the headers this builds against has after the end of a table as
// they declare it: the `index`th pointer past sizeof(Table), for a loader of `since` or later
// (it passes its own version, and its table has every slot of that version).
template <typename Table, typename Fn>
void set_newer_slot(ze_api_version_t version, ze_api_version_t since, Table* t, size_t index,
                    Fn fn) {
  if (version < since) return;
  void* p = reinterpret_cast<void*>(fn);
  std::memcpy(reinterpret_cast<char*>(t) + sizeof(Table) + index * sizeof(void*), &p, sizeof(p));
}

constexpr auto kVersion1_6 = static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, 6));
constexpr auto kVersion1_9 = static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, 9));
constexpr auto kVersion1_10 = static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, 10));
constexpr auto kVersion1_14 = static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, 14));
constexpr auto kVersion1_15 = static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, 15));
constexpr auto kVersion1_17 = static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, 17));

}  // namespace

using namespace simze::api;

// Fills one table: checks arguments, zeroes it, then runs the assignments in the body.
#define SIMZE_TABLE(getter, table_type, ...)                                        \
  extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version,   \
                                                        table_type* t) {            \
    if (ze_result_t r = check(version, t); r != ZE_RESULT_SUCCESS) return r;        \
    *t = {};                                                                        \
    __VA_ARGS__                                                                     \
    return ZE_RESULT_SUCCESS;                                                       \
  }

// ---- Core (ze) tables -----------------------------------------------------------------------

// 1.10 adds pfnInitDrivers after pfnInit.
SIMZE_TABLE(zeGetGlobalProcAddrTable, ze_global_dditable_t, t->pfnInit = Init;
            set_newer_slot(version, kVersion1_10, t, 0, &InitDrivers);)

SIMZE_TABLE(zeGetDriverProcAddrTable, ze_driver_dditable_t,
            t->pfnGet = DriverGet;
            t->pfnGetApiVersion = DriverGetApiVersion;
            t->pfnGetProperties = DriverGetProperties;
            t->pfnGetIpcProperties = DriverGetIpcProperties;
            t->pfnGetExtensionProperties = DriverGetExtensionProperties;
            t->pfnGetExtensionFunctionAddress = DriverGetExtensionFunctionAddress;)

SIMZE_TABLE(zeGetDeviceProcAddrTable, ze_device_dditable_t,
            t->pfnGet = DeviceGet;
            t->pfnGetSubDevices = DeviceGetSubDevices;
            t->pfnGetProperties = DeviceGetProperties;
            t->pfnGetComputeProperties = DeviceGetComputeProperties;
            t->pfnGetModuleProperties = DeviceGetModuleProperties;
            t->pfnGetCommandQueueGroupProperties = DeviceGetCommandQueueGroupProperties;
            t->pfnGetMemoryProperties = DeviceGetMemoryProperties;
            t->pfnGetMemoryAccessProperties = DeviceGetMemoryAccessProperties;
            t->pfnGetCacheProperties = DeviceGetCacheProperties;
            t->pfnGetImageProperties = DeviceGetImageProperties;
            t->pfnGetExternalMemoryProperties = DeviceGetExternalMemoryProperties;
            t->pfnGetP2PProperties = DeviceGetP2PProperties;
            t->pfnCanAccessPeer = DeviceCanAccessPeer;
            t->pfnGetStatus = DeviceGetStatus;
            t->pfnGetGlobalTimestamps = DeviceGetGlobalTimestamps;)

SIMZE_TABLE(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t, )

SIMZE_TABLE(zeGetContextProcAddrTable, ze_context_dditable_t,
            t->pfnCreate = ContextCreate;
            t->pfnDestroy = ContextDestroy;
            t->pfnGetStatus = ContextGetStatus;
            t->pfnSystemBarrier = ContextSystemBarrier;
            t->pfnMakeMemoryResident = ContextMakeMemoryResident;
            t->pfnEvictMemory = ContextEvictMemory;
            t->pfnCreateEx = ContextCreateEx;)

SIMZE_TABLE(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t,
            t->pfnCreate = CommandQueueCreate;
            t->pfnDestroy = CommandQueueDestroy;
            t->pfnExecuteCommandLists = CommandQueueExecuteCommandLists;
            t->pfnSynchronize = CommandQueueSynchronize;
            // 1.9 adds pfnGetOrdinal, pfnGetIndex.
            set_newer_slot(version, kVersion1_9, t, 0, &CommandQueueGetOrdinal);
            set_newer_slot(version, kVersion1_9, t, 1, &CommandQueueGetIndex);)

SIMZE_TABLE(zeGetCommandListProcAddrTable, ze_command_list_dditable_t,
            t->pfnCreate = CommandListCreate;
            t->pfnCreateImmediate = CommandListCreateImmediate;
            t->pfnDestroy = CommandListDestroy;
            t->pfnClose = CommandListClose;
            t->pfnReset = CommandListReset;
            t->pfnAppendWriteGlobalTimestamp = CommandListAppendWriteGlobalTimestamp;
            t->pfnAppendBarrier = CommandListAppendBarrier;
            t->pfnAppendMemoryRangesBarrier = CommandListAppendMemoryRangesBarrier;
            t->pfnAppendMemoryCopy = CommandListAppendMemoryCopy;
            t->pfnAppendMemoryFill = CommandListAppendMemoryFill;
            t->pfnAppendMemoryCopyRegion = CommandListAppendMemoryCopyRegion;
            t->pfnAppendMemoryCopyFromContext = CommandListAppendMemoryCopyFromContext;
            t->pfnAppendMemoryPrefetch = CommandListAppendMemoryPrefetch;
            t->pfnAppendMemAdvise = CommandListAppendMemAdvise;
            t->pfnAppendSignalEvent = CommandListAppendSignalEvent;
            t->pfnAppendWaitOnEvents = CommandListAppendWaitOnEvents;
            t->pfnAppendEventReset = CommandListAppendEventReset;
            t->pfnAppendQueryKernelTimestamps = CommandListAppendQueryKernelTimestamps;
            t->pfnAppendLaunchKernel = CommandListAppendLaunchKernel;
            t->pfnAppendLaunchCooperativeKernel = CommandListAppendLaunchCooperativeKernel;
            t->pfnAppendLaunchKernelIndirect = CommandListAppendLaunchKernelIndirect;
            t->pfnAppendLaunchMultipleKernelsIndirect =
                CommandListAppendLaunchMultipleKernelsIndirect;
            // 1.6 adds pfnHostSynchronize after pfnAppendImageCopyFromMemoryExt.
            set_newer_slot(version, kVersion1_6, t, 0, &CommandListHostSynchronize);
            // 1.9 adds pfnGetDeviceHandle, pfnGetContextHandle, pfnGetOrdinal,
            // pfnImmediateGetIndex, pfnIsImmediate after it.
            set_newer_slot(version, kVersion1_9, t, 1, &CommandListGetDeviceHandle);
            set_newer_slot(version, kVersion1_9, t, 2, &CommandListGetContextHandle);
            set_newer_slot(version, kVersion1_9, t, 3, &CommandListGetOrdinal);
            set_newer_slot(version, kVersion1_9, t, 4, &CommandListImmediateGetIndex);
            set_newer_slot(version, kVersion1_9, t, 5, &CommandListIsImmediate);
            // 1.12 adds the two external semaphore appends; 1.14 pfnAppendLaunchKernelWith-
            // Parameters and ...WithArguments after them (loader 1.26 exports both and
            // dispatches them here); 1.16 three more; 1.17 ends the table with the graph
            // functions by their core names and pfnAppendHostFunction.
            set_newer_slot(version, kVersion1_14, t, 8,
                           &CommandListAppendLaunchKernelWithParameters);
            set_newer_slot(version, kVersion1_14, t, 9,
                           &CommandListAppendLaunchKernelWithArguments);
            set_newer_slot(version, kVersion1_17, t, 23, &CommandListAppendHostFunction);)

// Not in 1.4's headers: a newer loader looks it up by name. 1.9's table starts
// pfnCreateCloneExp, pfnImmediateAppendCommandListsExp.
extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetCommandListExpProcAddrTable(
    ze_api_version_t version, void* t) {
  if (t == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (version < kVersion1_9) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
  void* fns[2] = {nullptr, reinterpret_cast<void*>(&CommandListImmediateAppendCommandListsExp)};
  std::memcpy(t, fns, sizeof(fns));
  return ZE_RESULT_SUCCESS;
}

SIMZE_TABLE(zeGetImageProcAddrTable, ze_image_dditable_t, )
SIMZE_TABLE(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t, )

SIMZE_TABLE(zeGetFenceProcAddrTable, ze_fence_dditable_t,
            t->pfnCreate = FenceCreate;
            t->pfnDestroy = FenceDestroy;
            t->pfnHostSynchronize = FenceHostSynchronize;
            t->pfnQueryStatus = FenceQueryStatus;
            t->pfnReset = FenceReset;)

SIMZE_TABLE(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t,
            t->pfnCreate = EventPoolCreate;
            t->pfnDestroy = EventPoolDestroy;
            // 1.6 adds pfnPutIpcHandle; 1.9 pfnGetContextHandle and pfnGetFlags after it.
            set_newer_slot(version, kVersion1_9, t, 1, &EventPoolGetContextHandle);
            set_newer_slot(version, kVersion1_9, t, 2, &EventPoolGetFlags);)

SIMZE_TABLE(zeGetEventProcAddrTable, ze_event_dditable_t,
            t->pfnCreate = EventCreate;
            t->pfnDestroy = EventDestroy;
            t->pfnHostSignal = EventHostSignal;
            t->pfnHostSynchronize = EventHostSynchronize;
            t->pfnQueryStatus = EventQueryStatus;
            t->pfnHostReset = EventHostReset;
            t->pfnQueryKernelTimestamp = EventQueryKernelTimestamp;
            // 1.6 adds pfnQueryKernelTimestampsExt; 1.9 pfnGetEventPool after it.
            set_newer_slot(version, kVersion1_9, t, 1, &EventGetEventPool);
            // 1.9 pfnGetSignalScope, pfnGetWaitScope; 1.15 pfnCounterBasedCreate (loader 1.27
            // exports zeEventCounterBasedCreate and dispatches it here).
            set_newer_slot(version, kVersion1_15, t, 4, &CoreEventCounterBasedCreate);)

SIMZE_TABLE(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t,
            t->pfnQueryTimestampsExp = EventQueryTimestampsExp;)

SIMZE_TABLE(zeGetModuleProcAddrTable, ze_module_dditable_t,
            t->pfnCreate = ModuleCreate;
            t->pfnDestroy = ModuleDestroy;
            t->pfnDynamicLink = ModuleDynamicLink;
            t->pfnGetNativeBinary = ModuleGetNativeBinary;
            t->pfnGetGlobalPointer = ModuleGetGlobalPointer;
            t->pfnGetKernelNames = ModuleGetKernelNames;
            t->pfnGetProperties = ModuleGetProperties;
            t->pfnGetFunctionPointer = ModuleGetFunctionPointer;)

SIMZE_TABLE(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t,
            t->pfnDestroy = ModuleBuildLogDestroy;
            t->pfnGetString = ModuleBuildLogGetString;)

SIMZE_TABLE(zeGetKernelProcAddrTable, ze_kernel_dditable_t,
            t->pfnCreate = KernelCreate;
            t->pfnDestroy = KernelDestroy;
            t->pfnSetCacheConfig = KernelSetCacheConfig;
            t->pfnSetGroupSize = KernelSetGroupSize;
            t->pfnSuggestGroupSize = KernelSuggestGroupSize;
            t->pfnSuggestMaxCooperativeGroupCount = KernelSuggestMaxCooperativeGroupCount;
            t->pfnSetArgumentValue = KernelSetArgumentValue;
            t->pfnSetIndirectAccess = KernelSetIndirectAccess;
            t->pfnGetIndirectAccess = KernelGetIndirectAccess;
            t->pfnGetSourceAttributes = KernelGetSourceAttributes;
            t->pfnGetProperties = KernelGetProperties;
            t->pfnGetName = KernelGetName;)

SIMZE_TABLE(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t,
            t->pfnSetGlobalOffsetExp = KernelSetGlobalOffsetExp;
            t->pfnSchedulingHintExp = KernelSchedulingHintExp;)

SIMZE_TABLE(zeGetSamplerProcAddrTable, ze_sampler_dditable_t, )
SIMZE_TABLE(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t, )

SIMZE_TABLE(zeGetMemProcAddrTable, ze_mem_dditable_t,
            t->pfnAllocShared = MemAllocShared;
            t->pfnAllocDevice = MemAllocDevice;
            t->pfnAllocHost = MemAllocHost;
            t->pfnFree = MemFree;
            t->pfnGetAllocProperties = MemGetAllocProperties;
            t->pfnGetAddressRange = MemGetAddressRange;
            t->pfnFreeExt = MemFreeExt;)

SIMZE_TABLE(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t, )
SIMZE_TABLE(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t, )
SIMZE_TABLE(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t, )

// ---- Tools (zet) and sysman (zes): not simulated, but the loader requires the getters ------

SIMZE_TABLE(zetGetDeviceProcAddrTable, zet_device_dditable_t, )
SIMZE_TABLE(zetGetContextProcAddrTable, zet_context_dditable_t, )
SIMZE_TABLE(zetGetCommandListProcAddrTable, zet_command_list_dditable_t, )
SIMZE_TABLE(zetGetModuleProcAddrTable, zet_module_dditable_t, )
SIMZE_TABLE(zetGetKernelProcAddrTable, zet_kernel_dditable_t, )
SIMZE_TABLE(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t, )
SIMZE_TABLE(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t, )
SIMZE_TABLE(zetGetMetricProcAddrTable, zet_metric_dditable_t, )
SIMZE_TABLE(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t, )
SIMZE_TABLE(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t, )
SIMZE_TABLE(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t, )
SIMZE_TABLE(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t, )
SIMZE_TABLE(zetGetDebugProcAddrTable, zet_debug_dditable_t, )

SIMZE_TABLE(zesGetDriverProcAddrTable, zes_driver_dditable_t, )
SIMZE_TABLE(zesGetDeviceProcAddrTable, zes_device_dditable_t, )
SIMZE_TABLE(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t, )
SIMZE_TABLE(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t, )
SIMZE_TABLE(zesGetPowerProcAddrTable, zes_power_dditable_t, )
SIMZE_TABLE(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t, )
SIMZE_TABLE(zesGetEngineProcAddrTable, zes_engine_dditable_t, )
SIMZE_TABLE(zesGetStandbyProcAddrTable, zes_standby_dditable_t, )
SIMZE_TABLE(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t, )
SIMZE_TABLE(zesGetMemoryProcAddrTable, zes_memory_dditable_t, )
SIMZE_TABLE(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t, )
SIMZE_TABLE(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t, )
SIMZE_TABLE(zesGetPsuProcAddrTable, zes_psu_dditable_t, )
SIMZE_TABLE(zesGetFanProcAddrTable, zes_fan_dditable_t, )
SIMZE_TABLE(zesGetLedProcAddrTable, zes_led_dditable_t, )
SIMZE_TABLE(zesGetRasProcAddrTable, zes_ras_dditable_t, )
SIMZE_TABLE(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t, )

// The driver's implementation of each Level Zero entry point it supports; ddi_tables.cc hands
// these to the loader. Hidden symbols: the loader reaches them only through the tables.
#pragma once

#include <level_zero/ze_api.h>

#include <memory>
#include <vector>

#include "ze_newer_types.h"

namespace simze::api {

// api_driver.cc: initialisation, driver and device discovery, device clock.
ze_result_t Init(ze_init_flags_t flags);
ze_result_t DriverGet(uint32_t* pCount, ze_driver_handle_t* phDrivers);
ze_result_t DriverGetApiVersion(ze_driver_handle_t hDriver, ze_api_version_t* version);
ze_result_t DriverGetProperties(ze_driver_handle_t hDriver, ze_driver_properties_t* props);
ze_result_t DriverGetIpcProperties(ze_driver_handle_t hDriver, ze_driver_ipc_properties_t* props);
ze_result_t DriverGetExtensionProperties(ze_driver_handle_t hDriver, uint32_t* pCount,
                                         ze_driver_extension_properties_t* props);
ze_result_t DriverGetExtensionFunctionAddress(ze_driver_handle_t hDriver, const char* name,
                                              void** ppFunctionAddress);
ze_result_t DeviceGet(ze_driver_handle_t hDriver, uint32_t* pCount, ze_device_handle_t* phDevices);
ze_result_t DeviceGetSubDevices(ze_device_handle_t hDevice, uint32_t* pCount,
                                ze_device_handle_t* phSubdevices);
ze_result_t DeviceGetProperties(ze_device_handle_t hDevice, ze_device_properties_t* props);
ze_result_t DeviceGetComputeProperties(ze_device_handle_t hDevice,
                                       ze_device_compute_properties_t* props);
ze_result_t DeviceGetModuleProperties(ze_device_handle_t hDevice,
                                      ze_device_module_properties_t* props);
ze_result_t DeviceGetCommandQueueGroupProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                                 ze_command_queue_group_properties_t* props);
ze_result_t DeviceGetMemoryProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                      ze_device_memory_properties_t* props);
ze_result_t DeviceGetMemoryAccessProperties(ze_device_handle_t hDevice,
                                            ze_device_memory_access_properties_t* props);
ze_result_t DeviceGetCacheProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                     ze_device_cache_properties_t* props);
ze_result_t DeviceGetImageProperties(ze_device_handle_t hDevice,
                                     ze_device_image_properties_t* props);
ze_result_t DeviceGetExternalMemoryProperties(ze_device_handle_t hDevice,
                                              ze_device_external_memory_properties_t* props);
ze_result_t DeviceGetP2PProperties(ze_device_handle_t hDevice, ze_device_handle_t hPeer,
                                   ze_device_p2p_properties_t* props);
ze_result_t DeviceCanAccessPeer(ze_device_handle_t hDevice, ze_device_handle_t hPeer,
                                ze_bool_t* value);
ze_result_t DeviceGetStatus(ze_device_handle_t hDevice);
ze_result_t DeviceGetGlobalTimestamps(ze_device_handle_t hDevice, uint64_t* hostTimestamp,
                                      uint64_t* deviceTimestamp);

// api_context.cc: contexts and memory.
ze_result_t ContextCreate(ze_driver_handle_t hDriver, const ze_context_desc_t* desc,
                          ze_context_handle_t* phContext);
ze_result_t ContextCreateEx(ze_driver_handle_t hDriver, const ze_context_desc_t* desc,
                            uint32_t numDevices, ze_device_handle_t* phDevices,
                            ze_context_handle_t* phContext);
ze_result_t ContextDestroy(ze_context_handle_t hContext);
ze_result_t ContextGetStatus(ze_context_handle_t hContext);
ze_result_t ContextSystemBarrier(ze_context_handle_t hContext, ze_device_handle_t hDevice);
ze_result_t ContextMakeMemoryResident(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                      void* ptr, size_t size);
ze_result_t ContextEvictMemory(ze_context_handle_t hContext, ze_device_handle_t hDevice, void* ptr,
                               size_t size);
ze_result_t MemAllocShared(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t* device_desc,
                           const ze_host_mem_alloc_desc_t* host_desc, size_t size, size_t alignment,
                           ze_device_handle_t hDevice, void** pptr);
ze_result_t MemAllocDevice(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t* device_desc,
                           size_t size, size_t alignment, ze_device_handle_t hDevice, void** pptr);
ze_result_t MemAllocHost(ze_context_handle_t hContext, const ze_host_mem_alloc_desc_t* host_desc,
                         size_t size, size_t alignment, void** pptr);
ze_result_t MemFree(ze_context_handle_t hContext, void* ptr);
ze_result_t MemFreeExt(ze_context_handle_t hContext, const ze_memory_free_ext_desc_t* desc,
                       void* ptr);
ze_result_t MemGetAllocProperties(ze_context_handle_t hContext, const void* ptr,
                                  ze_memory_allocation_properties_t* props,
                                  ze_device_handle_t* phDevice);
ze_result_t MemGetAddressRange(ze_context_handle_t hContext, const void* ptr, void** pBase,
                               size_t* pSize);

// api_queue.cc: command queues.
ze_result_t CommandQueueCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                               const ze_command_queue_desc_t* desc,
                               ze_command_queue_handle_t* phCommandQueue);
ze_result_t CommandQueueDestroy(ze_command_queue_handle_t hCommandQueue);
ze_result_t CommandQueueExecuteCommandLists(ze_command_queue_handle_t hCommandQueue,
                                            uint32_t numCommandLists,
                                            ze_command_list_handle_t* phCommandLists,
                                            ze_fence_handle_t hFence);
ze_result_t CommandQueueSynchronize(ze_command_queue_handle_t hCommandQueue, uint64_t timeout);

// api_cmdlist.cc: command lists and everything that can be appended to them.
ze_result_t CommandListCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                              const ze_command_list_desc_t* desc,
                              ze_command_list_handle_t* phCommandList);
ze_result_t CommandListCreateImmediate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                       const ze_command_queue_desc_t* altdesc,
                                       ze_command_list_handle_t* phCommandList);
ze_result_t CommandListDestroy(ze_command_list_handle_t hCommandList);
ze_result_t CommandListClose(ze_command_list_handle_t hCommandList);
ze_result_t CommandListReset(ze_command_list_handle_t hCommandList);
ze_result_t CommandListAppendWriteGlobalTimestamp(ze_command_list_handle_t hCommandList,
                                                  uint64_t* dstptr, ze_event_handle_t hSignalEvent,
                                                  uint32_t numWaitEvents,
                                                  ze_event_handle_t* phWaitEvents);
ze_result_t CommandListAppendBarrier(ze_command_list_handle_t hCommandList,
                                     ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                     ze_event_handle_t* phWaitEvents);
ze_result_t CommandListAppendMemoryRangesBarrier(ze_command_list_handle_t hCommandList,
                                                 uint32_t numRanges, const size_t* pRangeSizes,
                                                 const void** pRanges,
                                                 ze_event_handle_t hSignalEvent,
                                                 uint32_t numWaitEvents,
                                                 ze_event_handle_t* phWaitEvents);
ze_result_t CommandListAppendMemoryCopy(ze_command_list_handle_t hCommandList, void* dstptr,
                                        const void* srcptr, size_t size,
                                        ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                        ze_event_handle_t* phWaitEvents);
ze_result_t CommandListAppendMemoryFill(ze_command_list_handle_t hCommandList, void* ptr,
                                        const void* pattern, size_t pattern_size, size_t size,
                                        ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                        ze_event_handle_t* phWaitEvents);
ze_result_t CommandListAppendMemoryCopyRegion(
    ze_command_list_handle_t hCommandList, void* dstptr, const ze_copy_region_t* dstRegion,
    uint32_t dstPitch, uint32_t dstSlicePitch, const void* srcptr,
    const ze_copy_region_t* srcRegion, uint32_t srcPitch, uint32_t srcSlicePitch,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);
ze_result_t CommandListAppendMemoryCopyFromContext(ze_command_list_handle_t hCommandList,
                                                   void* dstptr, ze_context_handle_t hContextSrc,
                                                   const void* srcptr, size_t size,
                                                   ze_event_handle_t hSignalEvent,
                                                   uint32_t numWaitEvents,
                                                   ze_event_handle_t* phWaitEvents);
ze_result_t CommandListAppendMemoryPrefetch(ze_command_list_handle_t hCommandList, const void* ptr,
                                            size_t size);
ze_result_t CommandListAppendMemAdvise(ze_command_list_handle_t hCommandList,
                                       ze_device_handle_t hDevice, const void* ptr, size_t size,
                                       ze_memory_advice_t advice);
ze_result_t CommandListAppendSignalEvent(ze_command_list_handle_t hCommandList,
                                         ze_event_handle_t hEvent);
ze_result_t CommandListAppendWaitOnEvents(ze_command_list_handle_t hCommandList, uint32_t numEvents,
                                          ze_event_handle_t* phEvents);
ze_result_t CommandListAppendEventReset(ze_command_list_handle_t hCommandList,
                                        ze_event_handle_t hEvent);
ze_result_t CommandListAppendQueryKernelTimestamps(ze_command_list_handle_t hCommandList,
                                                   uint32_t numEvents, ze_event_handle_t* phEvents,
                                                   void* dstptr, const size_t* pOffsets,
                                                   ze_event_handle_t hSignalEvent,
                                                   uint32_t numWaitEvents,
                                                   ze_event_handle_t* phWaitEvents);
ze_result_t CommandListAppendLaunchKernel(ze_command_list_handle_t hCommandList,
                                          ze_kernel_handle_t hKernel,
                                          const ze_group_count_t* pLaunchFuncArgs,
                                          ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                          ze_event_handle_t* phWaitEvents);
ze_result_t CommandListAppendLaunchCooperativeKernel(ze_command_list_handle_t hCommandList,
                                                     ze_kernel_handle_t hKernel,
                                                     const ze_group_count_t* pLaunchFuncArgs,
                                                     ze_event_handle_t hSignalEvent,
                                                     uint32_t numWaitEvents,
                                                     ze_event_handle_t* phWaitEvents);
ze_result_t CommandListAppendLaunchKernelIndirect(ze_command_list_handle_t hCommandList,
                                                  ze_kernel_handle_t hKernel,
                                                  const ze_group_count_t* pLaunchArgumentsBuffer,
                                                  ze_event_handle_t hSignalEvent,
                                                  uint32_t numWaitEvents,
                                                  ze_event_handle_t* phWaitEvents);
ze_result_t CommandListAppendLaunchMultipleKernelsIndirect(
    ze_command_list_handle_t hCommandList, uint32_t numKernels, ze_kernel_handle_t* phKernels,
    const uint32_t* pCountBuffer, const ze_group_count_t* pLaunchArgumentsBuffer,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);

// api_sync.cc: fences, event pools and events.
ze_result_t FenceCreate(ze_command_queue_handle_t hCommandQueue, const ze_fence_desc_t* desc,
                        ze_fence_handle_t* phFence);
ze_result_t FenceDestroy(ze_fence_handle_t hFence);
ze_result_t FenceHostSynchronize(ze_fence_handle_t hFence, uint64_t timeout);
ze_result_t FenceQueryStatus(ze_fence_handle_t hFence);
ze_result_t FenceReset(ze_fence_handle_t hFence);
ze_result_t EventPoolCreate(ze_context_handle_t hContext, const ze_event_pool_desc_t* desc,
                            uint32_t numDevices, ze_device_handle_t* phDevices,
                            ze_event_pool_handle_t* phEventPool);
ze_result_t EventPoolDestroy(ze_event_pool_handle_t hEventPool);
ze_result_t EventCreate(ze_event_pool_handle_t hEventPool, const ze_event_desc_t* desc,
                        ze_event_handle_t* phEvent);
ze_result_t EventDestroy(ze_event_handle_t hEvent);
ze_result_t EventHostSignal(ze_event_handle_t hEvent);
ze_result_t EventHostSynchronize(ze_event_handle_t hEvent, uint64_t timeout);
ze_result_t EventQueryStatus(ze_event_handle_t hEvent);
ze_result_t EventHostReset(ze_event_handle_t hEvent);
ze_result_t EventQueryKernelTimestamp(ze_event_handle_t hEvent, ze_kernel_timestamp_result_t* dstptr);
ze_result_t EventQueryTimestampsExp(ze_event_handle_t hEvent, ze_device_handle_t hDevice,
                                    uint32_t* pCount, ze_kernel_timestamp_result_t* pTimestamps);

// api_module.cc: modules, build logs and kernels.
ze_result_t ModuleCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                         const ze_module_desc_t* desc, ze_module_handle_t* phModule,
                         ze_module_build_log_handle_t* phBuildLog);
ze_result_t ModuleDestroy(ze_module_handle_t hModule);
ze_result_t ModuleDynamicLink(uint32_t numModules, ze_module_handle_t* phModules,
                              ze_module_build_log_handle_t* phLinkLog);
ze_result_t ModuleGetNativeBinary(ze_module_handle_t hModule, size_t* pSize,
                                  uint8_t* pModuleNativeBinary);
ze_result_t ModuleGetGlobalPointer(ze_module_handle_t hModule, const char* pGlobalName,
                                   size_t* pSize, void** pptr);
ze_result_t ModuleGetKernelNames(ze_module_handle_t hModule, uint32_t* pCount, const char** pNames);
ze_result_t ModuleGetProperties(ze_module_handle_t hModule, ze_module_properties_t* props);
ze_result_t ModuleGetFunctionPointer(ze_module_handle_t hModule, const char* pFunctionName,
                                     void** pfnFunction);
ze_result_t ModuleBuildLogDestroy(ze_module_build_log_handle_t hModuleBuildLog);
ze_result_t ModuleBuildLogGetString(ze_module_build_log_handle_t hModuleBuildLog, size_t* pSize,
                                    char* pBuildLog);
ze_result_t KernelCreate(ze_module_handle_t hModule, const ze_kernel_desc_t* desc,
                         ze_kernel_handle_t* phKernel);
ze_result_t KernelDestroy(ze_kernel_handle_t hKernel);
ze_result_t KernelSetCacheConfig(ze_kernel_handle_t hKernel, ze_cache_config_flags_t flags);
ze_result_t KernelSetGroupSize(ze_kernel_handle_t hKernel, uint32_t x, uint32_t y, uint32_t z);
ze_result_t KernelSuggestGroupSize(ze_kernel_handle_t hKernel, uint32_t globalX, uint32_t globalY,
                                   uint32_t globalZ, uint32_t* groupX, uint32_t* groupY,
                                   uint32_t* groupZ);
ze_result_t KernelSuggestMaxCooperativeGroupCount(ze_kernel_handle_t hKernel, uint32_t* totalGroupCount);
ze_result_t KernelSetArgumentValue(ze_kernel_handle_t hKernel, uint32_t argIndex, size_t argSize,
                                   const void* pArgValue);
ze_result_t KernelSetIndirectAccess(ze_kernel_handle_t hKernel,
                                    ze_kernel_indirect_access_flags_t flags);
ze_result_t KernelGetIndirectAccess(ze_kernel_handle_t hKernel,
                                    ze_kernel_indirect_access_flags_t* pFlags);
ze_result_t KernelGetSourceAttributes(ze_kernel_handle_t hKernel, uint32_t* pSize, char** pString);
ze_result_t KernelGetProperties(ze_kernel_handle_t hKernel, ze_kernel_properties_t* pKernelProperties);
ze_result_t KernelGetName(ze_kernel_handle_t hKernel, size_t* pSize, char* pName);
ze_result_t KernelSetGlobalOffsetExp(ze_kernel_handle_t hKernel, uint32_t offsetX, uint32_t offsetY,
                                     uint32_t offsetZ);
ze_result_t KernelSchedulingHintExp(ze_kernel_handle_t hKernel, ze_scheduling_hint_exp_desc_t* pHint);

// ---- Entry points of Level Zero after 1.4 (bookworm's headers, which this builds against, end
// there). Their types are in ze_newer_types.h; a newer loader hands the calls through the table
// slots ddi_tables.cc fills for its version.

using ze_newer::CounterBasedEventDesc;
using ze_newer::GroupSize;
using ze_newer::InitDriverTypeDesc;
constexpr uint32_t kCounterBasedTimestampFlags =
    ze_newer::kCounterBasedKernelTimestamp | ze_newer::kCounterBasedMappedTimestamp;

ze_result_t InitDrivers(uint32_t* pCount, ze_driver_handle_t* phDrivers, InitDriverTypeDesc* desc);
ze_result_t CommandListHostSynchronize(ze_command_list_handle_t hCommandList, uint64_t timeout);
// Level Zero 1.9's questions about an object (api_object_queries.cc): what a tracer attached
// after the object was made asks the process.
ze_result_t CommandListGetDeviceHandle(ze_command_list_handle_t hCommandList, ze_device_handle_t* phDevice);
ze_result_t CommandListGetContextHandle(ze_command_list_handle_t hCommandList, ze_context_handle_t* phContext);
ze_result_t CommandListGetOrdinal(ze_command_list_handle_t hCommandList, uint32_t* pOrdinal);
ze_result_t CommandListImmediateGetIndex(ze_command_list_handle_t hCommandList, uint32_t* pIndex);
ze_result_t CommandListIsImmediate(ze_command_list_handle_t hCommandList, ze_bool_t* pIsImmediate);
ze_result_t CommandQueueGetOrdinal(ze_command_queue_handle_t hCommandQueue, uint32_t* pOrdinal);
ze_result_t CommandQueueGetIndex(ze_command_queue_handle_t hCommandQueue, uint32_t* pIndex);
ze_result_t EventPoolGetContextHandle(ze_event_pool_handle_t hEventPool, ze_context_handle_t* phContext);
ze_result_t EventPoolGetFlags(ze_event_pool_handle_t hEventPool, ze_event_pool_flags_t* pFlags);
ze_result_t EventGetEventPool(ze_event_handle_t hEvent, ze_event_pool_handle_t* phEventPool);
ze_result_t CommandListImmediateAppendCommandListsExp(ze_command_list_handle_t hCommandListImmediate,
                                                      uint32_t numCommandLists,
                                                      ze_command_list_handle_t* phCommandLists,
                                                      ze_event_handle_t hSignalEvent,
                                                      uint32_t numWaitEvents,
                                                      ze_event_handle_t* phWaitEvents);
ze_result_t EventCounterBasedCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                    const CounterBasedEventDesc* desc, ze_event_handle_t* phEvent);

}  // namespace simze::api

namespace simze {
struct CommandList;
struct Event;
struct Recording;
namespace api {
// api_cmdlist.cc, for the calls that submit recorded commands on an immediate list (appended
// regular lists, graphs): one batch on its engine, after the waits and before the signal.
ze_result_t submit_recordings(CommandList* imm,
                              std::vector<std::shared_ptr<const Recording>> recordings,
                              ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                              ze_event_handle_t* phWaitEvents);
// A counter-based event stands for its latest signalling command from that command's
// submission on: unsignalled until it runs.
void unsignal_counter_based(Event* e);
}  // namespace api
}  // namespace simze

// Intel's driver hands out internal functions (its namespace L0's) through
// zeDriverGetExtensionFunctionAddress and its dispatch tables, and exports functions of the same
// names that only call them (exports.cc does the same here): a call through the pointer never
// passes the export. A tracer must find the function the pointer points to.
typedef struct _ze_graph_handle_t* ze_graph_handle_t;
typedef struct _ze_executable_graph_handle_t* ze_executable_graph_handle_t;
namespace simze::api {
ze_result_t CommandListAppendLaunchKernelWithArguments(
    ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel, ze_group_count_t groupCounts,
    GroupSize groupSizes, void** pArguments, const void* pNext, ze_event_handle_t hSignalEvent,
    uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);
ze_result_t CommandListAppendLaunchKernelWithParameters(
    ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
    const ze_group_count_t* pGroupCounts, const void* pNext, ze_event_handle_t hSignalEvent,
    uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);
ze_result_t ExCounterBasedEventCreate2(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                       const CounterBasedEventDesc* desc,
                                       ze_event_handle_t* phEvent);
ze_result_t GraphCreateExp(ze_context_handle_t hContext, ze_graph_handle_t* phGraph, void* pNext);
ze_result_t CommandListBeginGraphCaptureExp(ze_command_list_handle_t hCommandList, void* pNext);
ze_result_t CommandListBeginCaptureIntoGraphExp(ze_command_list_handle_t hCommandList,
                                                ze_graph_handle_t hGraph, void* pNext);
ze_result_t CommandListEndGraphCaptureExp(ze_command_list_handle_t hCommandList,
                                          ze_graph_handle_t* phGraph, void* pNext);
ze_result_t CommandListInstantiateGraphExp(ze_graph_handle_t hGraph,
                                           ze_executable_graph_handle_t* phExecutableGraph,
                                           void* pNext);
ze_result_t CommandListAppendGraphExp(ze_command_list_handle_t hCommandList,
                                      ze_executable_graph_handle_t hGraph, void* pNext,
                                      ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                      ze_event_handle_t* phWaitEvents);
ze_result_t GraphDestroyExp(ze_graph_handle_t hGraph);
ze_result_t ExecutableGraphDestroyExp(ze_executable_graph_handle_t hGraph);
ze_result_t CommandListAppendHostFunction(ze_command_list_handle_t hCommandList,
                                          void* pHostFunction, void* pUserData, void* pNext,
                                          ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                          ze_event_handle_t* phWaitEvents);
ze_result_t ExCommandListAppendHostFunction(ze_command_list_handle_t hCommandList,
                                            void* pHostFunction, void* pUserData, void* pNext,
                                            ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                            ze_event_handle_t* phWaitEvents);
ze_result_t CoreEventCounterBasedCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                        const CounterBasedEventDesc* desc,
                                        ze_event_handle_t* phEvent);
}  // namespace simze::api

// The exports of those names (exports.cc), as Intel's driver exports its own.
extern "C" {
ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListAppendLaunchKernelWithArguments(
    ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel, ze_group_count_t groupCounts,
    simze::api::GroupSize groupSizes, void** pArguments, const void* pNext,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);
ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListAppendLaunchKernelWithParameters(
    ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
    const ze_group_count_t* pGroupCounts, const void* pNext, ze_event_handle_t hSignalEvent,
    uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);
ZE_DLLEXPORT ze_result_t ZE_APICALL zexCounterBasedEventCreate2(
    ze_context_handle_t hContext, ze_device_handle_t hDevice,
    const simze::api::CounterBasedEventDesc* desc, ze_event_handle_t* phEvent);
// Intel's record-and-replay graphs (compute-runtime's driver_experimental/zex_graph.h).
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGraphCreateExp(ze_context_handle_t hContext,
                                                     ze_graph_handle_t* phGraph, void* pNext);
ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListBeginGraphCaptureExp(
    ze_command_list_handle_t hCommandList, void* pNext);
ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListBeginCaptureIntoGraphExp(
    ze_command_list_handle_t hCommandList, ze_graph_handle_t hGraph, void* pNext);
ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListEndGraphCaptureExp(
    ze_command_list_handle_t hCommandList, ze_graph_handle_t* phGraph, void* pNext);
ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListInstantiateGraphExp(
    ze_graph_handle_t hGraph, ze_executable_graph_handle_t* phExecutableGraph, void* pNext);
ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListAppendGraphExp(
    ze_command_list_handle_t hCommandList, ze_executable_graph_handle_t hGraph, void* pNext,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGraphDestroyExp(ze_graph_handle_t hGraph);
ZE_DLLEXPORT ze_result_t ZE_APICALL zeExecutableGraphDestroyExp(ze_executable_graph_handle_t hGraph);
ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListAppendHostFunction(
    ze_command_list_handle_t hCommandList, void* pHostFunction, void* pUserData, void* pNext,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);
// The same by Intel's older name (compute-runtime's driver_experimental/zex_cmdlist.h).
ZE_DLLEXPORT ze_result_t ZE_APICALL zexCommandListAppendHostFunction(
    ze_command_list_handle_t hCommandList, void* pHostFunction, void* pUserData, void* pNext,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);
// Core counter-based event creation (Level Zero 1.15, loader 1.27): exported, as Intel's driver
// exports its core functions, and handed out here (not by Intel's driver) to processes whose
// loader is older.
ZE_DLLEXPORT ze_result_t ZE_APICALL zeEventCounterBasedCreate(
    ze_context_handle_t hContext, ze_device_handle_t hDevice,
    const simze::api::CounterBasedEventDesc* desc, ze_event_handle_t* phEvent);
}

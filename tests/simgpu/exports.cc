// The driver's exported extension functions: each only calls the function handed out by
// zeDriverGetExtensionFunctionAddress and put in the dispatch tables, as Intel's driver's
// exports call its namespace L0's functions (see api.h). Exported by exports.map.
#include "api.h"

extern "C" {

ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListAppendLaunchKernelWithArguments(
    ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel, ze_group_count_t groupCounts,
    simze::api::GroupSize groupSizes, void** pArguments, const void* pNext,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  return simze::api::CommandListAppendLaunchKernelWithArguments(
      hCommandList, hKernel, groupCounts, groupSizes, pArguments, pNext, hSignalEvent,
      numWaitEvents, phWaitEvents);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListAppendLaunchKernelWithParameters(
    ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
    const ze_group_count_t* pGroupCounts, const void* pNext, ze_event_handle_t hSignalEvent,
    uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  return simze::api::CommandListAppendLaunchKernelWithParameters(
      hCommandList, hKernel, pGroupCounts, pNext, hSignalEvent, numWaitEvents, phWaitEvents);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zexCounterBasedEventCreate2(
    ze_context_handle_t hContext, ze_device_handle_t hDevice,
    const simze::api::CounterBasedEventDesc* desc, ze_event_handle_t* phEvent) {
  return simze::api::ExCounterBasedEventCreate2(hContext, hDevice, desc, phEvent);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGraphCreateExp(ze_context_handle_t hContext,
                                                     ze_graph_handle_t* phGraph, void* pNext) {
  return simze::api::GraphCreateExp(hContext, phGraph, pNext);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL
zeCommandListBeginGraphCaptureExp(ze_command_list_handle_t hCommandList, void* pNext) {
  return simze::api::CommandListBeginGraphCaptureExp(hCommandList, pNext);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListBeginCaptureIntoGraphExp(
    ze_command_list_handle_t hCommandList, ze_graph_handle_t hGraph, void* pNext) {
  return simze::api::CommandListBeginCaptureIntoGraphExp(hCommandList, hGraph, pNext);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListEndGraphCaptureExp(
    ze_command_list_handle_t hCommandList, ze_graph_handle_t* phGraph, void* pNext) {
  return simze::api::CommandListEndGraphCaptureExp(hCommandList, phGraph, pNext);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListInstantiateGraphExp(
    ze_graph_handle_t hGraph, ze_executable_graph_handle_t* phExecutableGraph, void* pNext) {
  return simze::api::CommandListInstantiateGraphExp(hGraph, phExecutableGraph, pNext);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListAppendGraphExp(
    ze_command_list_handle_t hCommandList, ze_executable_graph_handle_t hGraph, void* pNext,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  return simze::api::CommandListAppendGraphExp(hCommandList, hGraph, pNext, hSignalEvent,
                                               numWaitEvents, phWaitEvents);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGraphDestroyExp(ze_graph_handle_t hGraph) {
  return simze::api::GraphDestroyExp(hGraph);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL
zeExecutableGraphDestroyExp(ze_executable_graph_handle_t hGraph) {
  return simze::api::ExecutableGraphDestroyExp(hGraph);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeCommandListAppendHostFunction(
    ze_command_list_handle_t hCommandList, void* pHostFunction, void* pUserData, void* pNext,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  return simze::api::CommandListAppendHostFunction(hCommandList, pHostFunction, pUserData, pNext,
                                                   hSignalEvent, numWaitEvents, phWaitEvents);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zexCommandListAppendHostFunction(
    ze_command_list_handle_t hCommandList, void* pHostFunction, void* pUserData, void* pNext,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  return simze::api::ExCommandListAppendHostFunction(hCommandList, pHostFunction, pUserData, pNext,
                                                     hSignalEvent, numWaitEvents, phWaitEvents);
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeEventCounterBasedCreate(
    ze_context_handle_t hContext, ze_device_handle_t hDevice,
    const simze::api::CounterBasedEventDesc* desc, ze_event_handle_t* phEvent) {
  return simze::api::CoreEventCounterBasedCreate(hContext, hDevice, desc, phEvent);
}

}  // extern "C"

// Level Zero 1.9's questions about an object: a command list's device, context, ordinal,
// index and kind, a queue's ordinal and index, an event's pool and a pool's flags. A loader
// older than 1.9 does not know them (ddi_tables.cc fills them for a newer one). With
// XTRACE_SIMZE_SILENT_QUERIES=1 they say success and write nothing, as Level Zero's null
// driver does.
#include "api.h"
#include "config.h"
#include "objects.h"

namespace simze::api {

ze_result_t CommandListGetDeviceHandle(ze_command_list_handle_t hCommandList, ze_device_handle_t* phDevice) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (phDevice == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (config().silent_queries) return ZE_RESULT_SUCCESS;  // written: nothing
  *phDevice = to_handle<ze_device_handle_t>(list->device);
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListGetContextHandle(ze_command_list_handle_t hCommandList, ze_context_handle_t* phContext) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (phContext == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *phContext = to_handle<ze_context_handle_t>(list->context);
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListGetOrdinal(ze_command_list_handle_t hCommandList, uint32_t* pOrdinal) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pOrdinal == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (config().silent_queries) return ZE_RESULT_SUCCESS;  // written: nothing
  *pOrdinal = list->ordinal;
  return ZE_RESULT_SUCCESS;
}

// The spec: only for immediate lists.
ze_result_t CommandListImmediateGetIndex(ze_command_list_handle_t hCommandList, uint32_t* pIndex) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pIndex == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!list->immediate) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (config().silent_queries) return ZE_RESULT_SUCCESS;  // written: nothing
  *pIndex = list->index;
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListIsImmediate(ze_command_list_handle_t hCommandList, ze_bool_t* pIsImmediate) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pIsImmediate == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (config().silent_queries) return ZE_RESULT_SUCCESS;  // written: nothing
  *pIsImmediate = list->immediate;
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandQueueGetOrdinal(ze_command_queue_handle_t hCommandQueue, uint32_t* pOrdinal) {
  CommandQueue* q = from_handle<CommandQueue>(hCommandQueue);
  if (q == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pOrdinal == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (config().silent_queries) return ZE_RESULT_SUCCESS;  // written: nothing
  *pOrdinal = q->ordinal;
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandQueueGetIndex(ze_command_queue_handle_t hCommandQueue, uint32_t* pIndex) {
  CommandQueue* q = from_handle<CommandQueue>(hCommandQueue);
  if (q == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pIndex == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (config().silent_queries) return ZE_RESULT_SUCCESS;  // written: nothing
  *pIndex = q->index;
  return ZE_RESULT_SUCCESS;
}

ze_result_t EventPoolGetContextHandle(ze_event_pool_handle_t hEventPool, ze_context_handle_t* phContext) {
  EventPool* pool = from_handle<EventPool>(hEventPool);
  if (pool == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (phContext == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *phContext = to_handle<ze_context_handle_t>(pool->context);
  return ZE_RESULT_SUCCESS;
}

ze_result_t EventPoolGetFlags(ze_event_pool_handle_t hEventPool, ze_event_pool_flags_t* pFlags) {
  EventPool* pool = from_handle<EventPool>(hEventPool);
  if (pool == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pFlags == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (config().silent_queries) return ZE_RESULT_SUCCESS;  // written: nothing
  *pFlags = pool->flags;
  return ZE_RESULT_SUCCESS;
}

ze_result_t EventGetEventPool(ze_event_handle_t hEvent, ze_event_pool_handle_t* phEventPool) {
  Event* event = from_handle<Event>(hEvent);
  if (event == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (phEventPool == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (config().silent_queries) return ZE_RESULT_SUCCESS;  // written: nothing
  *phEventPool = to_handle<ze_event_pool_handle_t>(event->pool);
  return ZE_RESULT_SUCCESS;
}

}  // namespace simze::api

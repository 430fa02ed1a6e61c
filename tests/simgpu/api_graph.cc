// Intel's record-and-replay graphs (ZE_experimental_record_replay_graph, compute-runtime's
// driver_experimental/zex_graph.h), handed out through zeDriverGetExtensionFunctionAddress and
// exported by name as Intel's driver exports them. Between zeCommandListBegin...CaptureExp and
// zeCommandListEndGraphCaptureExp an immediate list's appends are recorded into a graph and run
// nothing; zeCommandListInstantiateGraphExp freezes a graph's commands; every
// zeCommandListAppendGraphExp runs them again on the appending immediate list, as one
// submission, with the same timestamps and ground truth as any other command.
#include <memory>

#include "api.h"
#include "objects.h"

namespace simze::api {
namespace {

ze_result_t begin_capture(ze_command_list_handle_t hCommandList, Graph* into, void* pNext) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pNext != nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // no extension is known
  // Intel's driver records graphs from immediate lists only.
  if (!list->immediate || list->capture != nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (into == nullptr) {
    into = new Graph;
    into->context = list->context;
  }
  into->recorded_on = reinterpret_cast<uintptr_t>(list);
  list->capture = into;
  return ZE_RESULT_SUCCESS;
}

}  // namespace
}  // namespace simze::api

using namespace simze;

ze_result_t simze::api::GraphCreateExp(ze_context_handle_t hContext,
                                                                ze_graph_handle_t* phGraph,
                                                                void* pNext) {
  Context* ctx = from_handle<Context>(hContext);
  if (ctx == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (phGraph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pNext != nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  auto* graph = new Graph;
  graph->context = ctx;
  *phGraph = to_handle<ze_graph_handle_t>(graph);
  return ZE_RESULT_SUCCESS;
}

ze_result_t simze::api::CommandListBeginGraphCaptureExp(
    ze_command_list_handle_t hCommandList, void* pNext) {
  return api::begin_capture(hCommandList, nullptr, pNext);
}

ze_result_t simze::api::CommandListBeginCaptureIntoGraphExp(
    ze_command_list_handle_t hCommandList, ze_graph_handle_t hGraph, void* pNext) {
  Graph* graph = from_handle<Graph>(hGraph);
  if (graph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return api::begin_capture(hCommandList, graph, pNext);
}

ze_result_t simze::api::CommandListEndGraphCaptureExp(
    ze_command_list_handle_t hCommandList, ze_graph_handle_t* phGraph, void* pNext) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pNext != nullptr || list->capture == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (phGraph != nullptr) *phGraph = to_handle<ze_graph_handle_t>(list->capture);
  list->capture = nullptr;
  return ZE_RESULT_SUCCESS;
}

ze_result_t simze::api::CommandListInstantiateGraphExp(
    ze_graph_handle_t hGraph, ze_executable_graph_handle_t* phExecutableGraph, void* pNext) {
  Graph* graph = from_handle<Graph>(hGraph);
  if (graph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (phExecutableGraph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pNext != nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  auto recording = std::make_shared<Recording>();
  recording->commands = graph->commands;
  recording->list_handle = graph->recorded_on;
  auto* exec = new ExecutableGraph;
  exec->recording = std::move(recording);
  *phExecutableGraph = to_handle<ze_executable_graph_handle_t>(exec);
  return ZE_RESULT_SUCCESS;
}

ze_result_t simze::api::CommandListAppendGraphExp(
    ze_command_list_handle_t hCommandList, ze_executable_graph_handle_t hGraph, void* pNext,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  CommandList* list = from_handle<CommandList>(hCommandList);
  ExecutableGraph* exec = from_handle<ExecutableGraph>(hGraph);
  if (list == nullptr || exec == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pNext != nullptr || !list->immediate || list->capture != nullptr) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  // The replay submits the graph's commands again: their counter-based events stand for this
  // replay from now on.
  for (const Command& cmd : exec->recording->commands) api::unsignal_counter_based(cmd.signal);
  return api::submit_recordings(list, {exec->recording}, hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t simze::api::GraphDestroyExp(ze_graph_handle_t hGraph) {
  Graph* graph = from_handle<Graph>(hGraph);
  if (graph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  graph->tag = 0;  // a stale handle is rejected, not reused silently
  delete graph;
  return ZE_RESULT_SUCCESS;
}

ze_result_t simze::api::ExecutableGraphDestroyExp(
    ze_executable_graph_handle_t hGraph) {
  ExecutableGraph* exec = from_handle<ExecutableGraph>(hGraph);
  if (exec == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  exec->tag = 0;
  delete exec;  // a replay in flight keeps the recording it shares
  return ZE_RESULT_SUCCESS;
}

// Tests of the extension functions the simulated driver hands out through
// zeDriverGetExtensionFunctionAddress, as an application reaches them (through the real loader
// for everything else): Intel's record-and-replay graphs and host functions. Ground truth says
// what really ran.
#include <gtest/gtest.h>
#include <level_zero/ze_api.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "test_ze.h"
#include "ze_newer_types.h"

using namespace simgpu_test;

namespace {

// compute-runtime's driver_experimental/zex_graph.h.
using GraphHandle = struct _ze_graph_handle_t*;
using ExecutableGraphHandle = struct _ze_executable_graph_handle_t*;
using BeginGraphCaptureFn = ze_result_t (*)(ze_command_list_handle_t, void*);
using BeginCaptureIntoGraphFn = ze_result_t (*)(ze_command_list_handle_t, GraphHandle, void*);
using EndGraphCaptureFn = ze_result_t (*)(ze_command_list_handle_t, GraphHandle*, void*);
using InstantiateGraphFn = ze_result_t (*)(GraphHandle, ExecutableGraphHandle*, void*);
using AppendGraphFn = ze_result_t (*)(ze_command_list_handle_t, ExecutableGraphHandle, void*,
                                      ze_event_handle_t, uint32_t, ze_event_handle_t*);
using GraphDestroyFn = ze_result_t (*)(GraphHandle);
using ExecutableGraphDestroyFn = ze_result_t (*)(ExecutableGraphHandle);

template <typename Fn>
Fn Extension(const char* name) {
  void* fn = nullptr;
  ZE_CHECK(zeDriverGetExtensionFunctionAddress(session().driver, name, &fn));
  EXPECT_NE(fn, nullptr) << name;
  return reinterpret_cast<Fn>(fn);
}

std::vector<Truth> TruthOnQueue(uint64_t queue, uint64_t since_mono) {
  const char* path = std::getenv("XTRACE_SIMZE_GROUND_TRUTH");
  std::vector<Truth> out;
  if (!path) return out;
  for (Truth& t : read_ground_truth(path))
    if (t.queue == queue && t.submit_mono >= since_mono) out.push_back(std::move(t));
  return out;
}

// Recorded once, the graph runs nothing; each replay runs its kernels again, in order, as one
// submission on the replaying list, signalling their events (with timestamps) and its own.
TEST(Graph, RecordedOnceRunsAtEveryReplay) {
  const uint64_t since = clock_ns(CLOCK_MONOTONIC);
  const auto begin = Extension<BeginGraphCaptureFn>("zeCommandListBeginGraphCaptureExp");
  const auto end = Extension<EndGraphCaptureFn>("zeCommandListEndGraphCaptureExp");
  const auto instantiate = Extension<InstantiateGraphFn>("zeCommandListInstantiateGraphExp");
  const auto append = Extension<AppendGraphFn>("zeCommandListAppendGraphExp");
  const auto destroy = Extension<GraphDestroyFn>("zeGraphDestroyExp");
  const auto destroy_exec = Extension<ExecutableGraphDestroyFn>("zeExecutableGraphDestroyExp");
  ze_module_handle_t m = make_module(
      "XTRACE-SIMGPU-MODULE 1\nkernel 2000000 graph_first_2ms\nkernel 1000000 graph_second_1ms\n");
  ze_kernel_handle_t first = make_kernel(m, "graph_first_2ms");
  ze_kernel_handle_t second = make_kernel(m, "graph_second_1ms");
  ze_command_list_handle_t il = make_immediate(0);
  ze_event_pool_handle_t pool = make_event_pool(2, true);
  ze_event_handle_t first_done = make_event(pool, 0), replay_done = make_event(pool, 1);

  ZE_CHECK(begin(il, nullptr));
  EXPECT_EQ(begin(il, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT) << "already capturing";
  ZE_CHECK(zeCommandListAppendLaunchKernel(il, first, &kOneGroup, first_done, 0, nullptr));
  ZE_CHECK(zeCommandListAppendLaunchKernel(il, second, &kOneGroup, nullptr, 0, nullptr));
  GraphHandle graph = nullptr;
  ZE_CHECK(end(il, &graph, nullptr));
  ASSERT_NE(graph, nullptr);
  // Bookworm's loader has no zeCommandListHostSynchronize: a barrier's event says the list
  // has run what it was given.
  ZE_CHECK(zeCommandListAppendBarrier(il, replay_done, 0, nullptr));
  ZE_CHECK(zeEventHostSynchronize(replay_done, UINT64_MAX));
  EXPECT_TRUE(TruthOnQueue(handle_value(il), since).empty()) << "recording runs nothing";
  EXPECT_EQ(zeEventQueryStatus(first_done), ZE_RESULT_NOT_READY);

  ExecutableGraphHandle exec = nullptr;
  ZE_CHECK(instantiate(graph, &exec, nullptr));
  ZE_CHECK(destroy(graph));  // the executable graph keeps what it runs
  constexpr int kReplays = 3;
  for (int r = 0; r < kReplays; ++r) {
    ZE_CHECK(zeEventHostReset(replay_done));
    ZE_CHECK(zeEventHostReset(first_done));
    ZE_CHECK(append(il, exec, nullptr, replay_done, 0, nullptr));
    ZE_CHECK(zeEventHostSynchronize(replay_done, UINT64_MAX));
    EXPECT_EQ(zeEventQueryStatus(first_done), ZE_RESULT_SUCCESS);
    ze_kernel_timestamp_result_t ts{};
    ZE_CHECK(zeEventQueryKernelTimestamp(first_done, &ts));
    EXPECT_GT(ts.global.kernelEnd, ts.global.kernelStart);
  }
  const std::vector<Truth> truth = TruthOnQueue(handle_value(il), since);
  ASSERT_EQ(truth.size(), 2u * kReplays);
  std::set<uint64_t> submissions;
  for (size_t i = 0; i < truth.size(); ++i) {
    EXPECT_EQ(truth[i].name, i % 2 == 0 ? "graph_first_2ms" : "graph_second_1ms");
    EXPECT_EQ(truth[i].cmdlist, handle_value(il)) << "the list that recorded it";
    if (i > 0) {
      EXPECT_GE(truth[i].start_mono, truth[i - 1].end_mono) << "in order";
    }
    submissions.insert(truth[i].submission);
  }
  EXPECT_EQ(submissions.size(), size_t{kReplays}) << "one submission per replay";

  EXPECT_EQ(append(il, nullptr, nullptr, nullptr, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  ZE_CHECK(destroy_exec(exec));
  ZE_CHECK(zeCommandListDestroy(il));
}

// A host function runs when the list reaches it, in order between the list's kernels, on the
// engine's thread; ground truth lists it as host_function.
void CountRun(void* runs) { ++*static_cast<int*>(runs); }

TEST(HostFunction, RunsInOrderOnItsList) {
  const uint64_t since = clock_ns(CLOCK_MONOTONIC);
  using AppendHostFunctionFn = ze_result_t (*)(ze_command_list_handle_t, void*, void*, void*,
                                               ze_event_handle_t, uint32_t, ze_event_handle_t*);
  const auto append = Extension<AppendHostFunctionFn>("zeCommandListAppendHostFunction");
  ze_module_handle_t m = make_module("XTRACE-SIMGPU-MODULE 1\nkernel 1000000 around_1ms\n");
  ze_kernel_handle_t k = make_kernel(m, "around_1ms");
  ze_command_list_handle_t il = make_immediate(0);
  int runs = 0;
  ZE_CHECK(zeCommandListAppendLaunchKernel(il, k, &kOneGroup, nullptr, 0, nullptr));
  ZE_CHECK(append(il, reinterpret_cast<void*>(&CountRun), &runs, nullptr, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListAppendLaunchKernel(il, k, &kOneGroup, nullptr, 0, nullptr));
  EXPECT_EQ(append(il, nullptr, &runs, nullptr, nullptr, 0, nullptr),
            ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  ZE_CHECK(zeCommandListDestroy(il));  // after its engine has run everything
  EXPECT_EQ(runs, 1);
  const std::vector<Truth> truth = TruthOnQueue(handle_value(il), since);
  ASSERT_EQ(truth.size(), 3u);
  EXPECT_EQ(truth[0].name, "around_1ms");
  EXPECT_EQ(truth[1].kind, "host_function");
  EXPECT_EQ(truth[2].name, "around_1ms");
  EXPECT_GE(truth[2].start_mono, truth[1].end_mono);
}

// The other names Intel's driver hands out: zexCommandListAppendHostFunction (the older name
// of the host-function append) and core zeEventCounterBasedCreate (for loaders older than
// 1.14), each its own function, as the driver's are.
TEST(OtherNames, HostFunctionAndCounterBasedEvent) {
  using AppendHostFunctionFn = ze_result_t (*)(ze_command_list_handle_t, void*, void*, void*,
                                               ze_event_handle_t, uint32_t, ze_event_handle_t*);
  using ze_newer::CounterBasedEventDesc;
  using CounterBasedCreateFn = ze_result_t (*)(ze_context_handle_t, ze_device_handle_t,
                                               const CounterBasedEventDesc*, ze_event_handle_t*);
  const auto append = Extension<AppendHostFunctionFn>("zexCommandListAppendHostFunction");
  const auto create = Extension<CounterBasedCreateFn>("zeEventCounterBasedCreate");
  ASSERT_NE(append, Extension<AppendHostFunctionFn>("zeCommandListAppendHostFunction"))
      << "one name's probe would see the other's calls";
  ze_command_list_handle_t il = make_immediate(0);
  // Signalled by the host function's append.
  const CounterBasedEventDesc desc{ze_newer::kStructureTypeCounterBasedEventDesc, nullptr,
                                   ze_newer::kCounterBasedImmediate | ze_newer::kCounterBasedHostVisible,
                                   ZE_EVENT_SCOPE_FLAG_HOST, 0};
  ze_event_handle_t done = nullptr;
  ZE_CHECK(create(session().context, session().device(), &desc, &done));
  int runs = 0;
  ZE_CHECK(append(il, reinterpret_cast<void*>(&CountRun), &runs, nullptr, done, 0, nullptr));
  ZE_CHECK(zeEventHostSynchronize(done, UINT64_MAX));
  EXPECT_EQ(runs, 1);
  ZE_CHECK(zeEventDestroy(done));
  ZE_CHECK(zeCommandListDestroy(il));
}

// A capture into a graph the caller made (zeGraphCreateExp), ended without asking for it back.
TEST(Graph, CaptureIntoTheCallersGraph) {
  const uint64_t since = clock_ns(CLOCK_MONOTONIC);
  using GraphCreateFn = ze_result_t (*)(ze_context_handle_t, GraphHandle*, void*);
  const auto create = Extension<GraphCreateFn>("zeGraphCreateExp");
  const auto begin_into = Extension<BeginCaptureIntoGraphFn>("zeCommandListBeginCaptureIntoGraphExp");
  const auto end = Extension<EndGraphCaptureFn>("zeCommandListEndGraphCaptureExp");
  const auto instantiate = Extension<InstantiateGraphFn>("zeCommandListInstantiateGraphExp");
  const auto append = Extension<AppendGraphFn>("zeCommandListAppendGraphExp");
  ze_module_handle_t m = make_module("XTRACE-SIMGPU-MODULE 1\nkernel 1000000 graph_into_1ms\n");
  ze_kernel_handle_t k = make_kernel(m, "graph_into_1ms");
  ze_command_list_handle_t il = make_immediate(0);
  ze_command_list_handle_t regular = make_list(0);
  GraphHandle graph = nullptr;
  ZE_CHECK(create(session().context, &graph, nullptr));
  EXPECT_EQ(begin_into(regular, graph, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT)
      << "graphs are recorded from immediate lists";
  ZE_CHECK(begin_into(il, graph, nullptr));
  ZE_CHECK(zeCommandListAppendLaunchKernel(il, k, &kOneGroup, nullptr, 0, nullptr));
  ZE_CHECK(end(il, nullptr, nullptr));
  ExecutableGraphHandle exec = nullptr;
  ZE_CHECK(instantiate(graph, &exec, nullptr));
  ZE_CHECK(append(il, exec, nullptr, nullptr, 0, nullptr));
  ZE_CHECK(append(il, exec, nullptr, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListDestroy(regular));
  ZE_CHECK(zeCommandListDestroy(il));  // after its engine has run everything
  EXPECT_EQ(TruthOnQueue(handle_value(il), since).size(), 2u);
}

}  // namespace

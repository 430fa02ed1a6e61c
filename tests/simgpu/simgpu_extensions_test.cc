// Tests of the extension functions the simulated driver hands out through
// zeDriverGetExtensionFunctionAddress, as an application reaches them (through the real loader
// for everything else): Intel's record-and-replay graphs and host functions. Ground truth says
// what really ran.
#include <gtest/gtest.h>
#include <level_zero/ze_api.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
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
// 1.27, Level Zero 1.15), each its own function, as the driver's are.
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

// Both 1.14 launches, as Intel's driver hands them out: each runs its kernel with the group
// counts it was given (by value, or by pointer with pNext before the event).
TEST(Launch, WithArgumentsAndWithParameters) {
  const uint64_t since = clock_ns(CLOCK_MONOTONIC);
  using WithArgumentsFn = ze_result_t (*)(ze_command_list_handle_t, ze_kernel_handle_t,
                                          ze_group_count_t, ze_newer::GroupSize, void**,
                                          const void*, ze_event_handle_t, uint32_t,
                                          ze_event_handle_t*);
  using WithParametersFn = ze_result_t (*)(ze_command_list_handle_t, ze_kernel_handle_t,
                                           const ze_group_count_t*, const void*, ze_event_handle_t,
                                           uint32_t, ze_event_handle_t*);
  const auto with_arguments = Extension<WithArgumentsFn>("zeCommandListAppendLaunchKernelWithArguments");
  const auto with_parameters =
      Extension<WithParametersFn>("zeCommandListAppendLaunchKernelWithParameters");
  ze_module_handle_t m = make_module(
      "XTRACE-SIMGPU-MODULE 1\nkernel 300000 with_arguments\nkernel 300000 with_parameters\n");
  ze_kernel_handle_t a = make_kernel(m, "with_arguments");
  ze_kernel_handle_t p = make_kernel(m, "with_parameters");
  ze_command_list_handle_t il = make_immediate(0);
  ze_event_pool_handle_t pool = make_event_pool(1, true);
  ze_event_handle_t done = make_event(pool, 0);
  void* arguments[] = {nullptr};
  ZE_CHECK(with_arguments(il, a, ze_group_count_t{3, 2, 1}, ze_newer::GroupSize{16, 1, 1},
                          arguments, nullptr, nullptr, 0, nullptr));
  const ze_group_count_t groups{5, 1, 1};
  ZE_CHECK(with_parameters(il, p, &groups, nullptr, done, 0, nullptr));
  ZE_CHECK(zeEventHostSynchronize(done, UINT64_MAX));
  EXPECT_EQ(with_parameters(il, p, nullptr, nullptr, nullptr, 0, nullptr),
            ZE_RESULT_ERROR_INVALID_NULL_POINTER);
  const std::vector<Truth> truth = TruthOnQueue(handle_value(il), since);
  ASSERT_EQ(truth.size(), 2u);
  EXPECT_EQ(truth[0].name, "with_arguments");
  EXPECT_EQ(truth[1].name, "with_parameters");
  ZE_CHECK(zeEventDestroy(done));
  ZE_CHECK(zeEventPoolDestroy(pool));
  ZE_CHECK(zeCommandListDestroy(il));
}

// A newer loader exports the newer entry points and dispatches them through the tables it gets
// from the driver, whose slots it sizes by its own version (Level Zero 1.14: loader 1.26; 1.15:
// 1.27; 1.17: 1.32): the driver fills them for such a loader, and leaves an older one's table
// as long as that loader made it.
TEST(NewerLoaders, FindTheNewerEntryPointsInTheTables) {
  session();  // the loader has loaded the driver
  void* driver = dlopen(SIMZE_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  ASSERT_NE(driver, nullptr) << "the loader has loaded " << SIMZE_PATH;
  using GetTableFn = ze_result_t (*)(ze_api_version_t, void*);
  const auto get_list_table = reinterpret_cast<GetTableFn>(dlsym(driver, "zeGetCommandListProcAddrTable"));
  const auto get_event_table = reinterpret_cast<GetTableFn>(dlsym(driver, "zeGetEventProcAddrTable"));
  ASSERT_TRUE(get_list_table && get_event_table);
  // Slots as Level Zero 1.17's ze_ddi.h numbers them.
  constexpr size_t kListWithParameters = 36, kListWithArguments = 37, kListHostFunction = 51;
  constexpr size_t kEventCounterBasedCreate = 11;
  struct Slot {
    GetTableFn get;
    size_t index;
    const char* exported;
    uint32_t since_minor;
  };
  const Slot slots[] = {
      {get_list_table, kListWithParameters, "zeCommandListAppendLaunchKernelWithParameters", 14},
      {get_list_table, kListWithArguments, "zeCommandListAppendLaunchKernelWithArguments", 14},
      {get_list_table, kListHostFunction, "zeCommandListAppendHostFunction", 17},
      {get_event_table, kEventCounterBasedCreate, "zeEventCounterBasedCreate", 15},
  };
  for (const Slot& slot : slots) {
    // The function the driver hands out by that name (its dispatch tables hold the same).
    void* const handed_out = Extension<void*>(slot.exported);
    for (uint32_t minor : {slot.since_minor - 1, slot.since_minor, 17u}) {
      void* table[64];
      std::memset(table, 0, sizeof table);
      ZE_CHECK(slot.get(static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, minor)), table));
      EXPECT_EQ(table[slot.index], minor >= slot.since_minor ? handed_out : nullptr)
          << slot.exported << " for a 1." << minor << " loader";
    }
  }
  dlclose(driver);
}

// As Intel's driver, the functions handed out are not the exports of the same names, which only
// call them: a probe on an export does not see a call through the pointer.
TEST(HandedOut, AreNotTheExportsOfTheirNames) {
  session();
  void* driver = dlopen(SIMZE_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  ASSERT_NE(driver, nullptr);
  for (const char* name :
       {"zeCommandListAppendLaunchKernelWithArguments", "zeCommandListAppendLaunchKernelWithParameters",
        "zexCounterBasedEventCreate2", "zeGraphCreateExp", "zeCommandListBeginGraphCaptureExp",
        "zeCommandListBeginCaptureIntoGraphExp", "zeCommandListEndGraphCaptureExp",
        "zeCommandListInstantiateGraphExp", "zeCommandListAppendGraphExp", "zeGraphDestroyExp",
        "zeExecutableGraphDestroyExp", "zeCommandListAppendHostFunction",
        "zexCommandListAppendHostFunction", "zeEventCounterBasedCreate"}) {
    void* exported = dlsym(driver, name);
    EXPECT_NE(exported, nullptr) << name << " is exported";
    EXPECT_NE(Extension<void*>(name), exported) << name;
  }
  dlclose(driver);
}

}  // namespace

// A Level Zero client shaped like SYCL's "v2" Level Zero adapter (Unified Runtime), the default
// on recent Intel GPUs: it looks up the driver's extension functions at start
// (zeDriverGetExtensionFunctionAddress: zeCommandListAppendLaunchKernelWithArguments,
// zexCounterBasedEventCreate2), initialises with zeInitDrivers, submits on in-order immediate
// command lists, launches with arguments (and once an iteration with parameters, the other
// 1.14 launch Intel's driver hands out), signals counter-based events with kernel timestamps,
// batches a regular list with zeCommandListImmediateAppendCommandListsExp, records a graph
// once at set-up and replays it every iteration (Intel's graph extension, as SYCL graphs use
// it: zeCommandListBeginGraphCaptureExp ... zeCommandListAppendGraphExp, all driver pointers)
// appends a host function (zeCommandListAppendHostFunction, a driver pointer) and waits with
// zeCommandListHostSynchronize. Entry points the process's loader lacks (bookworm's 1.8.12
// has none of the newer ones) are looked up with dlsym and replaced by what an older adapter
// calls (zeInit, zeEventHostSynchronize, an event-pool event), so it runs on any loader. Its
// launch log lists every launch as ze_workload's does.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <level_zero/ze_api.h>

#include "kernel_catalog.h"
#include "launch_log.h"
#include "sycl_shape.h"
#include "workload_cli.h"
#include "ze_newer_types.h"
#include "ze_result.h"

namespace {

using namespace xtrace::workloads;

constexpr const char* kUsage =
    "usage: ze_sycl_v2 [--iterations N] [--launch-log FILE] [--wait-for-signal] [--older-names]\n"
    "                  [--wait-in-graph-capture]\n"
    "\n"
    "Drives Level Zero like SYCL's v2 adapter (Unified Runtime): extension functions looked\n"
    "up with zeDriverGetExtensionFunctionAddress, zeInitDrivers, one in-order immediate\n"
    "command list, launches with arguments (zeCommandListAppendLaunchKernelWithArguments)\n"
    "signalling counter-based events with kernel timestamps (zexCounterBasedEventCreate2),\n"
    "a regular list appended with zeCommandListImmediateAppendCommandListsExp, a graph\n"
    "recorded once at set-up (zeCommandListBeginGraphCaptureExp, EndGraphCaptureExp,\n"
    "InstantiateGraphExp) and replayed every iteration (zeCommandListAppendGraphExp), and\n"
    "zeCommandListHostSynchronize. What the loader lacks is replaced by the older calls.\n"
    "Each iteration launches 3 kernels (2 with arguments, the third with\n"
    "zeCommandListAppendLaunchKernelWithParameters, as a runtime passing launch extensions in\n"
    "pNext does; both driver pointers), 1 in the appended regular list and the graph's 2 (the\n"
    "launch log lists the recorded ones at every replay, as it lists the regular list's at\n"
    "every append), and appends a host function\n"
    "(zeCommandListAppendHostFunction, a driver pointer) after them.\n"
    "Prints \"ready <pid>\" after set-up, then \"done launches=N graph_replays=M\".\n"
    "\n"
    "Options:\n"
    "  --iterations N     (default 4, 1..100000)\n"
    "  --launch-log FILE  append one line per launch: <tid>\\t<kernel>\\t<x>,<y>,<z>\n"
    "  --wait-for-signal  after \"ready <pid>\" (every lookup made, every object created),\n"
    "                     wait for SIGUSR1 before launching: a tracer attaches meanwhile\n"
    "  --wait-in-graph-capture  say \"ready <pid>\" and wait for SIGUSR1 once the graph's\n"
    "                     capture has begun, before its launches are appended (a tracer\n"
    "                     attaches in the middle of the recording); the graph's kernel is\n"
    "                     made after the wait\n"
    "  --older-names      the other names of two calls: host functions by Intel's older\n"
    "                     zexCommandListAppendHostFunction, events by the core\n"
    "                     zeEventCounterBasedCreate (the loader's export where it has one,\n"
    "                     else the driver's pointer), as other drivers and adapters call them\n"
    "\n"
    "Example:\n"
    "  ZE_ENABLE_ALT_DRIVERS=$PWD/build/lib/libxtrace_simze.so build/bin/ze_sycl_v2 --iterations 2\n"
    "  build/bin/ze_sycl_v2 --wait-for-signal &   # then: xtrace attach --pid $!; kill -USR1 $!\n";

// Level Zero 1.10-1.14 functions, as the specification lays them out (x86-64): bookworm's
// headers end at 1.4 (the types: ze_newer_types.h).
using ze_newer::CounterBasedEventDesc;
using ze_newer::GroupSize;
using ze_newer::InitDriverTypeDesc;
using ze_newer::kCounterBasedHostVisible, ze_newer::kCounterBasedImmediate,
    ze_newer::kCounterBasedKernelTimestamp, ze_newer::kCounterBasedNonImmediate,
    ze_newer::kStructureTypeCounterBasedEventDesc, ze_newer::kStructureTypeInitDriverTypeDesc,
    ze_newer::kInitDriverTypeGpu;
constexpr uint32_t kQueueFlagInOrder = 2;  // ZE_COMMAND_QUEUE_FLAG_IN_ORDER (1.5)

using LaunchWithArgumentsFn = ze_result_t (*)(ze_command_list_handle_t, ze_kernel_handle_t,
                                              ze_group_count_t, GroupSize, void**, const void*,
                                              ze_event_handle_t, uint32_t, ze_event_handle_t*);
using LaunchWithParametersFn = ze_result_t (*)(ze_command_list_handle_t, ze_kernel_handle_t,
                                               const ze_group_count_t*, const void*,
                                               ze_event_handle_t, uint32_t, ze_event_handle_t*);
using CounterBasedEventCreateFn = ze_result_t (*)(ze_context_handle_t, ze_device_handle_t,
                                                  const CounterBasedEventDesc*, ze_event_handle_t*);
using InitDriversFn = ze_result_t (*)(uint32_t*, ze_driver_handle_t*, InitDriverTypeDesc*);
using HostSynchronizeFn = ze_result_t (*)(ze_command_list_handle_t, uint64_t);
using ImmediateAppendFn = ze_result_t (*)(ze_command_list_handle_t, uint32_t,
                                          ze_command_list_handle_t*, ze_event_handle_t, uint32_t,
                                          ze_event_handle_t*);
// Intel's graphs (compute-runtime's driver_experimental/zex_graph.h).
using GraphHandle = struct _ze_graph_handle_t*;
using ExecutableGraphHandle = struct _ze_executable_graph_handle_t*;
using BeginGraphCaptureFn = ze_result_t (*)(ze_command_list_handle_t, void*);
using EndGraphCaptureFn = ze_result_t (*)(ze_command_list_handle_t, GraphHandle*, void*);
using InstantiateGraphFn = ze_result_t (*)(GraphHandle, ExecutableGraphHandle*, void*);
using AppendGraphFn = ze_result_t (*)(ze_command_list_handle_t, ExecutableGraphHandle, void*,
                                      ze_event_handle_t, uint32_t, ze_event_handle_t*);
using GraphDestroyFn = ze_result_t (*)(GraphHandle);
using AppendHostFunctionFn = ze_result_t (*)(ze_command_list_handle_t, void*, void*, void*,
                                             ze_event_handle_t, uint32_t, ze_event_handle_t*);

// The host function each iteration appends (as SYCL's host tasks on an in-order queue may):
// it counts its runs, which the workload checks.
void CountHostFunctionRun(void* runs) { ++*static_cast<uint32_t*>(runs); }
using ExecutableGraphDestroyFn = ze_result_t (*)(ExecutableGraphHandle);

// The graph's two launches: softmax at two sizes, the first signalling a timestamp event.
constexpr ze_group_count_t kGraphGroups[] = {{2, 1, 1}, {4, 1, 1}};

template <typename Fn>
Fn LoaderExport(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

template <typename Fn>
Fn DriverExtension(ze_driver_handle_t driver, const char* name) {
  void* fn = nullptr;
  if (zeDriverGetExtensionFunctionAddress(driver, name, &fn) != ZE_RESULT_SUCCESS) return nullptr;
  return reinterpret_cast<Fn>(fn);
}

}  // namespace

int main(int argc, char** argv) {
  set_program_name("ze_sycl_v2");
  bool older_names = false, wait_in_graph_capture = false;
  const SyclShapeOptions options =
      ParseSyclShapeOptions(argc, argv, kUsage,
                            {{"--wait-in-graph-capture", &wait_in_graph_capture},
                             {"--older-names", &older_names}});
  const bool wait_for_signal = options.wait_for_signal;
  LaunchLog* const log = options.launch_log.get();
  const ReadyHandshake ready(wait_for_signal || wait_in_graph_capture);

  // Initialisation: zeInitDrivers where the loader has it, as the adapter prefers.
  ze_driver_handle_t driver = nullptr;
  uint32_t count = 1;
  if (auto init_drivers = LoaderExport<InitDriversFn>("zeInitDrivers")) {
    InitDriverTypeDesc desc{kStructureTypeInitDriverTypeDesc, nullptr, kInitDriverTypeGpu};
    ZE_CHECK(init_drivers(&count, &driver, &desc));
  } else {
    ZE_CHECK(zeInit(0));
    ZE_CHECK(zeDriverGet(&count, &driver));
  }
  if (count == 0 || !driver) {
    std::fprintf(stderr, "%s: no Level Zero driver\n", program_name());
    return 1;
  }
  const auto launch_with_arguments =
      DriverExtension<LaunchWithArgumentsFn>(driver, "zeCommandListAppendLaunchKernelWithArguments");
  const auto launch_with_parameters = DriverExtension<LaunchWithParametersFn>(
      driver, "zeCommandListAppendLaunchKernelWithParameters");
  const char* const counter_based_name =
      older_names ? "zeEventCounterBasedCreate" : "zexCounterBasedEventCreate2";
  auto counter_based_create =
      older_names ? LoaderExport<CounterBasedEventCreateFn>(counter_based_name) : nullptr;
  if (!counter_based_create)
    counter_based_create = DriverExtension<CounterBasedEventCreateFn>(driver, counter_based_name);
  if (!launch_with_arguments || !launch_with_parameters || !counter_based_create) {
    std::fprintf(stderr, "%s: the driver hands out no %s\n", program_name(),
                 !launch_with_arguments    ? "zeCommandListAppendLaunchKernelWithArguments"
                 : !launch_with_parameters ? "zeCommandListAppendLaunchKernelWithParameters"
                                           : counter_based_name);
    return 1;
  }
  // Graphs where the driver has them (SYCL graphs fall back to regular lists otherwise).
  const auto begin_graph_capture =
      DriverExtension<BeginGraphCaptureFn>(driver, "zeCommandListBeginGraphCaptureExp");
  const auto end_graph_capture =
      DriverExtension<EndGraphCaptureFn>(driver, "zeCommandListEndGraphCaptureExp");
  const auto instantiate_graph =
      DriverExtension<InstantiateGraphFn>(driver, "zeCommandListInstantiateGraphExp");
  const auto append_graph = DriverExtension<AppendGraphFn>(driver, "zeCommandListAppendGraphExp");
  const auto graph_destroy = DriverExtension<GraphDestroyFn>(driver, "zeGraphDestroyExp");
  const auto executable_graph_destroy =
      DriverExtension<ExecutableGraphDestroyFn>(driver, "zeExecutableGraphDestroyExp");
  const bool graphs = begin_graph_capture && end_graph_capture && instantiate_graph &&
                      append_graph && graph_destroy && executable_graph_destroy;
  const auto append_host_function = DriverExtension<AppendHostFunctionFn>(
      driver, older_names ? "zexCommandListAppendHostFunction" : "zeCommandListAppendHostFunction");
  const auto host_synchronize = LoaderExport<HostSynchronizeFn>("zeCommandListHostSynchronize");
  const auto immediate_append =
      LoaderExport<ImmediateAppendFn>("zeCommandListImmediateAppendCommandListsExp");

  const SetUpCalls set_up{zeDeviceGet, zeContextCreate, zeModuleCreate, zeKernelCreate};
  auto [device, context, module] = OpenSimulatedModule(set_up, driver);
  const Kernel kLaunched[] = {Kernel::kScale, Kernel::kSyclLambda, Kernel::kReduce};
  const std::vector<ze_kernel_handle_t> kernels = MakeKernels(set_up, module, kLaunched);
  ze_kernel_handle_t gemm = MakeKernel(set_up, module, Kernel::kGemm);
  ZE_CHECK(zeKernelSetGroupSize(gemm, 8, 8, 1));
  ze_kernel_handle_t softmax = nullptr;
  if (!wait_in_graph_capture) softmax = MakeKernel(set_up, module, Kernel::kSoftmax);

  // One in-order immediate list on the compute engine (ordinal 0 on the simulated GPU).
  ze_command_queue_desc_t queue_desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0,
                                     kQueueFlagInOrder, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                     ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_list_handle_t immediate = nullptr;
  ZE_CHECK(zeCommandListCreateImmediate(context, device, &queue_desc, &immediate));
  // A regular list replayed on it every iteration.
  ze_command_list_desc_t list_desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
  ze_command_list_handle_t regular = nullptr;
  ZE_CHECK(zeCommandListCreate(context, device, &list_desc, &regular));
  const ze_group_count_t gemm_groups{4, 2, 1};
  ZE_CHECK(zeCommandListAppendLaunchKernel(regular, gemm, &gemm_groups, nullptr, 0, nullptr));
  ZE_CHECK(zeCommandListClose(regular));

  // Counter-based events with kernel timestamps, one per launch slot, as the adapter's event
  // provider hands them out.
  std::vector<ze_event_handle_t> events(std::size(kLaunched));
  for (auto& e : events) {
    CounterBasedEventDesc desc{kStructureTypeCounterBasedEventDesc, nullptr,
                               kCounterBasedImmediate | kCounterBasedNonImmediate |
                                   kCounterBasedHostVisible | kCounterBasedKernelTimestamp,
                               ZE_EVENT_SCOPE_FLAG_HOST, 0};
    ZE_CHECK(counter_based_create(context, device, &desc, &e));
  }
  // The graph, recorded once on the immediate list (its launches run nothing then) and
  // instantiated; its first launch signals a counter-based timestamp event, read after each
  // replay, and each replay signals one of its own.
  ExecutableGraphHandle graph = nullptr;
  ze_event_handle_t graph_event = nullptr, replay_event = nullptr;
  if (graphs) {
    for (auto* e : {&graph_event, &replay_event}) {
      CounterBasedEventDesc desc{kStructureTypeCounterBasedEventDesc, nullptr,
                                 kCounterBasedImmediate | kCounterBasedHostVisible |
                                     (e == &graph_event ? kCounterBasedKernelTimestamp : 0),
                                 ZE_EVENT_SCOPE_FLAG_HOST, 0};
      ZE_CHECK(counter_based_create(context, device, &desc, e));
    }
    ZE_CHECK(begin_graph_capture(immediate, nullptr));
    if (wait_in_graph_capture) {
      ready.SayReadyAndWait();
      softmax = MakeKernel(set_up, module, Kernel::kSoftmax);
    }
    for (size_t g = 0; g < std::size(kGraphGroups); ++g) {
      const GroupSize size{32, 1, 1};
      void* arguments[] = {nullptr};
      ZE_CHECK(launch_with_arguments(immediate, softmax, kGraphGroups[g], size, arguments, nullptr,
                                     g == 0 ? graph_event : nullptr, 0, nullptr));
    }
    GraphHandle recorded = nullptr;
    ZE_CHECK(end_graph_capture(immediate, &recorded, nullptr));
    ZE_CHECK(instantiate_graph(recorded, &graph, nullptr));
    ZE_CHECK(graph_destroy(recorded));  // the executable graph keeps what it runs
  }
  // Without zeCommandListImmediateAppendCommandListsExp the regular list runs on a queue.
  ze_command_queue_handle_t queue = nullptr;
  if (!immediate_append) ZE_CHECK(zeCommandQueueCreate(context, device, &queue_desc, &queue));

  if (!wait_in_graph_capture || !graphs) {
    if (wait_for_signal || wait_in_graph_capture) {
      ready.SayReadyAndWait();
    } else {
      ready.SayReady();
    }
  }
  uint32_t launches = 0, graph_replays = 0, host_function_runs = 0;
  for (uint32_t it = 0; it < options.iterations; ++it) {
    for (size_t k = 0; k < std::size(kLaunched); ++k) {
      const ze_group_count_t groups{16 + it % 4, 1 + static_cast<uint32_t>(k), 1};
      const GroupSize size{64, 1, 1};
      int value = static_cast<int>(it);
      void* arguments[] = {&value};
      ze_event_handle_t wait = k > 0 ? events[k - 1] : nullptr;
      if (k + 1 < std::size(kLaunched)) {
        ZE_CHECK(launch_with_arguments(immediate, kernels[k], groups, size, arguments, nullptr,
                                       events[k], wait ? 1 : 0, wait ? &wait : nullptr));
      } else {
        ZE_CHECK(zeKernelSetGroupSize(kernels[k], size.x, size.y, size.z));
        ZE_CHECK(launch_with_parameters(immediate, kernels[k], &groups, nullptr, events[k],
                                        wait ? 1 : 0, wait ? &wait : nullptr));
      }
      if (log) log->record(kernel_spec(kLaunched[k]).name, groups.groupCountX,
                           groups.groupCountY, groups.groupCountZ);
      ++launches;
    }
    if (immediate_append) {
      ZE_CHECK(immediate_append(immediate, 1, &regular, nullptr, 0, nullptr));
    } else {
      ZE_CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &regular, nullptr));
      ZE_CHECK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    }
    if (log) log->record(kernel_spec(Kernel::kGemm).name, gemm_groups.groupCountX,
                         gemm_groups.groupCountY, gemm_groups.groupCountZ);
    ++launches;
    if (graph) {
      ZE_CHECK(append_graph(immediate, graph, nullptr, replay_event, 0, nullptr));
      for (const ze_group_count_t& g : kGraphGroups) {
        if (log) log->record(kernel_spec(Kernel::kSoftmax).name, g.groupCountX, g.groupCountY,
                             g.groupCountZ);
        ++launches;
      }
      ++graph_replays;
    }
    if (append_host_function)
      ZE_CHECK(append_host_function(immediate, reinterpret_cast<void*>(&CountHostFunctionRun),
                                    &host_function_runs, nullptr, nullptr, 0, nullptr));
    if (host_synchronize) {
      ZE_CHECK(host_synchronize(immediate, UINT64_MAX));
    } else {
      ZE_CHECK(zeEventHostSynchronize(events.back(), UINT64_MAX));
    }
    // Profiling: the kernel timestamps, and a device/host clock pair to put them on the
    // host's time line (as SYCL's event profiling does).
    for (ze_event_handle_t e : events) {
      ze_kernel_timestamp_result_t ts{};
      ZE_CHECK(zeEventQueryKernelTimestamp(e, &ts));
    }
    if (graph) {
      ZE_CHECK(zeEventHostSynchronize(replay_event, UINT64_MAX));
      ze_kernel_timestamp_result_t ts{};
      ZE_CHECK(zeEventQueryKernelTimestamp(graph_event, &ts));
    }
    uint64_t host_ts = 0, device_ts = 0;
    ZE_CHECK(zeDeviceGetGlobalTimestamps(device, &host_ts, &device_ts));
  }
  for (ze_event_handle_t e : events) ZE_CHECK(zeEventDestroy(e));
  if (graph) {
    ZE_CHECK(executable_graph_destroy(graph));
    ZE_CHECK(zeEventDestroy(graph_event));
    ZE_CHECK(zeEventDestroy(replay_event));
  }
  if (queue) ZE_CHECK(zeCommandQueueDestroy(queue));
  ZE_CHECK(zeCommandListDestroy(regular));
  ZE_CHECK(zeCommandListDestroy(immediate));
  for (ze_kernel_handle_t k : kernels) ZE_CHECK(zeKernelDestroy(k));
  ZE_CHECK(zeKernelDestroy(gemm));
  if (softmax) ZE_CHECK(zeKernelDestroy(softmax));
  ZE_CHECK(zeModuleDestroy(module));
  ZE_CHECK(zeContextDestroy(context));
  std::printf("done launches=%u graph_replays=%u host_functions=%u\n", launches, graph_replays,
              host_function_runs);
  return 0;
}

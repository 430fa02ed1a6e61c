// A Level Zero client shaped like SYCL's legacy Level Zero adapter (Unified Runtime's
// "level_zero" adapter, before v2): zeInit, event pools with kernel timestamps, regular
// command lists filled per submission (reset, appended, closed) and executed on a command
// queue with a fence, cooperative launches (zeCommandListAppendLaunchCooperativeKernel), a
// multiple-indirect launch (zeCommandListAppendLaunchMultipleKernelsIndirect), an
// in-order immediate command list, and a batch of regular lists appended to it with
// zeCommandListImmediateAppendCommandListsExp where the tables have it (as the adapter runs
// command buffers), else executed on the queue. With --through-tables every call after
// zeInit goes through the function tables taken from the loader (zeGet*ProcAddrTable: with
// one driver, the driver's own functions), never through the loader's exports; it keeps the
// tables, or with --scattered-pointers only the pointers it calls, in no table's order. With
// --from-the-driver it never initialises the loader: it loads the driver itself and takes the
// tables from the driver's own getters, initialising through its Global table's pfnInit.
// With --own-tracer it registers a tracer of its own through the loader's tracing layer, as
// a profiler in the process does (own_tracer.h), and says how often each of its callbacks ran.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>

#include "kernel_catalog.h"
#include "launch_log.h"
#include "own_tracer.h"
#include "sycl_shape.h"
#include "workload_cli.h"
#include "ze_result.h"

namespace {

using namespace xtrace::workloads;

constexpr const char* kUsage =
    "usage: ze_sycl_legacy [--iterations N] [--launch-log FILE] [--wait-for-signal]\n"
    "                      [--through-tables [--mixed] [--scattered-pointers]]\n"
    "                      [--from-the-driver]\n"
    "                      [--wait-after-lookups]\n"
    "                      [--wait-before-init]\n"
    "\n"
    "Drives Level Zero like SYCL's legacy Level Zero adapter (Unified Runtime's level_zero\n"
    "adapter, before v2): zeInit, event pools with kernel timestamps, a regular command list\n"
    "filled every iteration (reset, appended, closed) and executed on a command queue with a\n"
    "fence, cooperative launches (zeCommandListAppendLaunchCooperativeKernel), an in-order\n"
    "immediate command list, and a regular list batched onto it with\n"
    "zeCommandListImmediateAppendCommandListsExp where the tables have it (else executed on the\n"
    "queue). Each iteration launches 4 kernels: a cooperative and a plain one in the queue's\n"
    "list, a cooperative one on the immediate list and a plain one in the batched list; each\n"
    "signals a timestamp event, read after the waits. The queue's list also holds one\n"
    "zeCommandListAppendLaunchMultipleKernelsIndirect (its kernel count and group counts in\n"
    "memory the device reads), which the launch log does not list.\n"
    "Prints \"ready <pid>\" after set-up, then \"done launches=N\"; with --through-tables\n"
    "first \"tables_at=0x<start>-0x<end>\", where it keeps them.\n"
    "\n"
    "Options:\n"
    "  --iterations N     (default 4, 1..100000)\n"
    "  --launch-log FILE  append one line per launch: <tid>\\t<kernel>\\t<x>,<y>,<z>\n"
    "  --wait-for-signal  after \"ready <pid>\" (every table taken, every object created),\n"
    "                     wait for SIGUSR1 before launching: a tracer attaches meanwhile\n"
    "  --wait-after-lookups  wait for SIGUSR1 (after \"ready <pid>\") as soon as the tables\n"
    "                     are taken, before any object is made (with --wait-for-signal too,\n"
    "                     only here)\n"
    "  --wait-before-init  say \"ready <pid>\" and wait for SIGUSR1 before zeInit: a tracer\n"
    "                     attaches to a process whose driver is not loaded yet\n"
    "  --through-tables   take the function tables from the loader after zeInit\n"
    "                     (zeGetCommandListProcAddrTable, zeGetKernelProcAddrTable, ...) and\n"
    "                     make every later call through them, as a runtime that dispatches\n"
    "                     itself does: with one driver they are the driver's own functions.\n"
    "                     The tables stay in one object on its heap for the process's life\n"
    "  --mixed            with --through-tables, make the set-up calls and every odd\n"
    "                     iteration's through the loader's exports, the even iterations'\n"
    "                     through the tables: one process that calls both ways\n"
    "  --scattered-pointers  with --through-tables, copy the functions it calls out of the\n"
    "                     tables into a struct of its own, in no table's order, and erase\n"
    "                     the tables: nothing in its memory is a copy of one\n"
    "  --from-the-driver  never initialise the loader (no zeInit, no zeInitDrivers): load the\n"
    "                     driver named first in ZE_ENABLE_ALT_DRIVERS itself, take its Global\n"
    "                     table (its own zeGetGlobalProcAddrTable), initialise through the\n"
    "                     table's pfnInit and make every call through the tables its own\n"
    "                     getters hand out (the 1.4 surface's: no\n"
    "                     zeGetCommandListExpProcAddrTable, so the batch is executed on the\n"
    "                     queue). Says first what the loader's\n"
    "                     zeGetGlobalProcAddrTable answers before zeInit (loader_global=0x...)\n"
    "  --own-tracer       after zeInit, register a tracer of its own through the loader's\n"
    "                     tracing layer (zelTracerCreate, an epilogue per call it counts), as\n"
    "                     a profiler in the process does; the layer is ZE_ENABLE_TRACING_LAYER=1\n"
    "                     or, where the loader has it (1.9+), zelEnableTracingLayer. Before\n"
    "                     \"done\" it prints \"own_tracer <call>=<epilogues run> ...\"\n"
    "\n"
    "Examples:\n"
    "  ZE_ENABLE_ALT_DRIVERS=$PWD/build/lib/libxtrace_simze.so build/bin/ze_sycl_legacy\n"
    "  build/bin/ze_sycl_legacy --through-tables --mixed\n"
    "  build/bin/ze_sycl_legacy --through-tables --wait-for-signal &\n"
    "      # then: xtrace attach --pid $!; kill -USR1 $!\n";

constexpr uint32_t kQueueFlagInOrder = 2;  // ZE_COMMAND_QUEUE_FLAG_IN_ORDER (1.5)

// zeCommandListImmediateAppendCommandListsExp (Level Zero 1.9; bookworm's headers end at 1.4),
// and the table it is in: zeGetCommandListExpProcAddrTable's starts pfnCreateCloneExp,
// pfnImmediateAppendCommandListsExp.
using ImmediateAppendFn = ze_result_t (*)(ze_command_list_handle_t, uint32_t,
                                          ze_command_list_handle_t*, ze_event_handle_t, uint32_t,
                                          ze_event_handle_t*);
using GetTableFn = ze_result_t (*)(ze_api_version_t, void*);

// A table as a newer loader fills it: it copies its own, larger, table over the caller's, so
// the caller's storage is made larger than any version's.
template <typename Table>
struct TableStorage {
  alignas(8) unsigned char bytes[4096] = {};
  Table& get() { return *reinterpret_cast<Table*>(bytes); }
};

// Every function the workload calls after zeInit: the loader's exports, or the tables. The
// fields of different tables alternate: pointers copied here out of a table are never next to
// their neighbours in it, so this struct is no copy of a table.
struct Api {
  decltype(&zeCommandListCreate) CommandListCreate;
  decltype(&zeEventCreate) EventCreate;
  decltype(&zeKernelCreate) KernelCreate;
  decltype(&zeFenceCreate) FenceCreate;
  decltype(&zeCommandListCreateImmediate) CommandListCreateImmediate;
  decltype(&zeEventDestroy) EventDestroy;
  decltype(&zeKernelDestroy) KernelDestroy;
  decltype(&zeFenceDestroy) FenceDestroy;
  decltype(&zeCommandListDestroy) CommandListDestroy;
  decltype(&zeEventHostSynchronize) EventHostSynchronize;
  decltype(&zeKernelSetGroupSize) KernelSetGroupSize;
  decltype(&zeFenceHostSynchronize) FenceHostSynchronize;
  decltype(&zeCommandListClose) CommandListClose;
  decltype(&zeEventHostReset) EventHostReset;
  decltype(&zeCommandQueueCreate) CommandQueueCreate;
  decltype(&zeFenceReset) FenceReset;
  decltype(&zeCommandListReset) CommandListReset;
  decltype(&zeEventQueryKernelTimestamp) EventQueryKernelTimestamp;
  decltype(&zeCommandQueueDestroy) CommandQueueDestroy;
  decltype(&zeContextCreate) ContextCreate;
  decltype(&zeCommandListAppendLaunchKernel) CommandListAppendLaunchKernel;
  decltype(&zeEventPoolCreate) EventPoolCreate;
  decltype(&zeCommandQueueExecuteCommandLists) CommandQueueExecuteCommandLists;
  decltype(&zeContextDestroy) ContextDestroy;
  decltype(&zeCommandListAppendLaunchCooperativeKernel) CommandListAppendLaunchCooperativeKernel;
  decltype(&zeEventPoolDestroy) EventPoolDestroy;
  decltype(&zeModuleCreate) ModuleCreate;
  decltype(&zeDriverGet) DriverGet;
  decltype(&zeCommandListAppendLaunchMultipleKernelsIndirect)
      CommandListAppendLaunchMultipleKernelsIndirect;
  decltype(&zeDeviceGet) DeviceGet;
  decltype(&zeModuleDestroy) ModuleDestroy;
  decltype(&zeDeviceGetGlobalTimestamps) DeviceGetGlobalTimestamps;
  ImmediateAppendFn ImmediateAppendCommandListsExp = nullptr;
};

Api LoaderExports() {
  Api a{};
  a.DriverGet = zeDriverGet;
  a.DeviceGet = zeDeviceGet;
  a.DeviceGetGlobalTimestamps = zeDeviceGetGlobalTimestamps;
  a.ContextCreate = zeContextCreate;
  a.ContextDestroy = zeContextDestroy;
  a.ModuleCreate = zeModuleCreate;
  a.ModuleDestroy = zeModuleDestroy;
  a.KernelCreate = zeKernelCreate;
  a.KernelDestroy = zeKernelDestroy;
  a.KernelSetGroupSize = zeKernelSetGroupSize;
  a.CommandQueueCreate = zeCommandQueueCreate;
  a.CommandQueueDestroy = zeCommandQueueDestroy;
  a.CommandQueueExecuteCommandLists = zeCommandQueueExecuteCommandLists;
  a.CommandListCreate = zeCommandListCreate;
  a.CommandListCreateImmediate = zeCommandListCreateImmediate;
  a.CommandListDestroy = zeCommandListDestroy;
  a.CommandListClose = zeCommandListClose;
  a.CommandListReset = zeCommandListReset;
  a.CommandListAppendLaunchKernel = zeCommandListAppendLaunchKernel;
  a.CommandListAppendLaunchCooperativeKernel = zeCommandListAppendLaunchCooperativeKernel;
  a.CommandListAppendLaunchMultipleKernelsIndirect = zeCommandListAppendLaunchMultipleKernelsIndirect;
  a.EventPoolCreate = zeEventPoolCreate;
  a.EventPoolDestroy = zeEventPoolDestroy;
  a.EventCreate = zeEventCreate;
  a.EventDestroy = zeEventDestroy;
  a.EventHostSynchronize = zeEventHostSynchronize;
  a.EventHostReset = zeEventHostReset;
  a.EventQueryKernelTimestamp = zeEventQueryKernelTimestamp;
  a.FenceCreate = zeFenceCreate;
  a.FenceDestroy = zeFenceDestroy;
  a.FenceHostSynchronize = zeFenceHostSynchronize;
  a.FenceReset = zeFenceReset;
  a.ImmediateAppendCommandListsExp = reinterpret_cast<ImmediateAppendFn>(
      dlsym(RTLD_DEFAULT, "zeCommandListImmediateAppendCommandListsExp"));
  return a;
}

// The version to ask the loader's tables for: a runtime passes that of the headers it was built
// against, which match its loader; built against older headers, this one asks for the newest
// version the loader takes (trixie's 1.20.6 takes only its own, 1.12; bookworm's any up to 1.8).
// The table it asks with is erased: it is not one the workload keeps.
ze_api_version_t TableVersion(GetTableFn get_driver_table) {
  auto probe = std::make_unique<TableStorage<ze_driver_dditable_t>>();
  ze_api_version_t found = ZE_API_VERSION_CURRENT;
  for (uint32_t minor = 40; minor > ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT); --minor) {
    const auto v = static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, minor));
    if (get_driver_table(v, probe->bytes) == ZE_RESULT_SUCCESS) {
      found = v;
      break;
    }
  }
  explicit_bzero(probe->bytes, sizeof(probe->bytes));
  return found;
}

// The tables the workload takes from the loader, in one object on its heap.
struct Tables {
  TableStorage<ze_driver_dditable_t> driver;
  TableStorage<ze_device_dditable_t> device;
  TableStorage<ze_context_dditable_t> context;
  TableStorage<ze_module_dditable_t> module;
  TableStorage<ze_kernel_dditable_t> kernel;
  TableStorage<ze_command_queue_dditable_t> queue;
  TableStorage<ze_command_list_dditable_t> list;
  TableStorage<ze_event_pool_dditable_t> pool;
  TableStorage<ze_event_dditable_t> event;
  TableStorage<ze_fence_dditable_t> fence;
  TableStorage<void*> list_exp;  // Level Zero 1.9's, where the loader or driver has it
};

// The getter `name` of `library` (RTLD_DEFAULT: the loader's).
GetTableFn Getter(void* library, const char* name) {
  auto get = reinterpret_cast<GetTableFn>(dlsym(library, name));
  if (!get) {
    std::fprintf(stderr, "ze_sycl_legacy: no %s\n", name);
    std::exit(1);
  }
  return get;
}

// The tables `library` hands out (the loader's after zeInit: RTLD_DEFAULT; or the driver's
// own), taken into `t`, and the functions the workload calls copied out of them, the Level
// Zero 1.9 command list table's too where it has one (a driver newer than the loader xtrace
// runs has it, and the runtime calls it, though that loader knows no such table).
Api TablesOf(void* library, Tables& t) {
  const ze_api_version_t v = TableVersion(Getter(library, "zeGetDriverProcAddrTable"));
  ZE_CHECK(Getter(library, "zeGetDriverProcAddrTable")(v, t.driver.bytes));
  ZE_CHECK(Getter(library, "zeGetDeviceProcAddrTable")(v, t.device.bytes));
  ZE_CHECK(Getter(library, "zeGetContextProcAddrTable")(v, t.context.bytes));
  ZE_CHECK(Getter(library, "zeGetModuleProcAddrTable")(v, t.module.bytes));
  ZE_CHECK(Getter(library, "zeGetKernelProcAddrTable")(v, t.kernel.bytes));
  ZE_CHECK(Getter(library, "zeGetCommandQueueProcAddrTable")(v, t.queue.bytes));
  ZE_CHECK(Getter(library, "zeGetCommandListProcAddrTable")(v, t.list.bytes));
  ZE_CHECK(Getter(library, "zeGetEventPoolProcAddrTable")(v, t.pool.bytes));
  ZE_CHECK(Getter(library, "zeGetEventProcAddrTable")(v, t.event.bytes));
  ZE_CHECK(Getter(library, "zeGetFenceProcAddrTable")(v, t.fence.bytes));
  Api a{};
  a.DriverGet = t.driver.get().pfnGet;
  a.DeviceGet = t.device.get().pfnGet;
  a.DeviceGetGlobalTimestamps = t.device.get().pfnGetGlobalTimestamps;
  a.ContextCreate = t.context.get().pfnCreate;
  a.ContextDestroy = t.context.get().pfnDestroy;
  a.ModuleCreate = t.module.get().pfnCreate;
  a.ModuleDestroy = t.module.get().pfnDestroy;
  a.KernelCreate = t.kernel.get().pfnCreate;
  a.KernelDestroy = t.kernel.get().pfnDestroy;
  a.KernelSetGroupSize = t.kernel.get().pfnSetGroupSize;
  a.CommandQueueCreate = t.queue.get().pfnCreate;
  a.CommandQueueDestroy = t.queue.get().pfnDestroy;
  a.CommandQueueExecuteCommandLists = t.queue.get().pfnExecuteCommandLists;
  a.CommandListCreate = t.list.get().pfnCreate;
  a.CommandListCreateImmediate = t.list.get().pfnCreateImmediate;
  a.CommandListDestroy = t.list.get().pfnDestroy;
  a.CommandListClose = t.list.get().pfnClose;
  a.CommandListReset = t.list.get().pfnReset;
  a.CommandListAppendLaunchKernel = t.list.get().pfnAppendLaunchKernel;
  a.CommandListAppendLaunchCooperativeKernel = t.list.get().pfnAppendLaunchCooperativeKernel;
  a.CommandListAppendLaunchMultipleKernelsIndirect =
      t.list.get().pfnAppendLaunchMultipleKernelsIndirect;
  a.EventPoolCreate = t.pool.get().pfnCreate;
  a.EventPoolDestroy = t.pool.get().pfnDestroy;
  a.EventCreate = t.event.get().pfnCreate;
  a.EventDestroy = t.event.get().pfnDestroy;
  a.EventHostSynchronize = t.event.get().pfnHostSynchronize;
  a.EventHostReset = t.event.get().pfnHostReset;
  a.EventQueryKernelTimestamp = t.event.get().pfnQueryKernelTimestamp;
  a.FenceCreate = t.fence.get().pfnCreate;
  a.FenceDestroy = t.fence.get().pfnDestroy;
  a.FenceHostSynchronize = t.fence.get().pfnHostSynchronize;
  a.FenceReset = t.fence.get().pfnReset;
  auto get = reinterpret_cast<GetTableFn>(dlsym(library, "zeGetCommandListExpProcAddrTable"));
  if (get && v >= ZE_MAKE_VERSION(1, 9) && get(v, t.list_exp.bytes) == ZE_RESULT_SUCCESS) {
    void* fn = nullptr;
    std::memcpy(&fn, t.list_exp.bytes + sizeof(void*), sizeof(fn));
    a.ImmediateAppendCommandListsExp = reinterpret_cast<ImmediateAppendFn>(fn);
  }
  return a;
}

// The driver named first in ZE_ENABLE_ALT_DRIVERS, loaded and initialised by the workload
// itself through its Global table, as a runtime that bypasses the loader does; the loader's
// own Global table is asked for first and its answer said (it has no driver before zeInit).
void* InitialiseTheDriverItself() {
  TableStorage<ze_global_dditable_t> global;
  const ze_result_t loader = zeGetGlobalProcAddrTable(ZE_API_VERSION_CURRENT, &global.get());
  std::printf("loader_global=0x%x\n", static_cast<unsigned>(loader));
  const char* list = std::getenv("ZE_ENABLE_ALT_DRIVERS");
  const std::string path = list ? std::string(list, std::strcspn(list, ",")) : std::string();
  void* driver = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    std::fprintf(stderr,
                 "ze_sycl_legacy: --from-the-driver needs ZE_ENABLE_ALT_DRIVERS=DRIVER (%s)\n",
                 path.empty() ? "unset" : dlerror());
    std::exit(1);
  }
  ZE_CHECK(Getter(driver, "zeGetGlobalProcAddrTable")(ZE_API_VERSION_CURRENT, global.bytes));
  ZE_CHECK(global.get().pfnInit(0));
  explicit_bzero(global.bytes, sizeof(global.bytes));
  return driver;
}

}  // namespace

int main(int argc, char** argv) {
  set_program_name("ze_sycl_legacy");
  bool wait_after_lookups = false, through_tables = false, wait_before_init = false,
       mixed = false, scattered = false, from_the_driver = false, own_tracer = false;
  const SyclShapeOptions options =
      ParseSyclShapeOptions(argc, argv, kUsage,
                            {{"--wait-after-lookups", &wait_after_lookups},
                             {"--through-tables", &through_tables},
                             {"--wait-before-init", &wait_before_init},
                             {"--mixed", &mixed},
                             {"--scattered-pointers", &scattered},
                             {"--from-the-driver", &from_the_driver},
                             {"--own-tracer", &own_tracer}});
  if ((mixed || scattered) && !through_tables) {
    std::fprintf(stderr, "ze_sycl_legacy: --mixed and --scattered-pointers need --through-tables\n%s",
                 kUsage);
    return 2;
  }
  if (own_tracer && from_the_driver) {
    std::fprintf(stderr, "ze_sycl_legacy: --from-the-driver has no loader's tracing layer\n%s",
                 kUsage);
    return 2;
  }
  if (from_the_driver && mixed) {
    std::fprintf(stderr, "ze_sycl_legacy: --from-the-driver has no loader's exports to mix\n%s",
                 kUsage);
    return 2;
  }
  through_tables |= from_the_driver;
  const bool wait_for_signal = options.wait_for_signal && !wait_before_init;
  LaunchLog* const log = options.launch_log.get();
  const ReadyHandshake ready(wait_for_signal || wait_after_lookups || wait_before_init);

  if (wait_before_init) ready.SayReadyAndWait();
  void* const driver_itself = from_the_driver ? InitialiseTheDriverItself() : nullptr;
  if (!from_the_driver) ZE_CHECK(zeInit(0));
  std::optional<OwnTracer> tracer;
  if (own_tracer) tracer.emplace();
  const Api exports = LoaderExports();
  // The tables are kept for the process's life, as a runtime that calls through them keeps
  // them; with --scattered-pointers erased once the functions it calls are copied out.
  std::unique_ptr<Tables> taken;
  Api tables = exports;
  if (through_tables) {
    taken = std::make_unique<Tables>();
    tables = TablesOf(from_the_driver ? driver_itself : RTLD_DEFAULT, *taken);
    if (scattered) {
      explicit_bzero(taken.get(), sizeof(Tables));
      taken.reset();
    }
  }
  if (taken)
    std::printf("tables_at=%#llx-%#llx\n",
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(taken.get())),
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(taken.get() + 1)));
  // What the calls go through; with --mixed, switched every iteration (the set-up's calls go
  // through the exports).
  Api ze = mixed ? exports : tables;
  if (wait_after_lookups) ready.SayReadyAndWait();

  ze_driver_handle_t driver = nullptr;
  uint32_t count = 1;
  ZE_CHECK(ze.DriverGet(&count, &driver));
  const SetUpCalls set_up{ze.DeviceGet, ze.ContextCreate, ze.ModuleCreate, ze.KernelCreate};
  auto [device, context, module] = OpenSimulatedModule(set_up, driver);
  // Launched: a cooperative and a plain one on the queue, a cooperative one on the immediate
  // list, a plain one in the batch.
  const Kernel kLaunched[] = {Kernel::kReduce, Kernel::kScale, Kernel::kSyclLambda, Kernel::kGemm};
  const bool kCooperative[] = {true, false, true, false};
  const std::vector<ze_kernel_handle_t> kernels = MakeKernels(set_up, module, kLaunched);
  for (ze_kernel_handle_t k : kernels) ZE_CHECK(ze.KernelSetGroupSize(k, 32, 1, 1));

  ze_command_queue_desc_t queue_desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0,
                                     ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                     ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ze_command_queue_handle_t queue = nullptr;
  ZE_CHECK(ze.CommandQueueCreate(context, device, &queue_desc, &queue));
  ze_fence_desc_t fence_desc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ze_fence_handle_t fence = nullptr;
  ZE_CHECK(ze.FenceCreate(queue, &fence_desc, &fence));
  ze_command_queue_desc_t immediate_desc = queue_desc;
  immediate_desc.flags = kQueueFlagInOrder;
  immediate_desc.index = 1;
  ze_command_list_handle_t immediate = nullptr;
  ZE_CHECK(ze.CommandListCreateImmediate(context, device, &immediate_desc, &immediate));
  // The adapter's cached regular lists: one for the queue, one for the batch.
  ze_command_list_desc_t list_desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
  ze_command_list_handle_t queued = nullptr, batched = nullptr;
  ZE_CHECK(ze.CommandListCreate(context, device, &list_desc, &queued));
  ZE_CHECK(ze.CommandListCreate(context, device, &list_desc, &batched));
  // One timestamp event per launch, from a pool, as the adapter's event cache hands them out.
  ze_event_pool_desc_t pool_desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                 ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
                                 static_cast<uint32_t>(std::size(kLaunched))};
  ze_event_pool_handle_t pool = nullptr;
  ZE_CHECK(ze.EventPoolCreate(context, &pool_desc, 1, &device, &pool));
  std::vector<ze_event_handle_t> events(std::size(kLaunched));
  for (uint32_t i = 0; i < events.size(); ++i) {
    ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, ZE_EVENT_SCOPE_FLAG_HOST,
                         ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(ze.EventCreate(pool, &desc, &events[i]));
  }

  if (wait_for_signal && !wait_after_lookups) {
    ready.SayReadyAndWait();
  } else if (!wait_after_lookups && !wait_before_init) {
    ready.SayReady();
  }
  // What the multiple-indirect launch reads when it runs: one kernel, one group.
  static const uint32_t kIndirectCount = 1;
  static const ze_group_count_t kIndirectGroups{1, 1, 1};
  uint32_t launches = 0;
  auto launch = [&](ze_command_list_handle_t list, size_t k, uint32_t it,
                    ze_event_handle_t wait) {
    const ze_group_count_t groups{8 + it % 4, 1 + static_cast<uint32_t>(k), 1};
    uint32_t waits = wait ? 1 : 0;
    ze_event_handle_t* wait_list = wait ? &wait : nullptr;
    if (kCooperative[k])
      ZE_CHECK(ze.CommandListAppendLaunchCooperativeKernel(list, kernels[k], &groups, events[k],
                                                           waits, wait_list));
    else
      ZE_CHECK(ze.CommandListAppendLaunchKernel(list, kernels[k], &groups, events[k], waits,
                                                wait_list));
    if (log) log->record(kernel_spec(kLaunched[k]).name, groups.groupCountX, groups.groupCountY,
                         groups.groupCountZ);
    ++launches;
  };
  for (uint32_t it = 0; it < options.iterations; ++it) {
    if (mixed) ze = it % 2 ? exports : tables;
    // The queue's list, filled afresh and executed with a fence.
    ZE_CHECK(ze.CommandListReset(queued));
    launch(queued, 0, it, nullptr);
    launch(queued, 1, it, events[0]);
    ze_kernel_handle_t indirect_kernels[] = {kernels[1]};
    ZE_CHECK(ze.CommandListAppendLaunchMultipleKernelsIndirect(
        queued, 1, indirect_kernels, &kIndirectCount, &kIndirectGroups, nullptr, 0, nullptr));
    ZE_CHECK(ze.CommandListClose(queued));
    ZE_CHECK(ze.CommandQueueExecuteCommandLists(queue, 1, &queued, fence));
    // A cooperative launch on the immediate list.
    launch(immediate, 2, it, nullptr);
    // The batch: a regular list appended to the immediate list, or executed on the queue.
    ZE_CHECK(ze.CommandListReset(batched));
    launch(batched, 3, it, nullptr);
    ZE_CHECK(ze.CommandListClose(batched));
    ZE_CHECK(ze.FenceHostSynchronize(fence, UINT64_MAX));
    ZE_CHECK(ze.FenceReset(fence));
    if (ze.ImmediateAppendCommandListsExp) {
      ZE_CHECK(ze.ImmediateAppendCommandListsExp(immediate, 1, &batched, nullptr, 0, nullptr));
    } else {
      ZE_CHECK(ze.CommandQueueExecuteCommandLists(queue, 1, &batched, fence));
      ZE_CHECK(ze.FenceHostSynchronize(fence, UINT64_MAX));
      ZE_CHECK(ze.FenceReset(fence));
    }
    for (ze_event_handle_t e : events) ZE_CHECK(ze.EventHostSynchronize(e, UINT64_MAX));
    for (ze_event_handle_t e : events) {
      ze_kernel_timestamp_result_t ts{};
      ZE_CHECK(ze.EventQueryKernelTimestamp(e, &ts));
    }
    for (ze_event_handle_t e : events) ZE_CHECK(ze.EventHostReset(e));
    uint64_t host_ts = 0, device_ts = 0;
    ZE_CHECK(ze.DeviceGetGlobalTimestamps(device, &host_ts, &device_ts));
  }
  for (ze_event_handle_t e : events) ZE_CHECK(ze.EventDestroy(e));
  ZE_CHECK(ze.EventPoolDestroy(pool));
  ZE_CHECK(ze.CommandListDestroy(batched));
  ZE_CHECK(ze.CommandListDestroy(queued));
  ZE_CHECK(ze.CommandListDestroy(immediate));
  ZE_CHECK(ze.FenceDestroy(fence));
  ZE_CHECK(ze.CommandQueueDestroy(queue));
  for (ze_kernel_handle_t k : kernels) ZE_CHECK(ze.KernelDestroy(k));
  ZE_CHECK(ze.ModuleDestroy(module));
  ZE_CHECK(ze.ContextDestroy(context));
  if (tracer) std::printf("%s\n", tracer->Said().c_str());
  std::printf("done launches=%u immediate_append=%s tables=%s\n", launches,
              ze.ImmediateAppendCommandListsExp ? "yes" : "no", through_tables ? "yes" : "no");
  return 0;
}

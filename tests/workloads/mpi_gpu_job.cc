// An MPI job on the simulated GPU, for the cluster tests: every rank launches the same two
// kernels per step on its own device, then all ranks meet at a barrier, as a data-parallel
// training step does. One rank's kernels run longer on purpose (--slow-rank), so that the
// others wait for it at every barrier: the straggler a trace of the whole job must name.
//
//   mpirun -n 4 build/bin/mpi_gpu_job --duration 20 --slow-rank 2 [--recreate-kernels]
//   srun -n 4 --mpi=pmix build/bin/mpi_gpu_job --duration 20 --slow-rank 2
//
// Prints "ready rank R of N pid P parent Q" once its device is set up, and "done rank R steps S" at
// the end. The kernels are named by the simulated module this program builds: "step_forward"
// (1 ms, --slow-factor times longer on the slow rank) and "step_allreduce_pack" (0.2 ms).
// --recreate-kernels creates them again at every step, as a runtime that JIT-compiles per
// step does: a capture that starts mid-run then sees them created and knows their names
// (kernels created before a capture began are reported by their handles).
//
// Each step is two ITT tasks in domain "mpi_gpu_job", as a training loop's annotations are:
// "compute" (the step's submission and the wait for its kernels: the slow rank's is the long
// one) and "broadcast" (rank 0's word on whether to go on). --host-us sleeps that long per
// step outside both, as a loop that reads its next batch does: a rank then spends a share of
// its time in "compute" that grows with its kernels' length, so the slow rank's total there is
// the largest whatever number of steps each rank made. (Without it every rank, never waiting
// for the others, is inside "compute" nearly all the time.) They are recorded when
// INTEL_LIBITTNOTIFY64 names a collector (libxtrace_itt.so) from the start, as a real ITT
// client's are; without one they cost two tests each.
#include <level_zero/ze_api.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "itt_client.h"
#include "ze_handles.h"
#include "ze_result.h"

namespace {

using namespace xtrace::workloads;
namespace itt = xtrace::itt_client;

struct Options {
  double duration_s = 10;
  int slow_rank = -1;
  std::uint64_t slow_factor = 4;
  std::uint64_t kernel_us = 1000;
  std::uint64_t host_us = 0;
  bool recreate_kernels = false;
};

[[noreturn]] void Usage(const char* message) {
  std::fprintf(stderr,
               "mpi_gpu_job: %s\nusage: mpi_gpu_job [--duration SECONDS] [--slow-rank R] "
               "[--slow-factor F] [--kernel-us U] [--host-us U] [--recreate-kernels]\n",
               message);
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--recreate-kernels") {
      o.recreate_kernels = true;
      continue;
    }
    if (i + 1 >= argc) Usage("every option but --recreate-kernels takes a value");
    const char* value = argv[++i];
    char* end = nullptr;
    const double number = std::strtod(value, &end);
    if (!end || *end || number < 0) Usage("not a non-negative number");
    if (arg == "--duration") o.duration_s = number;
    else if (arg == "--slow-rank") o.slow_rank = static_cast<int>(number);
    else if (arg == "--slow-factor") o.slow_factor = static_cast<std::uint64_t>(number);
    else if (arg == "--kernel-us") o.kernel_us = static_cast<std::uint64_t>(number);
    else if (arg == "--host-us") o.host_us = static_cast<std::uint64_t>(number);
    else Usage("unknown option");
  }
  return o;
}

ze_device_handle_t FirstGpu(ze_driver_handle_t* driver_out) {
  std::uint32_t drivers = 0;
  ZE_CHECK(zeDriverGet(&drivers, nullptr));
  std::vector<ze_driver_handle_t> driver_list(drivers);
  ZE_CHECK(zeDriverGet(&drivers, driver_list.data()));
  for (ze_driver_handle_t driver : driver_list) {
    std::uint32_t count = 0;
    ZE_CHECK(zeDeviceGet(driver, &count, nullptr));
    std::vector<ze_device_handle_t> devices(count);
    ZE_CHECK(zeDeviceGet(driver, &count, devices.data()));
    if (!devices.empty()) {
      *driver_out = driver;
      return devices[0];
    }
  }
  std::fprintf(stderr, "mpi_gpu_job: no Level Zero device (set ZE_ENABLE_ALT_DRIVERS)\n");
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Options o = Parse(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  const std::string& no_collector = itt::Initialize();
  if (!no_collector.empty() && std::getenv("INTEL_LIBITTNOTIFY64"))
    std::fprintf(stderr, "mpi_gpu_job: no ITT collector (%s): its tasks are skipped\n",
                 no_collector.c_str());
  itt::Domain* domain = itt::DomainCreate("mpi_gpu_job");
  itt::StringHandle* compute_task = itt::StringHandleCreate("compute");
  itt::StringHandle* broadcast_task = itt::StringHandleCreate("broadcast");

  ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = FirstGpu(&driver);
  ZeContext context;
  ze_context_desc_t context_desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  ZE_CHECK(zeContextCreate(driver, &context_desc, context.out()));

  const std::uint64_t forward_ns =
      o.kernel_us * 1000 * (rank == o.slow_rank ? o.slow_factor : 1);
  const std::string module_text = "XTRACE-SIMGPU-MODULE 1\nkernel " + std::to_string(forward_ns) +
                                  " step_forward\nkernel 200000 step_allreduce_pack\n";
  ze_module_desc_t module_desc{ZE_STRUCTURE_TYPE_MODULE_DESC,
                               nullptr,
                               ZE_MODULE_FORMAT_NATIVE,
                               module_text.size(),
                               reinterpret_cast<const std::uint8_t*>(module_text.data()),
                               "",
                               nullptr};
  ZeModule module;
  ZE_CHECK(zeModuleCreate(context.get(), device, &module_desc, module.out(), nullptr));
  ZeKernel forward, pack;
  ze_kernel_desc_t forward_desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "step_forward"};
  ze_kernel_desc_t pack_desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "step_allreduce_pack"};
  ZE_CHECK(zeKernelCreate(module.get(), &forward_desc, forward.out()));
  ZE_CHECK(zeKernelCreate(module.get(), &pack_desc, pack.out()));

  ze_command_queue_desc_t queue_desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0,
                                     ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                     ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ZeQueue queue;
  ZE_CHECK(zeCommandQueueCreate(context.get(), device, &queue_desc, queue.out()));
  ze_command_list_desc_t list_desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
  ZeList list;
  ZE_CHECK(zeCommandListCreate(context.get(), device, &list_desc, list.out()));
  ze_fence_desc_t fence_desc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  ZeFence fence;
  ZE_CHECK(zeFenceCreate(queue.get(), &fence_desc, fence.out()));
  ze_event_pool_desc_t pool_desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                 ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 2};
  ZeEventPool pool;
  ZE_CHECK(zeEventPoolCreate(context.get(), &pool_desc, 1, &device, pool.out()));
  ZeEvent done[2];
  for (std::uint32_t i = 0; i < 2; ++i) {
    ze_event_desc_t event_desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, ZE_EVENT_SCOPE_FLAG_HOST,
                               ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(pool.get(), &event_desc, done[i].out()));
  }

  std::printf("ready rank %d of %d pid %d parent %d\n", rank, size, static_cast<int>(getpid()),
              static_cast<int>(getppid()));
  std::fflush(stdout);
  // Every rank runs the same number of steps: rank 0 decides, from the clock, when to stop.
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.duration_s);
  std::uint64_t steps = 0;
  for (int go = 1; go;) {
    const ze_group_count_t groups{64, 1, 1};
    if (o.recreate_kernels) {  // out() destroys the previous kernel first
      ZE_CHECK(zeKernelCreate(module.get(), &forward_desc, forward.out()));
      ZE_CHECK(zeKernelCreate(module.get(), &pack_desc, pack.out()));
    }
    ZE_CHECK(zeCommandListReset(list.get()));
    ZE_CHECK(zeCommandListAppendLaunchKernel(list.get(), forward.get(), &groups, done[0].get(), 0, nullptr));
    ZE_CHECK(zeCommandListAppendLaunchKernel(list.get(), pack.get(), &groups, done[1].get(), 0, nullptr));
    ZE_CHECK(zeCommandListClose(list.get()));
    ze_command_list_handle_t lists[] = {list.get()};
    if (domain) itt::TaskBegin(domain, compute_task);
    ZE_CHECK(zeCommandQueueExecuteCommandLists(queue.get(), 1, lists, fence.get()));
    ZE_CHECK(zeFenceHostSynchronize(fence.get(), UINT64_MAX));
    if (domain) itt::TaskEnd(domain);
    ZE_CHECK(zeFenceReset(fence.get()));
    // Read each kernel's timestamps, as a profiling runtime does: what gives its device time.
    for (ZeEvent& e : done) {
      ze_kernel_timestamp_result_t ts{};
      ZE_CHECK(zeEventQueryKernelTimestamp(e.get(), &ts));
      ZE_CHECK(zeEventHostReset(e.get()));
    }
    if (o.host_us) usleep(static_cast<useconds_t>(o.host_us));
    ++steps;
    go = rank != 0 || std::chrono::steady_clock::now() < end;
    if (domain) itt::TaskBegin(domain, broadcast_task);
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (domain) itt::TaskEnd(domain);
  }
  std::printf("done rank %d steps %llu\n", rank, static_cast<unsigned long long>(steps));
  std::fflush(stdout);
  MPI_Finalize();
  return 0;
}

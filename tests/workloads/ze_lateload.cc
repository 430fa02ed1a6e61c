// ze_lateload: a process that loads Level Zero only when asked (dlopen on SIGUSR1), for tests
// of a tracer attached before libze_loader.so.1 is in the process.
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "control_signals.h"
#include "kernel_catalog.h"
#include "launch_log.h"
#include "workload_cli.h"
#include "ze_result.h"

namespace xtrace::workloads {
namespace {

constexpr std::uint64_t kSyncTimeoutNs = 30'000'000'000ull;

constexpr const char kHelp[] = R"(usage: ze_lateload [options]

Prints "ready <pid>" without Level Zero in the process. On the first SIGUSR1 it dlopens
libze_loader.so.1, sets up (zeInit, device, context, the embedded simulated-GPU module, two
kernels, an immediate command list, a kernel-timestamp event) and prints "loaded <pid>";
then it runs a round: N launches on the immediate command list, alternating xt_scale_f32
{256,1,1} and the xt::softmax<...> kernel {128,1,1} (see ze_workload --list-kernels), each
waited for on the host, and prints "round <k> launches=<N>". Every further SIGUSR1 runs
another round. SIGTERM or SIGINT prints "exit rounds=<r> launches=<total>" and exits 0.

Options:
  --launches N        launches per round (default 4, 1..1000000)
  --pause-after-load  the first SIGUSR1 only loads and sets up; rounds start with the next
  --launch-log FILE   as ze_workload: "<tid>\t<kernel name>\t<x>,<y>,<z>" per launch
  --help              this text
Exit status: 0 on success, 1 on a failing dlopen/Level Zero call, 2 on a usage error.

Example:
  ZE_ENABLE_ALT_DRIVERS=$PWD/build/lib/libxtrace_simze.so build/bin/ze_lateload &
  kill -USR1 <pid>; kill -TERM <pid>
)";

struct Options {
  std::uint64_t launches = 4;
  bool pause_after_load = false;
  std::string launch_log;
};

// The Level Zero entry points used, resolved from the dlopened loader. Declared from the
// API header's own prototypes so a signature mismatch is a compile error.
struct ZeApi {
#define XTRACE_ZE_FUNCTIONS(X)                                                             \
  X(zeInit) X(zeDriverGet) X(zeDeviceGet) X(zeDeviceGetProperties) X(zeContextCreate)      \
  X(zeContextDestroy) X(zeModuleCreate) X(zeModuleDestroy) X(zeKernelCreate)               \
  X(zeKernelDestroy) X(zeKernelSetGroupSize) X(zeCommandListCreateImmediate)               \
  X(zeCommandListDestroy) X(zeCommandListAppendLaunchKernel) X(zeEventPoolCreate)          \
  X(zeEventPoolDestroy) X(zeEventCreate) X(zeEventDestroy) X(zeEventHostSynchronize)       \
  X(zeEventHostReset) X(zeEventQueryKernelTimestamp)
#define XTRACE_ZE_MEMBER(name) decltype(&::name) name = nullptr;
  XTRACE_ZE_FUNCTIONS(XTRACE_ZE_MEMBER)
#undef XTRACE_ZE_MEMBER

  void load() {
    void* lib = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      std::fprintf(stderr, "%s: dlopen(libze_loader.so.1) failed: %s\n", program_name(),
                   dlerror());
      std::exit(1);
    }
#define XTRACE_ZE_RESOLVE(name) resolve(lib, #name, name);
    XTRACE_ZE_FUNCTIONS(XTRACE_ZE_RESOLVE)
#undef XTRACE_ZE_RESOLVE
    // The library stays loaded for the life of the process, as a runtime's would.
  }

 private:
  template <typename F>
  static void resolve(void* lib, const char* name, F& out) {
    void* sym = dlsym(lib, name);
    if (!sym) {
      std::fprintf(stderr, "%s: dlsym(%s) failed: %s\n", program_name(), name, dlerror());
      std::exit(1);
    }
    out = reinterpret_cast<F>(sym);
  }
};

// Everything created after the load; destroyed in reverse order on exit.
class LateGpu {
 public:
  explicit LateGpu(const ZeApi& api) : ze_(api) {
    ZE_CHECK(ze_.zeInit(ZE_INIT_FLAG_GPU_ONLY));
    std::uint32_t count = 1;
    ZE_CHECK(ze_.zeDriverGet(&count, &driver_));
    if (count == 0) no_device();
    pick_device();
    ze_context_desc_t context_desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ZE_CHECK(ze_.zeContextCreate(driver_, &context_desc, &context_));
    std::string text = simulated_module_text();
    ze_module_desc_t module_desc{ZE_STRUCTURE_TYPE_MODULE_DESC,
                                 nullptr,
                                 ZE_MODULE_FORMAT_NATIVE,
                                 text.size(),
                                 reinterpret_cast<const std::uint8_t*>(text.data()),
                                 "",
                                 nullptr};
    ZE_CHECK(ze_.zeModuleCreate(context_, device_, &module_desc, &module_, nullptr));
    for (Kernel id : {Kernel::kScale, Kernel::kSoftmax}) {
      ze_kernel_desc_t desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0,
                            kernel_spec(id).name.c_str()};
      ze_kernel_handle_t k = nullptr;
      ZE_CHECK(ze_.zeKernelCreate(module_, &desc, &k));
      kernels_.push_back({id, k});
      ZE_CHECK(ze_.zeKernelSetGroupSize(k, 64, 1, 1));
    }
    ze_command_queue_desc_t queue_desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                       nullptr,
                                       0,
                                       0,
                                       0,
                                       ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                       ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ZE_CHECK(ze_.zeCommandListCreateImmediate(context_, device_, &queue_desc, &list_));
    ze_event_pool_desc_t pool_desc{
        ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
        ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 1};
    ZE_CHECK(ze_.zeEventPoolCreate(context_, &pool_desc, 1, &device_, &pool_));
    ze_event_desc_t event_desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                               ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(ze_.zeEventCreate(pool_, &event_desc, &event_));
  }

  ~LateGpu() {
    ZE_CHECK(ze_.zeEventDestroy(event_));
    ZE_CHECK(ze_.zeEventPoolDestroy(pool_));
    ZE_CHECK(ze_.zeCommandListDestroy(list_));
    for (auto& [id, k] : kernels_) ZE_CHECK(ze_.zeKernelDestroy(k));
    ZE_CHECK(ze_.zeModuleDestroy(module_));
    ZE_CHECK(ze_.zeContextDestroy(context_));
  }

  LateGpu(const LateGpu&) = delete;
  LateGpu& operator=(const LateGpu&) = delete;

  std::uint64_t run_round(std::uint64_t launches, LaunchLog* log) {
    for (std::uint64_t i = 0; i < launches; ++i) {
      auto [id, kernel] = kernels_[i % kernels_.size()];
      ze_group_count_t groups = id == Kernel::kScale ? ze_group_count_t{256, 1, 1}
                                                     : ze_group_count_t{128, 1, 1};
      ZE_CHECK(ze_.zeCommandListAppendLaunchKernel(list_, kernel, &groups, event_, 0, nullptr));
      if (log)
        log->record(kernel_spec(id).name, groups.groupCountX, groups.groupCountY,
                    groups.groupCountZ);
      ZE_CHECK(ze_.zeEventHostSynchronize(event_, kSyncTimeoutNs));
      ze_kernel_timestamp_result_t ts{};
      ZE_CHECK(ze_.zeEventQueryKernelTimestamp(event_, &ts));
      ZE_CHECK(ze_.zeEventHostReset(event_));
    }
    return launches;
  }

 private:
  void pick_device() {
    std::uint32_t count = 0;
    ZE_CHECK(ze_.zeDeviceGet(driver_, &count, nullptr));
    std::vector<ze_device_handle_t> devices(count);
    ZE_CHECK(ze_.zeDeviceGet(driver_, &count, devices.data()));
    for (ze_device_handle_t d : devices) {
      ze_device_properties_t props{};
      props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      ZE_CHECK(ze_.zeDeviceGetProperties(d, &props));
      if (props.type == ZE_DEVICE_TYPE_GPU) {
        device_ = d;
        return;
      }
    }
    no_device();
  }

  [[noreturn]] static void no_device() {
    std::fprintf(stderr, "%s: no Level Zero GPU device found\n", program_name());
    std::exit(1);
  }

  const ZeApi& ze_;
  ze_driver_handle_t driver_ = nullptr;
  ze_device_handle_t device_ = nullptr;
  ze_context_handle_t context_ = nullptr;
  ze_module_handle_t module_ = nullptr;
  std::vector<std::pair<Kernel, ze_kernel_handle_t>> kernels_;
  ze_command_list_handle_t list_ = nullptr;
  ze_event_pool_handle_t pool_ = nullptr;
  ze_event_handle_t event_ = nullptr;
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    } else if (arg == "--launches") {
      o.launches = parse_count(arg, option_value(argc, argv, i), 1, 1'000'000);
    } else if (arg == "--pause-after-load") {
      o.pause_after_load = true;
    } else if (arg == "--launch-log") {
      o.launch_log = option_value(argc, argv, i);
      if (o.launch_log.empty()) usage_error("--launch-log: empty file name");
    } else {
      usage_error("unknown argument \"" + std::string(arg) + "\"");
    }
  }
  return o;
}

void print_line(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace
}  // namespace xtrace::workloads

int main(int argc, char** argv) {
  using namespace xtrace::workloads;
  block_control_signals();
  set_program_name(argv[0]);
  Options options = parse_options(argc, argv);
  std::unique_ptr<LaunchLog> log;
  if (!options.launch_log.empty()) log = std::make_unique<LaunchLog>(options.launch_log);

  const std::string pid = std::to_string(::getpid());
  print_line("ready " + pid);
  ZeApi api;
  std::unique_ptr<LateGpu> gpu;
  std::uint64_t rounds = 0, total = 0;
  while (wait_control_signal(std::nullopt) == ControlSignal::kRound) {
    if (!gpu) {
      api.load();
      gpu = std::make_unique<LateGpu>(api);
      print_line("loaded " + pid);
      if (options.pause_after_load) continue;
    }
    std::uint64_t n = gpu->run_round(options.launches, log.get());
    ++rounds;
    total += n;
    print_line("round " + std::to_string(rounds) + " launches=" + std::to_string(n));
  }
  gpu.reset();
  print_line("exit rounds=" + std::to_string(rounds) + " launches=" + std::to_string(total));
  return 0;
}

// ze_workload: a multi-threaded program that drives Level Zero through the real loader the
// way SYCL/PyTorch runtimes do, so tests can trace it and compare against its launch log.
// Longer than our ~600-line rule on purpose: one program with every mode the capture tests
// need (threads, list kinds, events, copies, signal-driven rounds, re-created kernels), so that
// all of them compare against one launch-log format.
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "control_signals.h"
#include "kernel_catalog.h"
#include "launch_log.h"
#include "workload_cli.h"
#include "ze_handles.h"
#include "ze_result.h"

namespace xtrace::workloads {
namespace {

// Kernel launches per iteration (see the plan in kHelp and Worker::run_iteration):
// 3 on the regular command list, 2 on the immediate command list.
constexpr std::uint64_t kLaunchesPerIteration = 5;

// Waits on the device are bounded so a broken driver fails a test with a message instead
// of hanging it; generous because a tracer under test may slow every call down.
constexpr std::uint64_t kSyncTimeoutNs = 30'000'000'000ull;

constexpr std::size_t kBufferBytes = 64 * 1024;

constexpr const char kHelp[] = R"(usage: ze_workload [options]

Drives Level Zero through the real loader (libze_loader.so.1) like a SYCL/PyTorch runtime:
zeInit, driver/device discovery, a context, one module, kernels created per thread, a
command queue with regular command lists, an immediate command list, a kernel-timestamp
event pool, device/host/shared memory, copies, fills, barriers, fences and
zeDeviceGetGlobalTimestamps. Each worker thread (named xt-worker-<t>, t from 0) has its own
kernels, queue and command lists; all launches happen on worker threads, none on the main
thread, which only handles signals, clock samples and output.

Each iteration of each thread launches exactly 5 kernels:
  regular list (executed on the thread's queue with a fence):
    fill, copy host->device, barrier,
    xt_scale_f32 {256,1,1}, barrier,
    the ~1000-character xt::gemm<...> kernel {16 + i%4, 8, 1} (signals a timestamp event),
    barrier, xt::softmax<...> {128,1,1}
  immediate list:
    the SYCL lambda kernel {64,1,1} (signals an event),
    xt::native::reduce_kernel<...> {32, 1 + i%2, 1} (waits on it, signals an event),
    copy device->shared (waits on that), then the host waits and reads kernel timestamps.
  (i is the iteration index within the round, from 0.)
So one round launches  threads x iterations x 5  kernels.

Options:
  --iterations N       iterations per thread per round (default 4, 1..1000000)
  --threads T          worker threads (default 1, 1..256)
  --rounds R           rounds to run, then exit (default 1, 0..1000000)
  --warmup-rounds W    rounds run before "ready"; never written to the launch log (default 0)
  --wait-for-signal    after set-up print "ready <pid>", then run one round per SIGUSR1
  --duration SECONDS   after "ready", run rounds back to back until SECONDS have passed
  --sleep-us U         sleep U microseconds after every iteration (default 0, 0..10000000)
  --launch-log FILE    append "<tid>\t<kernel name>\t<x>,<y>,<z>" for every kernel launch
                       of a counted round, written after zeCommandListAppendLaunchKernel
                       returns (warm-up launches are not logged)
  --module FILE        create the module from FILE (IL_SPIRV if it starts with the SPIR-V
                       magic number, NATIVE otherwise) instead of the embedded simulated-GPU
                       module; kernels are still created by the names of --list-kernels
  --recreate-kernels   destroy and re-create every kernel at the start of each round, as a
                       runtime that compiles a new graph does (a tracer attached between
                       rounds then sees the kernels' creation and can name them)
  --list-kernels       print the kernel names, one per line, and exit (the last one,
                       xt_never_launched, is created by every thread but never launched)
  --end HOW            how the process ends after its last round (default exit): exit
                       (returns from main, destroying what it created), kill (SIGKILLs
                       itself, nothing destroyed), exec (replaces itself with /bin/true),
                       threads (its launching threads end first, then the process lives
                       300 ms more before it exits)
  --verbose            describe the device, clocks and kernel timestamps on stderr
  --help               this text

Output on stdout, one line each, flushed:
  ready <pid>                  after all set-up and warm-up (every mode)
  round <k> launches=<n>       after round k (from 1) has completed on the device
  exit rounds=<r> launches=<total>   on a clean exit (warm-up rounds not counted)
SIGTERM or SIGINT ends the program cleanly after the current round, in every mode.
SIGUSR1 sent while a round runs starts one more round after it (signals do not queue:
wait for the "round" line before sending the next one).
Exit status: 0 on success, 1 on a failing Level Zero call (named on stderr with its
ze_result_t), 2 on a usage error.

Examples:
  ZE_ENABLE_ALT_DRIVERS=$PWD/build/lib/libxtrace_simze.so \
    build/bin/ze_workload --iterations 10 --threads 2
  build/bin/ze_workload --wait-for-signal --warmup-rounds 1 --launch-log /tmp/launches.tsv &
  kill -USR1 <pid>; kill -TERM <pid>
  build/bin/ze_workload --duration 30 --threads 4 --sleep-us 500
)";

struct Options {
  std::uint64_t iterations = 4;
  std::uint64_t threads = 1;
  std::uint64_t rounds = 1;
  bool rounds_given = false;
  std::uint64_t warmup_rounds = 0;
  bool wait_for_signal = false;
  std::optional<double> duration_s;
  std::uint64_t sleep_us = 0;
  bool recreate_kernels = false;
  std::string launch_log;
  std::string module_path;
  bool list_kernels = false;
  bool verbose = false;
  std::string end = "exit";
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    } else if (arg == "--iterations") {
      o.iterations = parse_count(arg, option_value(argc, argv, i), 1, 1'000'000);
    } else if (arg == "--threads") {
      o.threads = parse_count(arg, option_value(argc, argv, i), 1, 256);
    } else if (arg == "--rounds") {
      o.rounds = parse_count(arg, option_value(argc, argv, i), 0, 1'000'000);
      o.rounds_given = true;
    } else if (arg == "--warmup-rounds") {
      o.warmup_rounds = parse_count(arg, option_value(argc, argv, i), 0, 1'000'000);
    } else if (arg == "--wait-for-signal") {
      o.wait_for_signal = true;
    } else if (arg == "--duration") {
      o.duration_s = parse_seconds(arg, option_value(argc, argv, i), 7 * 24 * 3600.0);
    } else if (arg == "--sleep-us") {
      o.sleep_us = parse_count(arg, option_value(argc, argv, i), 0, 10'000'000);
    } else if (arg == "--launch-log") {
      o.launch_log = option_value(argc, argv, i);
      if (o.launch_log.empty()) usage_error("--launch-log: empty file name");
    } else if (arg == "--module") {
      o.module_path = option_value(argc, argv, i);
      if (o.module_path.empty()) usage_error("--module: empty file name");
    } else if (arg == "--recreate-kernels") {
      o.recreate_kernels = true;
    } else if (arg == "--list-kernels") {
      o.list_kernels = true;
    } else if (arg == "--end") {
      o.end = option_value(argc, argv, i);
      if (o.end != "exit" && o.end != "kill" && o.end != "exec" && o.end != "threads")
        usage_error("--end: unknown way to end \"" + o.end + "\" (exit, kill, exec, threads)");
    } else if (arg == "--verbose") {
      o.verbose = true;
    } else {
      usage_error("unknown argument \"" + std::string(arg) + "\"");
    }
  }
  // The three ways of deciding when rounds run exclude each other.
  if (o.wait_for_signal && o.duration_s)
    usage_error("--wait-for-signal and --duration cannot be combined");
  if (o.rounds_given && (o.wait_for_signal || o.duration_s))
    usage_error("--rounds cannot be combined with --wait-for-signal or --duration");
  return o;
}

std::vector<char> read_module_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) usage_error("--module: cannot open \"" + path + "\": " + std::strerror(errno));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) usage_error("--module: cannot read \"" + path + "\"");
  if (bytes.empty()) usage_error("--module: \"" + path + "\" is empty");
  return bytes;
}

bool is_spirv(const std::vector<char>& bytes) {
  constexpr std::uint32_t kSpirvMagic = 0x07230203;
  std::uint32_t word = 0;
  if (bytes.size() < sizeof word) return false;
  std::memcpy(&word, bytes.data(), sizeof word);
  return word == kSpirvMagic;
}

// Process-wide state, as a runtime's platform/context layer holds it: the device, one
// context and one module shared by every thread.
class Gpu {
 public:
  explicit Gpu(const Options& options) {
    ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    pick_device();
    ze_context_desc_t context_desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ZE_CHECK(zeContextCreate(driver_, &context_desc, context_.out()));
    build_module(options);
    if (options.verbose) describe();
  }

  ze_context_handle_t context() const { return context_.get(); }
  ze_device_handle_t device() const { return device_; }
  ze_module_handle_t module() const { return module_.get(); }
  std::uint32_t compute_ordinal() const { return compute_ordinal_; }
  const ze_device_properties_t& properties() const { return properties_; }

  // A (host, device) clock pair, as runtimes sample to map kernel timestamps to host time.
  std::pair<std::uint64_t, std::uint64_t> global_timestamps() const {
    std::uint64_t host = 0, device = 0;
    ZE_CHECK(zeDeviceGetGlobalTimestamps(device_, &host, &device));
    return {host, device};
  }

 private:
  void pick_device() {
    std::uint32_t driver_count = 0;
    ZE_CHECK(zeDriverGet(&driver_count, nullptr));
    std::vector<ze_driver_handle_t> drivers(driver_count);
    ZE_CHECK(zeDriverGet(&driver_count, drivers.data()));
    // First GPU of the first driver that has one: what a runtime's default selector does.
    for (ze_driver_handle_t driver : drivers) {
      std::uint32_t device_count = 0;
      ZE_CHECK(zeDeviceGet(driver, &device_count, nullptr));
      std::vector<ze_device_handle_t> devices(device_count);
      ZE_CHECK(zeDeviceGet(driver, &device_count, devices.data()));
      for (ze_device_handle_t device : devices) {
        ze_device_properties_t props{};
        props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        ZE_CHECK(zeDeviceGetProperties(device, &props));
        if (props.type == ZE_DEVICE_TYPE_GPU) {
          driver_ = driver;
          device_ = device;
          properties_ = props;
          compute_ordinal_ = find_compute_ordinal(device);
          return;
        }
      }
    }
    std::fprintf(stderr, "%s: no Level Zero GPU device found (%u driver(s))\n", program_name(),
                 driver_count);
    std::exit(1);
  }

  static std::uint32_t find_compute_ordinal(ze_device_handle_t device) {
    std::uint32_t count = 0;
    ZE_CHECK(zeDeviceGetCommandQueueGroupProperties(device, &count, nullptr));
    std::vector<ze_command_queue_group_properties_t> groups(count);
    for (auto& g : groups) g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    ZE_CHECK(zeDeviceGetCommandQueueGroupProperties(device, &count, groups.data()));
    for (std::uint32_t i = 0; i < count; ++i)
      if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) return i;
    std::fprintf(stderr, "%s: the device has no compute command queue group (%u group(s))\n",
                 program_name(), count);
    std::exit(1);
  }

  void build_module(const Options& options) {
    std::vector<char> bytes;
    ze_module_format_t format = ZE_MODULE_FORMAT_NATIVE;
    if (options.module_path.empty()) {
      std::string text = simulated_module_text();
      bytes.assign(text.begin(), text.end());
    } else {
      bytes = read_module_file(options.module_path);
      if (is_spirv(bytes)) format = ZE_MODULE_FORMAT_IL_SPIRV;
    }
    ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC,
                          nullptr,
                          format,
                          bytes.size(),
                          reinterpret_cast<const std::uint8_t*>(bytes.data()),
                          "",
                          nullptr};
    ZeBuildLog build_log;
    ze_result_t r = zeModuleCreate(context_.get(), device_, &desc, module_.out(), build_log.out());
    if (r != ZE_RESULT_SUCCESS) {
      print_build_log(build_log.get());
      ze_fail("zeModuleCreate", r);
    }
  }

  static void print_build_log(ze_module_build_log_handle_t log) {
    if (!log) return;
    std::size_t size = 0;
    if (zeModuleBuildLogGetString(log, &size, nullptr) != ZE_RESULT_SUCCESS || size == 0) return;
    std::string text(size, '\0');
    if (zeModuleBuildLogGetString(log, &size, text.data()) != ZE_RESULT_SUCCESS) return;
    std::fprintf(stderr, "%s: module build log: %s\n", program_name(), text.c_str());
  }

  void describe() const {
    auto [host, dev] = global_timestamps();
    std::fprintf(stderr,
                 "%s: device \"%s\" timerResolution=%llu kernelTimestampValidBits=%u "
                 "timestampValidBits=%u compute ordinal=%u host=%llu device=%llu\n",
                 program_name(), properties_.name,
                 static_cast<unsigned long long>(properties_.timerResolution),
                 properties_.kernelTimestampValidBits, properties_.timestampValidBits,
                 compute_ordinal_, static_cast<unsigned long long>(host),
                 static_cast<unsigned long long>(dev));
  }

  ze_driver_handle_t driver_ = nullptr;
  ze_device_handle_t device_ = nullptr;
  ze_device_properties_t properties_{};
  std::uint32_t compute_ordinal_ = 0;
  ZeContext context_;
  ZeModule module_;
};

// Per-round statistics on kernel timestamps, only reported with --verbose.
struct TimestampStats {
  std::uint64_t count = 0;
  std::uint64_t ticks_min = UINT64_MAX;
  std::uint64_t ticks_max = 0;
  void add(std::uint64_t ticks) {
    ++count;
    ticks_min = std::min(ticks_min, ticks);
    ticks_max = std::max(ticks_max, ticks);
  }
};

// One application thread: its own kernels (argument state is per kernel object, so sharing
// them between threads would race), command queue, regular and immediate command lists,
// fence, events and buffers. All of it is created on the thread itself, as runtimes do.
class Worker {
 public:
  Worker(const Gpu& gpu, LaunchLog* log) : gpu_(gpu), log_(log) {}

  void set_up() {
    ze_context_handle_t ctx = gpu_.context();
    ze_device_handle_t dev = gpu_.device();

    create_kernels();

    ze_command_queue_desc_t queue_desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                       nullptr,
                                       gpu_.compute_ordinal(),
                                       0,
                                       0,
                                       ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                       ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ZE_CHECK(zeCommandQueueCreate(ctx, dev, &queue_desc, queue_.out()));
    ze_command_list_desc_t list_desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr,
                                     gpu_.compute_ordinal(), 0};
    ZE_CHECK(zeCommandListCreate(ctx, dev, &list_desc, regular_.out()));
    ZE_CHECK(zeCommandListCreateImmediate(ctx, dev, &queue_desc, immediate_.out()));
    ze_fence_desc_t fence_desc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
    ZE_CHECK(zeFenceCreate(queue_.get(), &fence_desc, fence_.out()));

    ze_event_pool_desc_t pool_desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                   ZE_EVENT_POOL_FLAG_HOST_VISIBLE |
                                       ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
                                   static_cast<std::uint32_t>(events_.size())};
    ze_device_handle_t pool_devices[] = {dev};
    ZE_CHECK(zeEventPoolCreate(ctx, &pool_desc, 1, pool_devices, pool_.out()));
    for (std::uint32_t i = 0; i < events_.size(); ++i) {
      ze_event_desc_t event_desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i,
                                 ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
      ZE_CHECK(zeEventCreate(pool_.get(), &event_desc, events_[i].out()));
    }

    a_ = ZeMemory::device(ctx, dev, kBufferBytes);
    b_ = ZeMemory::device(ctx, dev, kBufferBytes);
    c_ = ZeMemory::device(ctx, dev, kBufferBytes);
    host_in_ = ZeMemory::host(ctx, kBufferBytes);
    shared_out_ = ZeMemory::shared(ctx, dev, kBufferBytes);
    auto* in = static_cast<float*>(host_in_.get());
    for (std::size_t i = 0; i < kBufferBytes / sizeof(float); ++i)
      in[i] = static_cast<float>(i % 97) * 0.5f;
  }

  // Runs one round; returns the number of kernels launched. Launches of counted rounds go
  // to the launch log; warm-up launches do not.
  std::uint64_t run_round(std::uint64_t iterations, std::uint64_t sleep_us, bool counted,
                          bool recreate_kernels) {
    if (recreate_kernels) create_kernels();  // out() destroys the previous kernel first
    launches_ = 0;
    stats_ = {};
    for (std::uint64_t i = 0; i < iterations; ++i) {
      run_iteration(static_cast<std::uint32_t>(i % 1'000'000), counted);
      if (sleep_us) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    }
    ZE_CHECK(zeCommandQueueSynchronize(queue_.get(), kSyncTimeoutNs));
    return launches_;
  }

  const TimestampStats& stats() const { return stats_; }

 private:
  void create_kernels() {
    for (const KernelSpec& spec : kernel_catalog()) {
      ze_kernel_desc_t desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, spec.name.c_str()};
      ZeKernel& kernel = kernels_[static_cast<std::size_t>(spec.id)];
      ZE_CHECK(zeKernelCreate(gpu_.module(), &desc, kernel.out()));
      ZE_CHECK(zeKernelSetGroupSize(kernel.get(), 64, 1, 1));
    }
  }

  enum EventSlot : std::size_t { kGemmDone, kLambdaDone, kReduceDone, kCopyDone, kEventSlots };

  ze_kernel_handle_t kernel(Kernel id) const {
    return kernels_[static_cast<std::size_t>(id)].get();
  }
  ze_event_handle_t event(EventSlot slot) const { return events_[slot].get(); }

  template <typename T>
  void set_arg(Kernel id, std::uint32_t index, const T& value) {
    ZE_CHECK(zeKernelSetArgumentValue(kernel(id), index, sizeof(T), &value));
  }

  void launch(ze_command_list_handle_t list, Kernel id, ze_group_count_t groups,
              ze_event_handle_t signal, ze_event_handle_t wait, bool counted) {
    ze_event_handle_t waits[] = {wait};
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, kernel(id), &groups, signal, wait ? 1 : 0,
                                             wait ? waits : nullptr));
    ++launches_;
    if (counted && log_)
      log_->record(kernel_spec(id).name, groups.groupCountX, groups.groupCountY,
                   groups.groupCountZ);
  }

  // The fixed per-iteration plan documented in kHelp: 3 launches on the regular list,
  // 2 on the immediate list.
  void run_iteration(std::uint32_t i, bool counted) {
    void* a = a_.get();
    void* b = b_.get();
    void* c = c_.get();
    const std::uint32_t n = kBufferBytes / sizeof(float);

    // Regular command list, re-recorded every iteration (as SYCL does for new submissions)
    // and executed on this thread's queue with a fence.
    ze_command_list_handle_t list = regular_.get();
    ZE_CHECK(zeCommandListReset(list));
    const float one = 1.0f;
    ZE_CHECK(zeCommandListAppendMemoryFill(list, a, &one, sizeof one, kBufferBytes, nullptr, 0,
                                           nullptr));
    ZE_CHECK(zeCommandListAppendMemoryCopy(list, b, host_in_.get(), kBufferBytes, nullptr, 0,
                                           nullptr));
    ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
    set_arg(Kernel::kScale, 0, a);
    set_arg(Kernel::kScale, 1, 2.0f);
    set_arg(Kernel::kScale, 2, n);
    launch(list, Kernel::kScale, {256, 1, 1}, nullptr, nullptr, counted);
    ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
    set_arg(Kernel::kGemm, 0, a);
    set_arg(Kernel::kGemm, 1, b);
    set_arg(Kernel::kGemm, 2, c);
    set_arg(Kernel::kGemm, 3, 1.0f);
    set_arg(Kernel::kGemm, 4, 0.0f);
    launch(list, Kernel::kGemm, {16 + i % 4, 8, 1}, event(kGemmDone), nullptr, counted);
    ZE_CHECK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
    set_arg(Kernel::kSoftmax, 0, c);
    set_arg(Kernel::kSoftmax, 1, c);
    launch(list, Kernel::kSoftmax, {128, 1, 1}, nullptr, nullptr, counted);
    ZE_CHECK(zeCommandListClose(list));
    ZE_CHECK(zeCommandQueueExecuteCommandLists(queue_.get(), 1, &list, fence_.get()));
    ZE_CHECK(zeFenceHostSynchronize(fence_.get(), kSyncTimeoutNs));
    ZE_CHECK(zeFenceReset(fence_.get()));

    // Immediate command list, ordered by events (as PyTorch's XPU backend submits).
    ze_command_list_handle_t imm = immediate_.get();
    set_arg(Kernel::kSyclLambda, 0, c);
    launch(imm, Kernel::kSyclLambda, {64, 1, 1}, event(kLambdaDone), nullptr, counted);
    set_arg(Kernel::kReduce, 0, c);
    set_arg(Kernel::kReduce, 1, b);
    launch(imm, Kernel::kReduce, {32, 1 + i % 2, 1}, event(kReduceDone), event(kLambdaDone),
           counted);
    ze_event_handle_t reduce_done = event(kReduceDone);
    ZE_CHECK(zeCommandListAppendMemoryCopy(imm, shared_out_.get(), b, kBufferBytes,
                                           event(kCopyDone), 1, &reduce_done));
    ZE_CHECK(zeEventHostSynchronize(event(kCopyDone), kSyncTimeoutNs));

    // Every kernel event is complete now: read its timestamps, then recycle the events.
    for (EventSlot slot : {kGemmDone, kLambdaDone, kReduceDone}) {
      ze_kernel_timestamp_result_t ts{};
      ZE_CHECK(zeEventQueryKernelTimestamp(event(slot), &ts));
      stats_.add(kernel_ticks(ts.global.kernelStart, ts.global.kernelEnd));
    }
    for (const ZeEvent& e : events_) ZE_CHECK(zeEventHostReset(e.get()));
  }

  // Kernel timestamps may have fewer than 64 valid bits and wrap between start and end.
  std::uint64_t kernel_ticks(std::uint64_t start, std::uint64_t end) const {
    std::uint32_t bits = gpu_.properties().kernelTimestampValidBits;
    std::uint64_t mask = (bits == 0 || bits >= 64) ? ~0ull : ((1ull << bits) - 1);
    return (end - start) & mask;
  }

  const Gpu& gpu_;
  LaunchLog* log_;
  std::array<ZeKernel, static_cast<std::size_t>(Kernel::kCount)> kernels_;
  ZeQueue queue_;
  ZeList regular_;
  ZeList immediate_;
  ZeFence fence_;
  ZeEventPool pool_;
  std::array<ZeEvent, kEventSlots> events_;
  ZeMemory a_, b_, c_, host_in_, shared_out_;
  std::uint64_t launches_ = 0;
  TimestampStats stats_;
};

// The worker threads and the hand-off between them and the main thread, which alone
// handles signals and prints. A round is: main bumps the generation, every worker runs
// its iterations, main waits until all have finished (and so has the device).
class Crew {
 public:
  Crew(const Gpu& gpu, const Options& options, LaunchLog* log) : options_(options) {
    for (unsigned t = 0; t < options.threads; ++t)
      workers_.push_back(std::make_unique<Worker>(gpu, log));
    std::unique_lock lock(mutex_);
    pending_ = workers_.size();
    for (unsigned t = 0; t < workers_.size(); ++t)
      threads_.emplace_back([this, t] { work(*workers_[t], t); });
    done_.wait(lock, [this] { return pending_ == 0; });
  }

  ~Crew() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    start_.notify_all();
    for (auto& t : threads_) t.join();
  }

  Crew(const Crew&) = delete;
  Crew& operator=(const Crew&) = delete;

  std::uint64_t run_round(bool counted) {
    std::unique_lock lock(mutex_);
    counted_ = counted;
    launches_ = 0;
    pending_ = workers_.size();
    ++generation_;
    start_.notify_all();
    done_.wait(lock, [this] { return pending_ == 0; });
    return launches_;
  }

  TimestampStats stats() const {
    TimestampStats all;
    for (const auto& w : workers_) {
      const TimestampStats& s = w->stats();
      all.count += s.count;
      all.ticks_min = std::min(all.ticks_min, s.ticks_min);
      all.ticks_max = std::max(all.ticks_max, s.ticks_max);
    }
    return all;
  }

 private:
  void work(Worker& worker, unsigned index) {
    worker.set_up();
    // A recognisable thread name ("xt-worker-<t>") for traces that show comm. Set after
    // set-up: threads the driver starts meanwhile inherit the creator's name, and only
    // the threads that launch should carry this one.
    std::string name = "xt-worker-" + std::to_string(index);
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    std::unique_lock lock(mutex_);
    finish_one();
    std::uint64_t seen = generation_;
    for (;;) {
      start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      bool counted = counted_;
      lock.unlock();
      std::uint64_t n = worker.run_round(options_.iterations, options_.sleep_us, counted,
                                         options_.recreate_kernels);
      lock.lock();
      launches_ += n;
      finish_one();
    }
  }

  void finish_one() {
    if (--pending_ == 0) done_.notify_one();
  }

  const Options& options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  std::uint64_t generation_ = 0;
  std::size_t pending_ = 0;
  bool counted_ = false;
  bool stopping_ = false;
  std::uint64_t launches_ = 0;
};

void print_line(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

int run(const Options& options) {
  const std::uint64_t per_round = options.threads * options.iterations * kLaunchesPerIteration;

  std::unique_ptr<LaunchLog> log;
  if (!options.launch_log.empty()) log = std::make_unique<LaunchLog>(options.launch_log);

  Gpu gpu(options);
  std::optional<Crew> crew(std::in_place, gpu, options, log.get());
  if (options.verbose)
    std::fprintf(stderr, "%s: %llu launch(es) per round (threads %llu x iterations %llu x %llu)\n",
                 program_name(), static_cast<unsigned long long>(per_round),
                 static_cast<unsigned long long>(options.threads),
                 static_cast<unsigned long long>(options.iterations),
                 static_cast<unsigned long long>(kLaunchesPerIteration));

  std::uint64_t rounds = 0, total = 0;
  auto round = [&](bool counted) {
    gpu.global_timestamps();  // runtimes resample the clock pair around work
    std::uint64_t n = crew->run_round(counted);
    if (n != per_round) {
      std::fprintf(stderr, "%s: internal error: round launched %llu kernels, expected %llu\n",
                   program_name(), static_cast<unsigned long long>(n),
                   static_cast<unsigned long long>(per_round));
      std::exit(1);
    }
    auto [host, dev] = gpu.global_timestamps();
    if (options.verbose) {
      TimestampStats s = crew->stats();
      std::fprintf(stderr,
                   "%s: %s round done: %llu kernel timestamps, %llu..%llu ticks; clocks host=%llu "
                   "device=%llu\n",
                   program_name(), counted ? "counted" : "warm-up",
                   static_cast<unsigned long long>(s.count),
                   static_cast<unsigned long long>(s.count ? s.ticks_min : 0),
                   static_cast<unsigned long long>(s.ticks_max),
                   static_cast<unsigned long long>(host), static_cast<unsigned long long>(dev));
    }
    return n;
  };

  for (std::uint64_t w = 0; w < options.warmup_rounds; ++w) round(false);
  // Signals that arrived during set-up or warm-up stay pending and are handled below.
  print_line("ready " + std::to_string(::getpid()));

  auto counted_round = [&] {
    std::uint64_t n = round(true);
    ++rounds;
    total += n;
    print_line("round " + std::to_string(rounds) + " launches=" + std::to_string(n));
  };
  auto stop_requested = [] {
    // Poll without waiting; SIGUSR1 outside --wait-for-signal is ignored.
    for (;;) {
      ControlSignal s = wait_control_signal(std::chrono::nanoseconds(0));
      if (s == ControlSignal::kStop) return true;
      if (s == ControlSignal::kTimeout) return false;
    }
  };

  if (options.wait_for_signal) {
    while (wait_control_signal(std::nullopt) == ControlSignal::kRound) counted_round();
  } else if (options.duration_s) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(*options.duration_s));
    while (std::chrono::steady_clock::now() < deadline && !stop_requested()) counted_round();
  } else {
    for (std::uint64_t r = 0; r < options.rounds && !stop_requested(); ++r) counted_round();
  }
  print_line("exit rounds=" + std::to_string(rounds) + " launches=" + std::to_string(total));
  if (options.end == "kill") ::raise(SIGKILL);
  if (options.end == "exec") {
    ::execl("/bin/true", "true", static_cast<char*>(nullptr));
    std::fprintf(stderr, "ze_workload: exec /bin/true: %s\n", std::strerror(errno));
    return 1;
  }
  if (options.end == "threads") {
    crew.reset();  // joins the launching threads
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  return 0;
}

}  // namespace
}  // namespace xtrace::workloads

int main(int argc, char** argv) {
  using namespace xtrace::workloads;
  // Before anything starts a thread (the loader and driver may), so every thread inherits it.
  block_control_signals();
  set_program_name(argv[0]);
  Options options = parse_options(argc, argv);
  if (options.list_kernels) {
    for (const KernelSpec& k : kernel_catalog()) std::puts(k.name.c_str());
    return 0;
  }
  return run(options);
}

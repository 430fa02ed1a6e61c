// ze_workload: a multi-threaded program that drives Level Zero through the real loader the
// way SYCL/PyTorch runtimes do, so tests can trace it and compare against its launch log.
// Its command line is in ze_workload_options.{h,cc}.

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
#include "ze_workload_options.h"

namespace xtrace::workloads {
namespace {

// Kernel launches per iteration (see the plan in --help, ze_workload_options.cc, and
// Worker::run_iteration):
// 3 on the regular command list, 2 on the immediate command list.
constexpr std::uint64_t kLaunchesPerIteration = 5;

// Waits on the device are bounded so a broken driver fails a test with a message instead
// of hanging it; generous because a tracer under test may slow every call down.
constexpr std::uint64_t kSyncTimeoutNs = 30'000'000'000ull;

constexpr std::size_t kBufferBytes = 64 * 1024;

// Process-wide state, as a runtime's platform/context layer holds it: the device, one
// context and one module shared by every thread.
class Gpu {
 public:
  explicit Gpu(const Options& options)
      : queue_index_(options.queue_index), record_once_(options.record_once) {
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
  std::uint32_t queue_index() const { return queue_index_; }
  bool record_once() const { return record_once_; }
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
  std::uint32_t queue_index_ = 0;
  bool record_once_ = false;
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
                                       gpu_.queue_index(),
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
    if (gpu_.record_once()) {
      record_regular(0, /*counted=*/false);
      launches_ = 0;
    }
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

  // The fixed per-iteration plan documented in --help: 3 launches on the regular list,
  // 2 on the immediate list.
  void run_iteration(std::uint32_t i, bool counted) {
    void* b = b_.get();
    void* c = c_.get();

    // Regular command list, re-recorded every iteration (as SYCL does for new submissions)
    // unless recorded once, and executed on this thread's queue with a fence.
    ze_command_list_handle_t list = regular_.get();
    if (!gpu_.record_once()) record_regular(i, counted);
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

  // The regular list's three launches, for iteration `i`, closed.
  void record_regular(std::uint32_t i, bool counted) {
    void* a = a_.get();
    void* b = b_.get();
    void* c = c_.get();
    const std::uint32_t n = kBufferBytes / sizeof(float);
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
  // A list recorded once launches nothing in a round: only the immediate list's two do.
  const std::uint64_t per_round = options.threads * options.iterations *
                                  (options.record_once ? kLaunchesPerIteration - 3 : kLaunchesPerIteration);

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
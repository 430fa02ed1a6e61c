// ze_timeline: a Level Zero program shaped for checking a device timeline against the
// simulated GPU's ground truth: regular command lists recorded once and executed many times,
// immediate command lists, kernel-timestamp events read on some submissions and not on
// others, every other recorded API call, deliberate failures, several devices, and a stress
// mode that creates and destroys kernels by the hundred thousand.
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kernel_catalog.h"
#include "launch_log.h"
#include "workload_cli.h"
#include "ze_handles.h"
#include "ze_result.h"

namespace xtrace::workloads {
namespace {

constexpr std::uint64_t kSyncTimeoutNs = 30'000'000'000ull;
constexpr std::size_t kBufferBytes = 16 * 1024;
constexpr std::uint32_t kMaxImmediate = 64;

constexpr const char kHelp[] = R"(usage: ze_timeline [options]

Each worker thread (xt-timeline-<t>) owns a command queue, a regular command list, an
immediate command list and a kernel-timestamp event pool on device t % devices, then runs
ROUNDS rounds of:
  regular list, recorded once: fill (signals an event), xt_scale_f32 {64,1,1},
    xt::softmax<...> {32,1,1}, the long xt::gemm<...> {8,8,1} (each signals its event),
    copy (signals an event); executed EXECUTIONS times, each with a fence the host waits on;
    after every QUERY-th execution (counting from the first) the host reads the kernel
    timestamps of all five events; the events are reset after every execution.
  immediate list: IMMEDIATE launches alternating the SYCL lambda and reduce kernels, each
    signalling its own event; the host waits on the last one, reads the kernel timestamps of
    every QUERY-th launch, and resets all.
The main thread reads every device's clocks (zeDeviceGetGlobalTimestamps) before and after.

Options:
  --threads T          worker threads (default 1, 1..64)
  --rounds R           rounds (default 1, 1..100000)
  --executions N       executions of the regular list per round (default 4, 0..100000)
  --immediate N        immediate launches per round (default 4, 0..64)
  --query-every Q      read timestamps every Q-th submission (default 2; 0: never)
  --sleep-ms MS        sleep between rounds (default 0, 0..600000)
  --all-devices        spread threads over all devices (default: device 0 only)
  --all-calls          once per round per thread, also: cooperative and indirect launches,
                       copy region, barriers, prefetch, write global timestamp,
                       append query kernel timestamps, append signal/wait/reset event, host
                       signal, event query status, zeEventQueryTimestampsExp, fence query
  --errors             once, on the main thread, make calls that fail, printing
                       "error <function> <result name>" for each
  --stress-kernels K   instead of all of the above: create K kernels one after another on
                       one thread (names "xt_stress_<i>"), launch each --stress-launches / K
                       times on an immediate list, destroy it; a host sync every 256 launches
  --stress-launches L  total launches of the stress mode (default 10 x K)
  --launch-log FILE    "<tid>\t<kernel name>\t<x>,<y>,<z>" per launch (not in stress mode)
  --help

Output: "ready <pid>" after set-up, "exit launches=<n> cpu_us=<c>" at the end (kernels
launched, counting every kernel of every execution of a regular list; the process's CPU time,
which a tracer's probes add to).
)";

struct Options {
  std::uint64_t threads = 1;
  std::uint64_t rounds = 1;
  std::uint64_t executions = 4;
  std::uint64_t immediate = 4;
  std::uint64_t query_every = 2;
  std::uint64_t sleep_ms = 0;
  bool all_devices = false;
  bool all_calls = false;
  bool errors = false;
  std::uint64_t stress_kernels = 0;
  std::uint64_t stress_launches = 0;
  std::string launch_log;
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    } else if (arg == "--threads") {
      o.threads = parse_count(arg, option_value(argc, argv, i), 1, 64);
    } else if (arg == "--rounds") {
      o.rounds = parse_count(arg, option_value(argc, argv, i), 1, 100'000);
    } else if (arg == "--executions") {
      o.executions = parse_count(arg, option_value(argc, argv, i), 0, 100'000);
    } else if (arg == "--immediate") {
      o.immediate = parse_count(arg, option_value(argc, argv, i), 0, kMaxImmediate);
    } else if (arg == "--query-every") {
      o.query_every = parse_count(arg, option_value(argc, argv, i), 0, 100'000);
    } else if (arg == "--sleep-ms") {
      o.sleep_ms = parse_count(arg, option_value(argc, argv, i), 0, 600'000);
    } else if (arg == "--all-devices") {
      o.all_devices = true;
    } else if (arg == "--all-calls") {
      o.all_calls = true;
    } else if (arg == "--errors") {
      o.errors = true;
    } else if (arg == "--stress-kernels") {
      o.stress_kernels = parse_count(arg, option_value(argc, argv, i), 1, 10'000'000);
    } else if (arg == "--stress-launches") {
      o.stress_launches = parse_count(arg, option_value(argc, argv, i), 1, 100'000'000);
    } else if (arg == "--launch-log") {
      o.launch_log = option_value(argc, argv, i);
    } else {
      usage_error("unknown argument \"" + std::string(arg) + "\"");
    }
  }
  if (o.stress_kernels && !o.stress_launches) o.stress_launches = 10 * o.stress_kernels;
  if (o.stress_launches && !o.stress_kernels) usage_error("--stress-launches needs --stress-kernels");
  return o;
}

void print_line(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

// The driver, its devices, one context and the catalog module (on every device).
struct Platform {
  ze_driver_handle_t driver = nullptr;
  std::vector<ze_device_handle_t> devices;
  ZeContext context;
  std::vector<ZeModule> modules;  // per device

  Platform() {
    ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    std::uint32_t n = 1;
    ZE_CHECK(zeDriverGet(&n, &driver));
    std::uint32_t count = 0;
    ZE_CHECK(zeDeviceGet(driver, &count, nullptr));
    devices.resize(count);
    ZE_CHECK(zeDeviceGet(driver, &count, devices.data()));
    // As runtimes do when they pick their devices: what tells a tracer which device each is.
    for (ze_device_handle_t dev : devices) {
      ze_device_properties_t props{};
      props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      ZE_CHECK(zeDeviceGetProperties(dev, &props));
    }
    ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ZE_CHECK(zeContextCreate(driver, &cd, context.out()));
    const std::string text = simulated_module_text();
    for (ze_device_handle_t dev : devices) modules.push_back(build(dev, text));
  }

  ZeModule build(ze_device_handle_t dev, const std::string& bytes) const {
    ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_NATIVE,
                          bytes.size(), reinterpret_cast<const std::uint8_t*>(bytes.data()),
                          "", nullptr};
    ZeModule m;
    ZE_CHECK(zeModuleCreate(context.get(), dev, &desc, m.out(), nullptr));
    return m;
  }

  std::pair<std::uint64_t, std::uint64_t> clocks(ze_device_handle_t dev) const {
    std::uint64_t host = 0, device = 0;
    ZE_CHECK(zeDeviceGetGlobalTimestamps(dev, &host, &device));
    return {host, device};
  }
};

ze_event_pool_handle_t make_pool(const Platform& p, ze_device_handle_t dev, std::uint32_t count,
                                 bool timestamps, ZeEventPool& pool) {
  ze_event_pool_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                            ZE_EVENT_POOL_FLAG_HOST_VISIBLE |
                                (timestamps ? ze_event_pool_flags_t{ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP} : 0u),
                            count};
  ZE_CHECK(zeEventPoolCreate(p.context.get(), &desc, 1, &dev, pool.out()));
  return pool.get();
}

void make_events(ze_event_pool_handle_t pool, std::vector<ZeEvent>& events, std::uint32_t n) {
  events.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, ZE_EVENT_SCOPE_FLAG_HOST,
                         ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(pool, &desc, events[i].out()));
  }
}

class Worker {
 public:
  Worker(const Platform& p, const Options& o, LaunchLog* log, unsigned index)
      : p_(p), o_(o), log_(log), index_(index) {}
  ~Worker() {
    for (void* ptr : {device_buf_, host_buf_, shared_buf_})
      if (ptr) ZE_CHECK(zeMemFree(p_.context.get(), ptr));
  }

  std::uint64_t run() {
    const std::size_t d = o_.all_devices ? index_ % p_.devices.size() : 0;
    dev_ = p_.devices[d];
    module_ = p_.modules[d].get();
    set_up();
    const std::string name = "xt-timeline-" + std::to_string(index_);
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    for (std::uint64_t r = 0; r < o_.rounds; ++r) {
      run_regular();
      run_immediate();
      if (o_.all_calls) run_all_calls();
      ZE_CHECK(zeCommandQueueSynchronize(queue_.get(), kSyncTimeoutNs));
      if (o_.sleep_ms && r + 1 < o_.rounds)
        std::this_thread::sleep_for(std::chrono::milliseconds(o_.sleep_ms));
    }
    return launches_;
  }

 private:
  enum ListEvent { kFillDone, kScaleDone, kSoftmaxDone, kGemmDone, kCopyDone, kListEvents };

  void set_up() {
    ze_context_handle_t ctx = p_.context.get();
    for (Kernel k : {Kernel::kScale, Kernel::kSoftmax, Kernel::kGemm, Kernel::kSyclLambda,
                     Kernel::kReduce}) {
      ze_kernel_desc_t desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, kernel_spec(k).name.c_str()};
      ZE_CHECK(zeKernelCreate(module_, &desc, kernels_[static_cast<int>(k)].out()));
    }
    ze_command_queue_desc_t qd{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0,
                               ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                               ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ZE_CHECK(zeCommandQueueCreate(ctx, dev_, &qd, queue_.out()));
    ZE_CHECK(zeCommandListCreateImmediate(ctx, dev_, &qd, immediate_.out()));
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ZE_CHECK(zeCommandListCreate(ctx, dev_, &ld, regular_.out()));
    ze_fence_desc_t fd{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
    ZE_CHECK(zeFenceCreate(queue_.get(), &fd, fence_.out()));
    make_events(make_pool(p_, dev_, kListEvents, true, list_pool_), list_events_, kListEvents);
    make_events(make_pool(p_, dev_, kMaxImmediate, true, imm_pool_), imm_events_, kMaxImmediate);
    ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
    ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    ZE_CHECK(zeMemAllocDevice(ctx, &dd, kBufferBytes, 64, dev_, &device_buf_));
    ZE_CHECK(zeMemAllocHost(ctx, &hd, kBufferBytes, 64, &host_buf_));
    ZE_CHECK(zeMemAllocShared(ctx, &dd, &hd, kBufferBytes, 64, dev_, &shared_buf_));

    // The regular list is recorded once and executed many times.
    ze_command_list_handle_t list = regular_.get();
    const std::uint32_t pattern = 0x3f800000;
    ZE_CHECK(zeCommandListAppendMemoryFill(list, device_buf_, &pattern, sizeof pattern,
                                           kBufferBytes, list_event(kFillDone), 0, nullptr));
    append_launch(list, Kernel::kScale, {64, 1, 1}, list_event(kScaleDone));
    append_launch(list, Kernel::kSoftmax, {32, 1, 1}, list_event(kSoftmaxDone));
    append_launch(list, Kernel::kGemm, {8, 8, 1}, list_event(kGemmDone));
    ZE_CHECK(zeCommandListAppendMemoryCopy(list, host_buf_, device_buf_, kBufferBytes,
                                           list_event(kCopyDone), 0, nullptr));
    ZE_CHECK(zeCommandListClose(list));
  }

  ze_event_handle_t list_event(ListEvent e) const { return list_events_[e].get(); }

  void append_launch(ze_command_list_handle_t list, Kernel k, ze_group_count_t groups,
                     ze_event_handle_t signal) {
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, kernels_[static_cast<int>(k)].get(), &groups,
                                             signal, 0, nullptr));
    ++launches_;
    if (log_) log_->record(kernel_spec(k).name, groups.groupCountX, groups.groupCountY, groups.groupCountZ);
  }

  bool query_now(std::uint64_t i) const { return o_.query_every && i % o_.query_every == 0; }

  void read_timestamp(ze_event_handle_t e) {
    ze_kernel_timestamp_result_t ts{};
    ZE_CHECK(zeEventQueryKernelTimestamp(e, &ts));
  }

  void run_regular() {
    ze_command_list_handle_t list = regular_.get();
    for (std::uint64_t i = 0; i < o_.executions; ++i) {
      ZE_CHECK(zeCommandQueueExecuteCommandLists(queue_.get(), 1, &list, fence_.get()));
      // The list's kernels were launched once, at recording; each execution runs them again.
      launches_ += 3;
      ZE_CHECK(zeFenceHostSynchronize(fence_.get(), kSyncTimeoutNs));
      ZE_CHECK(zeFenceReset(fence_.get()));
      if (query_now(i))
        for (const ZeEvent& e : list_events_) read_timestamp(e.get());
      for (const ZeEvent& e : list_events_) ZE_CHECK(zeEventHostReset(e.get()));
    }
  }

  void run_immediate() {
    if (o_.immediate == 0) return;
    for (std::uint64_t i = 0; i < o_.immediate; ++i) {
      const bool lambda = i % 2 == 0;
      append_launch(immediate_.get(), lambda ? Kernel::kSyclLambda : Kernel::kReduce,
                    {lambda ? 16u : 8u, 1, 1}, imm_events_[i].get());
    }
    ZE_CHECK(zeEventHostSynchronize(imm_events_[o_.immediate - 1].get(), kSyncTimeoutNs));
    for (std::uint64_t i = 0; i < o_.immediate; ++i)
      if (query_now(i)) read_timestamp(imm_events_[i].get());
    for (std::uint64_t i = 0; i < o_.immediate; ++i)
      ZE_CHECK(zeEventHostReset(imm_events_[i].get()));
  }

  // The rarer calls, once each, on a list of their own executed on the queue.
  void run_all_calls() {
    ze_context_handle_t ctx = p_.context.get();
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ZeList list;
    ZE_CHECK(zeCommandListCreate(ctx, dev_, &ld, list.out()));
    ze_command_list_handle_t l = list.get();
    ze_kernel_handle_t lambda = kernels_[static_cast<int>(Kernel::kSyclLambda)].get();
    ze_kernel_handle_t reduce = kernels_[static_cast<int>(Kernel::kReduce)].get();
    ze_group_count_t groups{4, 2, 1};
    ZE_CHECK(zeCommandListAppendLaunchCooperativeKernel(l, lambda, &groups, nullptr, 0, nullptr));
    auto* indirect = static_cast<ze_group_count_t*>(shared_buf_);
    *indirect = {2, 1, 1};
    ZE_CHECK(zeCommandListAppendLaunchKernelIndirect(l, reduce, indirect, nullptr, 0, nullptr));
    launches_ += 2;
    ze_copy_region_t region{0, 0, 0, 64, 16, 1};
    ZE_CHECK(zeCommandListAppendMemoryCopyRegion(l, device_buf_, &region, 256, 0, host_buf_,
                                                 &region, 256, 0, imm_events_[0].get(), 0,
                                                 nullptr));
    const std::size_t range_size = 4096;
    const void* range = device_buf_;
    ZE_CHECK(zeCommandListAppendMemoryRangesBarrier(l, 1, &range_size, &range, nullptr, 0, nullptr));
    ZE_CHECK(zeCommandListAppendBarrier(l, nullptr, 0, nullptr));
    ZE_CHECK(zeCommandListAppendMemoryPrefetch(l, shared_buf_, 4096));
    ZE_CHECK(zeCommandListAppendWriteGlobalTimestamp(l, static_cast<std::uint64_t*>(host_buf_),
                                                     nullptr, 0, nullptr));
    ze_event_handle_t copied = imm_events_[0].get();
    ZE_CHECK(zeCommandListAppendQueryKernelTimestamps(l, 1, &copied,
                                                      static_cast<char*>(host_buf_) + 64, nullptr,
                                                      nullptr, 1, &copied));
    ZE_CHECK(zeCommandListAppendSignalEvent(l, imm_events_[1].get()));
    ZE_CHECK(zeCommandListAppendWaitOnEvents(l, 1, &copied));
    ZE_CHECK(zeCommandListAppendEventReset(l, imm_events_[2].get()));
    ZE_CHECK(zeCommandListClose(l));
    ZE_CHECK(zeEventHostSignal(imm_events_[3].get()));
    ZE_CHECK(zeCommandQueueExecuteCommandLists(queue_.get(), 1, &l, fence_.get()));
    ZE_CHECK(zeFenceHostSynchronize(fence_.get(), kSyncTimeoutNs));
    if (zeFenceQueryStatus(fence_.get()) != ZE_RESULT_SUCCESS) ze_fail("zeFenceQueryStatus", ZE_RESULT_NOT_READY);
    ZE_CHECK(zeFenceReset(fence_.get()));
    ZE_CHECK(zeEventQueryStatus(imm_events_[1].get()));
    std::uint32_t count = 0;
    ZE_CHECK(zeEventQueryTimestampsExp(copied, dev_, &count, nullptr));
    std::vector<ze_kernel_timestamp_result_t> results(count);
    ZE_CHECK(zeEventQueryTimestampsExp(copied, dev_, &count, results.data()));
    for (std::uint32_t i = 0; i < 4; ++i) ZE_CHECK(zeEventHostReset(imm_events_[i].get()));
    ZE_CHECK(zeCommandListReset(l));
  }

  const Platform& p_;
  const Options& o_;
  LaunchLog* log_;
  unsigned index_;
  ze_device_handle_t dev_ = nullptr;
  ze_module_handle_t module_ = nullptr;
  ZeKernel kernels_[static_cast<int>(Kernel::kCount)];
  ZeQueue queue_;
  ZeList regular_, immediate_;
  ZeFence fence_;
  ZeEventPool list_pool_, imm_pool_;
  std::vector<ZeEvent> list_events_, imm_events_;
  void* device_buf_ = nullptr;
  void* host_buf_ = nullptr;
  void* shared_buf_ = nullptr;
  std::uint64_t launches_ = 0;
};

void report_error(const char* function, ze_result_t r) {
  print_line(std::string("error ") + function + " " + ze_result_name(r));
}

// Calls that fail (or report NOT_READY), each checked to fail the way the driver documents.
void make_errors(const Platform& p) {
  ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "xt_no_such_kernel"};
  ze_kernel_handle_t k = nullptr;
  report_error("zeKernelCreate", zeKernelCreate(p.modules[0].get(), &kd, &k));
  ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 7, 0};
  ze_command_list_handle_t l = nullptr;
  report_error("zeCommandListCreate", zeCommandListCreate(p.context.get(), p.devices[0], &ld, &l));
  ZeEventPool pool;
  std::vector<ZeEvent> events;
  make_events(make_pool(p, p.devices[0], 1, false, pool), events, 1);
  ze_kernel_timestamp_result_t ts{};
  report_error("zeEventQueryKernelTimestamp", zeEventQueryKernelTimestamp(events[0].get(), &ts));
  report_error("zeEventHostSynchronize", zeEventHostSynchronize(events[0].get(), 0));
}

// Kernels created, launched and destroyed one after another, as a JIT-compiling runtime
// does: the tracer's tables must not keep what was destroyed.
std::uint64_t run_stress(const Platform& p, const Options& o) {
  // Not the simulated format: the driver accepts any kernel name in such a module, each
  // running XTRACE_SIMZE_DEFAULT_KERNEL_NS.
  const std::string blob = "ze_timeline stress module";
  ZeModule module = p.build(p.devices[0], blob);
  ze_command_queue_desc_t qd{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0,
                             ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  ZeList imm;
  ZE_CHECK(zeCommandListCreateImmediate(p.context.get(), p.devices[0], &qd, imm.out()));
  ZeEventPool pool;
  std::vector<ZeEvent> events;
  make_events(make_pool(p, p.devices[0], 1, false, pool), events, 1);
  std::uint64_t launches = 0;
  for (std::uint64_t i = 0; i < o.stress_kernels; ++i) {
    const std::string name = "xt_stress_" + std::to_string(i);
    ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name.c_str()};
    ZeKernel kernel;
    ZE_CHECK(zeKernelCreate(module.get(), &kd, kernel.out()));
    const std::uint64_t n = o.stress_launches / o.stress_kernels +
                            (i < o.stress_launches % o.stress_kernels ? 1 : 0);
    ze_group_count_t groups{1, 1, 1};
    for (std::uint64_t j = 0; j < n; ++j) {
      const bool sync = ++launches % 256 == 0;
      ZE_CHECK(zeCommandListAppendLaunchKernel(imm.get(), kernel.get(), &groups,
                                               sync ? events[0].get() : nullptr, 0, nullptr));
      if (sync) {
        ZE_CHECK(zeEventHostSynchronize(events[0].get(), kSyncTimeoutNs));
        ZE_CHECK(zeEventHostReset(events[0].get()));
      }
    }
  }
  ZE_CHECK(zeCommandListReset(imm.get()));  // waits for what is still running
  return launches;
}

int run(const Options& o) {
  Platform platform;
  std::unique_ptr<LaunchLog> log;
  if (!o.launch_log.empty()) log = std::make_unique<LaunchLog>(o.launch_log);
  print_line("ready " + std::to_string(::getpid()));
  for (ze_device_handle_t dev : platform.devices) platform.clocks(dev);
  if (o.errors) make_errors(platform);

  std::uint64_t total = 0;
  if (o.stress_kernels) {
    total = run_stress(platform, o);
  } else {
    std::vector<std::unique_ptr<Worker>> workers;
    std::vector<std::thread> threads;
    std::vector<std::uint64_t> launched(o.threads, 0);
    for (unsigned t = 0; t < o.threads; ++t)
      workers.push_back(std::make_unique<Worker>(platform, o, log.get(), t));
    for (unsigned t = 0; t < o.threads; ++t)
      threads.emplace_back([&, t] { launched[t] = workers[t]->run(); });
    for (auto& th : threads) th.join();
    for (std::uint64_t n : launched) total += n;
    workers.clear();
  }
  for (ze_device_handle_t dev : platform.devices) platform.clocks(dev);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto cpu_us = [](const timeval& t) { return uint64_t(t.tv_sec) * 1'000'000 + uint64_t(t.tv_usec); };
  print_line("exit launches=" + std::to_string(total) +
             " cpu_us=" + std::to_string(cpu_us(usage.ru_utime) + cpu_us(usage.ru_stime)));
  return 0;
}

}  // namespace
}  // namespace xtrace::workloads

int main(int argc, char** argv) {
  using namespace xtrace::workloads;
  set_program_name(argv[0]);
  return run(parse_options(argc, argv));
}

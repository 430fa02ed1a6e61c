// ze_call_loop: a launch-bound Level Zero program for the benchmark. It sets up a context,
// module, kernel, command lists and a signalled event through the real loader, then runs
// tight loops of one API call on command from stdin and reports the time they took, so the
// benchmark can time the same loop untraced, under an empty probe and under capture.
#include <fcntl.h>
#include <level_zero/ze_api.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.h"
#include "kernel_catalog.h"
#include "ze_handles.h"
#include "ze_result.h"

namespace xtrace::workloads {
namespace {

using xtrace::UniqueFd;

constexpr const char kHelp[] = R"(usage: ze_call_loop [--name NAME]

Sets up Level Zero through the real loader (run it on the simulated GPU:
ZE_ENABLE_ALT_DRIVERS=/abs/path/libxtrace_simze.so), prints "ready <pid>", then reads
commands from stdin, one per line, and answers each with one line on stdout:
  launch N     N x zeCommandListAppendLaunchKernel on a regular command list
  copy N       N x zeCommandListAppendMemoryCopy (64 bytes, host to host)
  sync N       N x zeEventHostSynchronize on an event that is already signalled
  ioctl N      N x ioctl(2) with i915's GEM_EXECBUFFER2 command on /dev/null (the kernel
               answers ENOTTY: the syscall as a DRM submission makes it, minus the driver)
  syscall N    N x getppid(2), a syscall that is not an ioctl
               -> "done <call> calls=N ns=<wall time> cpu_ns=<this thread's CPU time>"
  pace R S T   T threads launch at R calls per second in total for S seconds (or as
               fast as they can, if that is slower)
               -> "paced calls=<n> ns=<elapsed> late_ns=<worst lag behind the schedule>"
  quit
The regular command list is reset every 1024 appends (the reset is part of the loop).
--name sets the process name (/proc/PID/comm, at most 15 bytes) before anything else, so a
capture can select one ze_call_loop by name among several.
)";

// Appends per reset: keeps the list's memory bounded without making resets matter.
constexpr uint64_t kAppendsPerReset = 1024;
// Paced threads work in bursts of this many calls between clock checks.
constexpr uint64_t kPaceBurst = 64;
constexpr uint64_t kCopyBytes = 64;
// DRM_IOCTL_I915_GEM_EXECBUFFER2: _IOW('d', 0x69, struct drm_i915_gem_execbuffer2), 64 bytes.
constexpr unsigned long kI915GemExecbuffer2 = 0x40406469;

uint64_t ClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}
uint64_t NowNs() { return ClockNs(CLOCK_MONOTONIC); }
// The calling thread's CPU time, kernel time included (where uprobe traps and BPF programs
// run): unlike wall time, it does not count the time other processes had the CPU.
uint64_t ThreadCpuNs() { return ClockNs(CLOCK_THREAD_CPUTIME_ID); }

class CallLoop {
 public:
  CallLoop() {
    ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t count = 1;
    ZE_CHECK(zeDriverGet(&count, &driver_));
    count = 1;
    ZE_CHECK(zeDeviceGet(driver_, &count, &device_));
    ze_context_desc_t context_desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ZE_CHECK(zeContextCreate(driver_, &context_desc, context_.out()));
    const std::string text = simulated_module_text();
    ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC,
                          nullptr,
                          ZE_MODULE_FORMAT_NATIVE,
                          text.size(),
                          reinterpret_cast<const uint8_t*>(text.data()),
                          "",
                          nullptr};
    ZE_CHECK(zeModuleCreate(context_.get(), device_, &desc, module_.out(), nullptr));
    ze_event_pool_desc_t pool_desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                   ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ZE_CHECK(zeEventPoolCreate(context_.get(), &pool_desc, 1, &device_, pool_.out()));
    ze_event_desc_t event_desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0,
                               ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(pool_.get(), &event_desc, signalled_.out()));
    ZE_CHECK(zeEventHostSignal(signalled_.get()));
    src_ = ZeMemory::host(context_.get(), kCopyBytes);
    dst_ = ZeMemory::host(context_.get(), kCopyBytes);
    dev_null_.Reset(open("/dev/null", O_RDWR | O_CLOEXEC));
  }

  // What one thread launches with: its own kernel (argument state is per kernel) and list.
  struct Lane {
    ZeKernel kernel;
    ZeList list;
    uint64_t appended = 0;
  };

  std::unique_ptr<Lane> NewLane() {
    auto lane = std::make_unique<Lane>();
    const KernelSpec& spec = kernel_spec(Kernel::kScale);
    ze_kernel_desc_t kdesc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, spec.name.c_str()};
    ZE_CHECK(zeKernelCreate(module_.get(), &kdesc, lane->kernel.out()));
    ZE_CHECK(zeKernelSetGroupSize(lane->kernel.get(), 64, 1, 1));
    void* buffer = dst_.get();
    const float factor = 2.0f;
    const uint32_t n = kCopyBytes / sizeof(float);
    ZE_CHECK(zeKernelSetArgumentValue(lane->kernel.get(), 0, sizeof buffer, &buffer));
    ZE_CHECK(zeKernelSetArgumentValue(lane->kernel.get(), 1, sizeof factor, &factor));
    ZE_CHECK(zeKernelSetArgumentValue(lane->kernel.get(), 2, sizeof n, &n));
    ze_command_list_desc_t list_desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ZE_CHECK(zeCommandListCreate(context_.get(), device_, &list_desc, lane->list.out()));
    return lane;
  }

  static void Launch(Lane& lane) {
    if (lane.appended++ % kAppendsPerReset == kAppendsPerReset - 1)
      ZE_CHECK(zeCommandListReset(lane.list.get()));
    const ze_group_count_t groups{256, 1, 1};
    ZE_CHECK(zeCommandListAppendLaunchKernel(lane.list.get(), lane.kernel.get(), &groups, nullptr,
                                             0, nullptr));
  }

  void Copy(Lane& lane) {
    if (lane.appended++ % kAppendsPerReset == kAppendsPerReset - 1)
      ZE_CHECK(zeCommandListReset(lane.list.get()));
    ZE_CHECK(zeCommandListAppendMemoryCopy(lane.list.get(), dst_.get(), src_.get(), kCopyBytes,
                                           nullptr, 0, nullptr));
  }

  void Sync() { ZE_CHECK(zeEventHostSynchronize(signalled_.get(), UINT64_MAX)); }

  void Ioctl() {
    uint64_t execbuffer[8] = {};
    (void)!ioctl(dev_null_.get(), kI915GemExecbuffer2, execbuffer);
  }

  Lane& main_lane() {
    if (!main_lane_) main_lane_ = NewLane();
    return *main_lane_;
  }

 private:
  ze_driver_handle_t driver_ = nullptr;
  ze_device_handle_t device_ = nullptr;
  ZeContext context_;
  ZeModule module_;
  ZeEventPool pool_;
  ZeEvent signalled_;
  ZeMemory src_, dst_;
  std::unique_ptr<Lane> main_lane_;
  UniqueFd dev_null_;
};

// T threads, each launching rate/T per second on its own lane for `seconds`; sleeps when
// ahead of the schedule so idle time goes to the collector, never spins.
void Pace(CallLoop& loop, double rate, double seconds, unsigned threads) {
  std::vector<std::unique_ptr<CallLoop::Lane>> lanes;
  for (unsigned t = 0; t < threads; ++t) lanes.push_back(loop.NewLane());
  std::atomic<uint64_t> calls{0}, worst_late{0};
  const uint64_t start = NowNs() + 1'000'000;  // all threads start on the same schedule
  const uint64_t end = start + uint64_t(seconds * 1e9);
  const double period_ns = 1e9 * threads / rate;
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      CallLoop::Lane& lane = *lanes[t];
      uint64_t done = 0, late = 0;
      for (;;) {
        const uint64_t due = start + uint64_t(double(done) * period_ns);
        const uint64_t now = NowNs();
        // The schedule ends at `end` whether or not it was kept: a generator that falls behind
        // reports a lower rate rather than running on.
        if (due >= end || now >= end) break;
        if (now < due) {
          const timespec ts{time_t((due - now) / 1'000'000'000), long((due - now) % 1'000'000'000)};
          nanosleep(&ts, nullptr);
        } else {
          late = std::max(late, now - due);
        }
        for (uint64_t i = 0; i < kPaceBurst; ++i) CallLoop::Launch(lane);
        done += kPaceBurst;
      }
      calls += done;
      uint64_t seen = worst_late.load();
      while (late > seen && !worst_late.compare_exchange_weak(seen, late)) {
      }
    });
  }
  for (auto& w : workers) w.join();
  std::printf("paced calls=%llu ns=%llu late_ns=%llu\n", (unsigned long long)calls.load(),
              (unsigned long long)(NowNs() - start), (unsigned long long)worst_late.load());
}

int Main(int argc, char** argv) {
  set_program_name("ze_call_loop");
  if (argc == 3 && std::string(argv[1]) == "--name") {
    prctl(PR_SET_NAME, argv[2], 0, 0, 0);
  } else if (argc > 1) {
    std::fputs(kHelp, std::string(argv[1]) == "--help" ? stdout : stderr);
    return std::string(argv[1]) == "--help" ? 0 : 2;
  }
  // Sleeps in Pace are short: the default 50 µs timer slack would blur the schedule.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  CallLoop loop;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("ready %d\n", getpid());
  for (std::string line; std::getline(std::cin, line);) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    if (cmd == "quit") break;
    if (cmd == "pace") {
      double rate = 0, seconds = 0;
      unsigned threads = 1;
      in >> rate >> seconds >> threads;
      if (rate <= 0 || seconds <= 0 || threads == 0) {
        std::printf("error: pace RATE SECONDS THREADS\n");
        continue;
      }
      Pace(loop, rate, seconds, threads);
      continue;
    }
    uint64_t n = 0;
    in >> n;
    if (n == 0 || (cmd != "launch" && cmd != "copy" && cmd != "sync" && cmd != "ioctl" &&
                   cmd != "syscall")) {
      std::printf("error: unknown command '%s'\n", line.c_str());
      continue;
    }
    CallLoop::Lane& lane = loop.main_lane();
    const uint64_t t0 = NowNs(), cpu0 = ThreadCpuNs();
    if (cmd == "launch") {
      for (uint64_t i = 0; i < n; ++i) CallLoop::Launch(lane);
    } else if (cmd == "copy") {
      for (uint64_t i = 0; i < n; ++i) loop.Copy(lane);
    } else if (cmd == "ioctl") {
      for (uint64_t i = 0; i < n; ++i) loop.Ioctl();
    } else if (cmd == "syscall") {
      for (uint64_t i = 0; i < n; ++i) syscall(SYS_getppid);
    } else {
      for (uint64_t i = 0; i < n; ++i) loop.Sync();
    }
    const uint64_t cpu = ThreadCpuNs() - cpu0, elapsed = NowNs() - t0;
    std::printf("done %s calls=%llu ns=%llu cpu_ns=%llu\n", cmd.c_str(), (unsigned long long)n,
                (unsigned long long)elapsed, (unsigned long long)cpu);
  }
  return 0;
}

}  // namespace
}  // namespace xtrace::workloads

int main(int argc, char** argv) { return xtrace::workloads::Main(argc, argv); }

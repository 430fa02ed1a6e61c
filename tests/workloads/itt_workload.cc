// itt_workload: labels its work with ITT the way an application does — nested tasks,
// markers, regions, overlapping tasks and frames, from several named threads, optionally
// around Level Zero kernel launches — through whatever collector INTEL_LIBITTNOTIFY64 names,
// and logs every label it completed, so tests can compare a capture with it exactly.
#include <level_zero/ze_api.h>
#include <sys/syscall.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "control_signals.h"
#include "itt_client.h"
#include "kernel_catalog.h"
#include "workload_cli.h"
#include "ze_handles.h"
#include "ze_result.h"

namespace xtrace::workloads {
namespace {

namespace itt = xtrace::itt_client;

constexpr std::uint64_t kSyncTimeoutNs = 30'000'000'000ull;
constexpr std::uint32_t kScaleElements = 1024;

constexpr const char kHelp[] = R"(usage: itt_workload [options]

Labels work with ITT through the collector named by INTEL_LIBITTNOTIFY64 (none: every label
is skipped, as in any ITT client). Worker threads, named "xt-itt-labeller-<t>" with
__itt_thread_set_name, run rounds; each iteration of each thread does, in domain "xt.app"
unless said otherwise:
  task "xt.step" {
    task "xt.inner" { marker "xt.mark" (thread scope); [--ze: one kernel launch] }
    region "xt.region" (id: the thread's own)
    overlapped tasks "xt.overlap.a" and "xt.overlap.b" in domain "xt.overlap", begun
      a, b and ended a, b (they overlap without nesting)
    frame in domain "xt.frames"
  }

Options:
  --threads T        worker threads (default 2, 1..64)
  --iterations N     iterations per thread per round (default 3, 1..100000)
  --script STEPS     comma-separated steps run in order by the main thread: run (one round),
                     pause (__itt_pause), resume (__itt_resume), detach (__itt_detach),
                     unbalanced (see below); default "run"
  --wait-for-signal  print "ready <pid>", then run one round per SIGUSR1 until SIGTERM
  --ze               launch xt_scale_f32 through Level Zero inside every "xt.inner" task
  --end HOW          how the process ends after its script (default exit): exit (returns
                     from main), kill (SIGKILLs itself, worker threads still alive), exec
                     (replaces itself with /bin/true, worker threads still alive), threads
                     (its worker threads end, then it lives on 300 ms before it exits)
  --log FILE         append "<round>\t<tid>\t<kind>\t<domain>\t<name>" for every label
                     completed (kind: task, marker, region, overlapped_task, frame) and every
                     launch (kind launch, domain ze, name the kernel)
  --help             this text

The unbalanced step misuses ITT on purpose, in domain "xt.app", while no round runs: the main
thread ends a task it never began; begins "xt.crossed", which a helper thread then ends (an
end on a thread with nothing open); and begins "xt.open", never ended. None of it is logged.

Output on stdout, one line each, flushed: "ready <pid>" (--wait-for-signal), "round <k>"
after round k (from 1), "<step> done" after pause/resume/detach, "exit rounds=<r>".
)";

struct Options {
  std::uint64_t threads = 2;
  std::uint64_t iterations = 3;
  std::vector<std::string> script{"run"};
  bool wait_for_signal = false;
  bool ze = false;
  std::string end = "exit";
  std::string log;
};

std::vector<std::string> SplitSteps(std::string_view text) {
  std::vector<std::string> steps;
  for (size_t pos = 0; pos <= text.size();) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string step(text.substr(pos, comma - pos));
    if (step != "run" && step != "pause" && step != "resume" && step != "detach" &&
        step != "unbalanced")
      usage_error("--script: unknown step \"" + step +
                  "\" (run, pause, resume, detach, unbalanced)");
    steps.push_back(step);
    pos = comma + 1;
  }
  return steps;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    } else if (arg == "--threads") {
      o.threads = parse_count(arg, option_value(argc, argv, i), 1, 64);
    } else if (arg == "--iterations") {
      o.iterations = parse_count(arg, option_value(argc, argv, i), 1, 100'000);
    } else if (arg == "--script") {
      o.script = SplitSteps(option_value(argc, argv, i));
    } else if (arg == "--wait-for-signal") {
      o.wait_for_signal = true;
    } else if (arg == "--ze") {
      o.ze = true;
    } else if (arg == "--end") {
      o.end = option_value(argc, argv, i);
      if (o.end != "exit" && o.end != "kill" && o.end != "exec" && o.end != "threads")
        usage_error("--end: unknown way to end \"" + o.end + "\" (exit, kill, exec, threads)");
    } else if (arg == "--log") {
      o.log = option_value(argc, argv, i);
      if (o.log.empty()) usage_error("--log: empty file name");
    } else {
      usage_error("unknown argument \"" + std::string(arg) + "\"");
    }
  }
  return o;
}

std::uint32_t Tid() { return static_cast<std::uint32_t>(syscall(SYS_gettid)); }

// The workload's own record of what it labelled, appended with one write(2) per line.
class LabelLog {
 public:
  explicit LabelLog(const std::string& path) {
    if (path.empty()) return;
    fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) usage_error("--log: cannot open \"" + path + "\": " + std::strerror(errno));
  }
  ~LabelLog() {
    if (fd_ >= 0) close(fd_);
  }
  void Add(std::uint64_t round, std::string_view kind, std::string_view domain,
           std::string_view name) {
    if (fd_ < 0) return;
    const std::string line = std::to_string(round) + '\t' + std::to_string(Tid()) + '\t' +
                             std::string(kind) + '\t' + std::string(domain) + '\t' +
                             std::string(name) + '\n';
    std::lock_guard lock(mutex_);
    if (write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      std::perror("itt_workload: writing the log");
  }

 private:
  int fd_ = -1;
  std::mutex mutex_;
};

// The labels, created once and shared by every thread, as a library keeps them in globals.
struct Labels {
  itt::Domain* app = itt::DomainCreate("xt.app");
  itt::Domain* overlap = itt::DomainCreate("xt.overlap");
  itt::Domain* frames = itt::DomainCreate("xt.frames");
  itt::StringHandle* step = itt::StringHandleCreate("xt.step");
  itt::StringHandle* inner = itt::StringHandleCreate("xt.inner");
  itt::StringHandle* mark = itt::StringHandleCreate("xt.mark");
  itt::StringHandle* region = itt::StringHandleCreate("xt.region");
  itt::StringHandle* overlap_a = itt::StringHandleCreate("xt.overlap.a");
  itt::StringHandle* overlap_b = itt::StringHandleCreate("xt.overlap.b");
};

// Level Zero, process-wide: the first GPU, a context and the simulated-GPU module.
class Gpu {
 public:
  Gpu() {
    ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    std::uint32_t count = 1;
    ZE_CHECK(zeDriverGet(&count, &driver_));
    count = 1;
    ZE_CHECK(zeDeviceGet(driver_, &count, &device_));
    ze_context_desc_t context_desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ZE_CHECK(zeContextCreate(driver_, &context_desc, context_.out()));
    const std::string text = simulated_module_text();
    ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_NATIVE,
                          text.size(), reinterpret_cast<const std::uint8_t*>(text.data()),
                          "", nullptr};
    ZE_CHECK(zeModuleCreate(context_.get(), device_, &desc, module_.out(), nullptr));
  }
  ze_context_handle_t context() const { return context_.get(); }
  ze_device_handle_t device() const { return device_; }
  ze_module_handle_t module() const { return module_.get(); }

 private:
  ze_driver_handle_t driver_ = nullptr;
  ze_device_handle_t device_ = nullptr;
  ZeContext context_;
  ZeModule module_;
};

// One thread's launcher: its kernel, immediate command list, event and buffer.
class Launcher {
 public:
  explicit Launcher(const Gpu& gpu) {
    const KernelSpec& spec = kernel_spec(Kernel::kScale);
    ze_kernel_desc_t kdesc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, spec.name.c_str()};
    ZE_CHECK(zeKernelCreate(gpu.module(), &kdesc, kernel_.out()));
    ZE_CHECK(zeKernelSetGroupSize(kernel_.get(), 64, 1, 1));
    ze_command_queue_desc_t qdesc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0,
                                  ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                  ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ZE_CHECK(zeCommandListCreateImmediate(gpu.context(), gpu.device(), &qdesc, list_.out()));
    ze_event_pool_desc_t pdesc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                               ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_device_handle_t devices[] = {gpu.device()};
    ZE_CHECK(zeEventPoolCreate(gpu.context(), &pdesc, 1, devices, pool_.out()));
    ze_event_desc_t edesc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                          ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(pool_.get(), &edesc, done_.out()));
    buffer_ = ZeMemory::device(gpu.context(), gpu.device(), kScaleElements * sizeof(float));
  }

  // Launches the kernel and waits for it; returns its name.
  const std::string& Launch() {
    void* data = buffer_.get();
    const float factor = 2.0f;
    const std::uint32_t n = kScaleElements;
    ZE_CHECK(zeKernelSetArgumentValue(kernel_.get(), 0, sizeof(data), &data));
    ZE_CHECK(zeKernelSetArgumentValue(kernel_.get(), 1, sizeof(factor), &factor));
    ZE_CHECK(zeKernelSetArgumentValue(kernel_.get(), 2, sizeof(n), &n));
    ze_group_count_t groups{n / 64, 1, 1};
    ZE_CHECK(zeCommandListAppendLaunchKernel(list_.get(), kernel_.get(), &groups, done_.get(), 0,
                                             nullptr));
    ZE_CHECK(zeEventHostSynchronize(done_.get(), kSyncTimeoutNs));
    ZE_CHECK(zeEventHostReset(done_.get()));
    return kernel_spec(Kernel::kScale).name;
  }

 private:
  ZeKernel kernel_;
  ZeList list_;
  ZeEventPool pool_;
  ZeEvent done_;
  ZeMemory buffer_;
};

void RunIteration(const Labels& l, LabelLog& log, std::uint64_t round, std::uint64_t iteration,
                  Launcher* launcher) {
  int anchor = 0;  // its address makes this thread's ids unique
  itt::TaskBegin(l.app, l.step);
  itt::TaskBegin(l.app, l.inner);
  itt::Marker(l.app, l.mark, itt::kScopeThread);
  log.Add(round, "marker", "xt.app", "xt.mark");
  if (launcher) log.Add(round, "launch", "ze", launcher->Launch());
  itt::TaskEnd(l.app);
  log.Add(round, "task", "xt.app", "xt.inner");

  itt::Id region = itt::MakeId(&anchor, iteration);
  itt::RegionBegin(l.app, region, l.region);
  itt::RegionEnd(l.app, region);
  log.Add(round, "region", "xt.app", "xt.region");

  itt::Id a = itt::MakeId(&anchor, 2 * iteration), b = itt::MakeId(&anchor, 2 * iteration + 1);
  itt::TaskBeginOverlapped(l.overlap, a, l.overlap_a);
  itt::TaskBeginOverlapped(l.overlap, b, l.overlap_b);
  itt::TaskEndOverlapped(l.overlap, a);
  log.Add(round, "overlapped_task", "xt.overlap", "xt.overlap.a");
  itt::TaskEndOverlapped(l.overlap, b);
  log.Add(round, "overlapped_task", "xt.overlap", "xt.overlap.b");

  itt::Id frame = itt::MakeId(&anchor, iteration);
  itt::FrameBegin(l.frames, &frame);
  itt::FrameEnd(l.frames, &frame);
  log.Add(round, "frame", "xt.frames", "");
  itt::TaskEnd(l.app);
  log.Add(round, "task", "xt.app", "xt.step");
}

// Worker threads that persist across rounds (stable tids, named once), started together for
// each round and waited for by the main thread.
class Workers {
 public:
  Workers(const Options& options, const Labels& labels, LabelLog& log, const Gpu* gpu)
      : options_(options), labels_(labels), log_(log), gpu_(gpu) {
    for (std::uint64_t t = 0; t < options.threads; ++t) threads_.emplace_back([this, t] { Run(t); });
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return ready_ == options_.threads; });
  }
  ~Workers() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void RunRound(std::uint64_t round) {
    std::unique_lock lock(mutex_);
    round_ = round;
    pending_ = options_.threads;
    changed_.notify_all();
    changed_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  void Run(std::uint64_t index) {
    const std::string name = "xt-itt-labeller-" + std::to_string(index);
    itt::ThreadSetName(name.c_str());
    std::unique_ptr<Launcher> launcher;
    if (gpu_) launcher = std::make_unique<Launcher>(*gpu_);
    std::uint64_t done = 0;
    std::unique_lock lock(mutex_);
    ++ready_;
    changed_.notify_all();
    for (;;) {
      changed_.wait(lock, [&] { return stopping_ || round_ > done; });
      if (stopping_) return;
      const std::uint64_t round = round_;
      lock.unlock();
      for (std::uint64_t i = 0; i < options_.iterations; ++i)
        RunIteration(labels_, log_, round, i, launcher.get());
      lock.lock();
      done = round;
      if (--pending_ == 0) changed_.notify_all();
    }
  }

  const Options& options_;
  const Labels& labels_;
  LabelLog& log_;
  const Gpu* gpu_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t ready_ = 0, round_ = 0, pending_ = 0;
  bool stopping_ = false;
};

// The "unbalanced" step (see kHelp).
void MisuseItt(const Labels& l) {
  itt::TaskEnd(l.app);
  itt::StringHandle* crossed = itt::StringHandleCreate("xt.crossed");
  itt::TaskBegin(l.app, crossed);
  std::thread([&] { itt::TaskEnd(l.app); }).join();
  itt::TaskBegin(l.app, itt::StringHandleCreate("xt.open"));
}

int Main(int argc, char** argv) {
  set_program_name("itt_workload");
  block_control_signals();
  const Options options = ParseOptions(argc, argv);
  if (const std::string& why = itt::Initialize(); !why.empty())
    std::fprintf(stderr, "itt_workload: no ITT collector (%s): labels are skipped\n", why.c_str());
  const Labels labels;
  LabelLog log(options.log);
  std::unique_ptr<Gpu> gpu;
  if (options.ze) gpu = std::make_unique<Gpu>();
  auto workers = std::make_unique<Workers>(options, labels, log, gpu.get());

  std::uint64_t rounds = 0;
  auto run_round = [&] {
    workers->RunRound(++rounds);
    std::printf("round %llu\n", static_cast<unsigned long long>(rounds));
    std::fflush(stdout);
  };
  if (options.wait_for_signal) {
    std::printf("ready %d\n", getpid());
    std::fflush(stdout);
    while (wait_control_signal(std::nullopt) == ControlSignal::kRound) run_round();
  } else {
    for (const std::string& step : options.script) {
      if (step == "run") {
        run_round();
        continue;
      }
      if (step == "pause") itt::Pause();
      if (step == "resume") itt::Resume();
      if (step == "detach") itt::Detach();
      if (step == "unbalanced") MisuseItt(labels);
      std::printf("%s done\n", step.c_str());
      std::fflush(stdout);
    }
  }
  std::printf("exit rounds=%llu\n", static_cast<unsigned long long>(rounds));
  std::fflush(stdout);
  if (options.end == "kill") raise(SIGKILL);
  if (options.end == "exec") {
    execl("/bin/true", "true", static_cast<char*>(nullptr));
    std::fprintf(stderr, "itt_workload: exec /bin/true: %s\n", std::strerror(errno));
    return 1;
  }
  if (options.end == "threads") {
    workers.reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  return 0;
}

}  // namespace
}  // namespace xtrace::workloads

int main(int argc, char** argv) { return xtrace::workloads::Main(argc, argv); }

// torch_range_workload: calls PyTorch's ITT range functions the way emit_itt() does — a push
// before every operator and a pop after it, nested as operators nest, and itt_mark for
// markers — from several threads, in a library loaded at run time (as `import torch` loads
// libtorch), and logs every range and mark so tests can compare a capture with it exactly.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "control_signals.h"
#include "workload_cli.h"
#include "ze_result.h"

namespace xtrace::workloads {
namespace {

constexpr const char kHelp[] = R"(usage: torch_range_workload --library PATH [options]

Loads PATH (a library exporting torch::profiler::itt_range_push/itt_range_pop/itt_mark) with
dlopen and, per thread and iteration, runs a "forward" range enclosing the operator ranges
  aten::linear { aten::addmm }, aten::relu, aten::layer_norm { aten::native_layer_norm },
  aten::conv<i%3> (a name built afresh each call), and a 700-character operator name,
then marks "xt.step" (skipped if the library has no itt_mark).

Options:
  --library PATH     the library (required)
  --threads T        threads (default 2, 1..64)
  --iterations N     iterations per thread per round (default 3, 1..100000)
  --rounds R         rounds to run (default 1, 1..1000)
  --wait-for-signal  print "ready <pid>", then run one round per SIGUSR1 until SIGTERM
  --log FILE         append "<round>\t<tid>\t<kind>\t<name>" per completed range (kind task)
                     or mark (kind marker)
Output: "ready <pid>" (with --wait-for-signal), "round <k>", "exit rounds=<r>".
)";

using PushFn = void (*)(const char*);
using PopFn = void (*)();

struct Api {
  PushFn push = nullptr;
  PopFn pop = nullptr;
  PushFn mark = nullptr;
};

std::uint32_t Tid() { return static_cast<std::uint32_t>(syscall(SYS_gettid)); }

class RangeLog {
 public:
  explicit RangeLog(const std::string& path) {
    if (path.empty()) return;
    fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) usage_error("--log: cannot open \"" + path + "\": " + std::strerror(errno));
  }
  ~RangeLog() {
    if (fd_ >= 0) close(fd_);
  }
  void Add(std::uint64_t round, std::string_view kind, std::string_view name) {
    if (fd_ < 0) return;
    const std::string line = std::to_string(round) + '\t' + std::to_string(Tid()) + '\t' +
                             std::string(kind) + '\t' + std::string(name) + '\n';
    std::lock_guard lock(mutex_);
    if (write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      std::perror("torch_range_workload: writing the log");
  }

 private:
  int fd_ = -1;
  std::mutex mutex_;
};

// One operator: push, children, pop; logged when it ends (as a span is complete then).
void Op(const Api& api, RangeLog& log, std::uint64_t round, const std::string& name,
        const std::vector<std::string>& children = {}) {
  api.push(name.c_str());
  for (const std::string& child : children) Op(api, log, round, child);
  api.pop();
  log.Add(round, "task", name);
}

void RunThread(const Api& api, RangeLog& log, std::uint64_t round, std::uint64_t iterations) {
  const std::string long_name = "aten::" + std::string(694, 'x');
  for (std::uint64_t i = 0; i < iterations; ++i) {
    api.push("forward");
    Op(api, log, round, "aten::linear", {"aten::addmm"});
    Op(api, log, round, "aten::relu");
    Op(api, log, round, "aten::layer_norm", {"aten::native_layer_norm"});
    Op(api, log, round, "aten::conv" + std::to_string(i % 3));
    Op(api, log, round, long_name);
    api.pop();
    log.Add(round, "task", "forward");
    if (api.mark) {
      api.mark("xt.step");
      log.Add(round, "marker", "xt.step");
    }
  }
}

int Main(int argc, char** argv) {
  set_program_name("torch_range_workload");
  block_control_signals();
  std::string library, log_path;
  std::uint64_t threads = 2, iterations = 3, rounds = 1;
  bool wait_for_signal = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    } else if (arg == "--library") {
      library = option_value(argc, argv, i);
    } else if (arg == "--threads") {
      threads = parse_count(arg, option_value(argc, argv, i), 1, 64);
    } else if (arg == "--iterations") {
      iterations = parse_count(arg, option_value(argc, argv, i), 1, 100'000);
    } else if (arg == "--rounds") {
      rounds = parse_count(arg, option_value(argc, argv, i), 1, 1000);
    } else if (arg == "--wait-for-signal") {
      wait_for_signal = true;
    } else if (arg == "--log") {
      log_path = option_value(argc, argv, i);
    } else {
      usage_error("unknown argument \"" + std::string(arg) + "\"");
    }
  }
  if (library.empty()) usage_error("--library is required");
  void* lib = dlopen(library.c_str(), RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "torch_range_workload: %s\n", dlerror());
    return 1;
  }
  Api api;
  api.push = reinterpret_cast<PushFn>(dlsym(lib, "_ZN5torch8profiler14itt_range_pushEPKc"));
  api.pop = reinterpret_cast<PopFn>(dlsym(lib, "_ZN5torch8profiler13itt_range_popEv"));
  api.mark = reinterpret_cast<PushFn>(dlsym(lib, "_ZN5torch8profiler8itt_markEPKc"));
  if (!api.push || !api.pop) {
    std::fprintf(stderr, "torch_range_workload: %s lacks itt_range_push/pop\n", library.c_str());
    return 1;
  }
  if (!api.mark) std::fprintf(stderr, "torch_range_workload: no itt_mark in %s: marks skipped\n", library.c_str());
  RangeLog log(log_path);

  std::uint64_t done = 0;
  auto run_round = [&] {
    ++done;
    std::vector<std::thread> workers;
    for (std::uint64_t t = 0; t < threads; ++t)
      workers.emplace_back([&] { RunThread(api, log, done, iterations); });
    for (auto& w : workers) w.join();
    std::printf("round %llu\n", static_cast<unsigned long long>(done));
    std::fflush(stdout);
  };
  if (wait_for_signal) {
    std::printf("ready %d\n", getpid());
    std::fflush(stdout);
    while (wait_control_signal(std::nullopt) == ControlSignal::kRound) run_round();
  } else {
    for (std::uint64_t r = 0; r < rounds; ++r) run_round();
  }
  std::printf("exit rounds=%llu\n", static_cast<unsigned long long>(done));
  std::fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace xtrace::workloads

int main(int argc, char** argv) { return xtrace::workloads::Main(argc, argv); }

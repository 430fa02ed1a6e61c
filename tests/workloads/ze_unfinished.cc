// ze_unfinished: threads that never return from a Level Zero call, for tests of how the tracer
// shows a call whose thread ended inside it. Each waiter blocks in zeEventHostSynchronize on
// an event nothing signals; then the waiters end inside that call in the way asked.
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "workload_cli.h"
#include "ze_result.h"

namespace xtrace::workloads {
namespace {

constexpr const char kHelp[] = R"(usage: ze_unfinished [--end thread|exit|kill|never] [--waiters N]

Sets up Level Zero (zeInit, a device, a context, a host-visible event pool and one event),
starts N waiter threads (default 1) that each print "waiting <tid>" and block in
zeEventHostSynchronize(event, UINT64_MAX) on the event, which nothing signals, waits 300 ms
so that they are inside the call, and then ends them there:
  thread  each waiter exits alone (a raw exit(2) from a signal handler, as a thread
          cancelled inside a call would); the process goes on, prints "alone <N>",
          makes one more call (zeEventQueryStatus) and exits 0 (the default)
  exit    the main thread exits the process (exit_group(2)) with status 0
  kill    the process is killed with SIGKILL
  never   they stay in the call: the process prints "blocked <N>" and waits for SIGTERM
          or SIGINT, then exits 0

Example:
  ZE_ENABLE_ALT_DRIVERS=$PWD/build/lib/libxtrace_simze.so build/bin/ze_unfinished --end kill
)";

enum class End { kThread, kExit, kKill, kNever };

extern "C" void ExitThisThread(int) { syscall(SYS_exit, 0); }

std::atomic<int> g_waiting{0};

void Wait(ze_event_handle_t event) {
  // The signal that ends this thread alone is delivered to it only.
  sigset_t usr2;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  pthread_sigmask(SIG_UNBLOCK, &usr2, nullptr);
  std::printf("waiting %ld\n", static_cast<long>(syscall(SYS_gettid)));
  std::fflush(stdout);
  g_waiting.fetch_add(1);
  const ze_result_t r = zeEventHostSynchronize(event, UINT64_MAX);
  std::fprintf(stderr, "%s: zeEventHostSynchronize returned 0x%x\n", program_name(), r);
  std::_Exit(1);  // it never should
}

}  // namespace
}  // namespace xtrace::workloads

int main(int argc, char** argv) {
  using namespace xtrace::workloads;
  set_program_name(argv[0]);
  End end = End::kThread;
  unsigned waiters = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    } else if (arg == "--end") {
      const std::string_view how = option_value(argc, argv, i);
      if (how == "thread") end = End::kThread;
      else if (how == "exit") end = End::kExit;
      else if (how == "kill") end = End::kKill;
      else if (how == "never") end = End::kNever;
      else usage_error("--end: \"" + std::string(how) + "\" is not thread, exit, kill or never");
    } else if (arg == "--waiters") {
      waiters = static_cast<unsigned>(parse_count(arg, option_value(argc, argv, i), 1, 64));
    } else {
      usage_error("unknown argument \"" + std::string(arg) + "\"");
    }
  }
  // Every thread starts with SIGUSR2 blocked (each waiter unblocks it for itself), and with
  // SIGTERM and SIGINT blocked: the main thread waits for them with sigwait.
  sigset_t usr2, stop;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &usr2, nullptr);
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  struct sigaction exit_thread {};
  exit_thread.sa_handler = ExitThisThread;
  sigaction(SIGUSR2, &exit_thread, nullptr);

  ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
  uint32_t count = 1;
  ze_driver_handle_t driver = nullptr;
  ZE_CHECK(zeDriverGet(&count, &driver));
  count = 1;
  ze_device_handle_t device = nullptr;
  ZE_CHECK(zeDeviceGet(driver, &count, &device));
  if (count == 0) {
    std::fprintf(stderr, "%s: no Level Zero device\n", program_name());
    return 1;
  }
  ze_context_desc_t context_desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  ze_context_handle_t context = nullptr;
  ZE_CHECK(zeContextCreate(driver, &context_desc, &context));
  ze_event_pool_desc_t pool_desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                 ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
  ze_event_pool_handle_t pool = nullptr;
  ZE_CHECK(zeEventPoolCreate(context, &pool_desc, 1, &device, &pool));
  ze_event_desc_t event_desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                             ZE_EVENT_SCOPE_FLAG_HOST};
  ze_event_handle_t event = nullptr;
  ZE_CHECK(zeEventCreate(pool, &event_desc, &event));

  std::vector<std::thread> threads;
  for (unsigned i = 0; i < waiters; ++i) threads.emplace_back(Wait, event);
  while (g_waiting.load() < static_cast<int>(waiters))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // inside the call by now

  switch (end) {
    case End::kNever: {
      std::printf("blocked %u\n", waiters);
      std::fflush(stdout);
      int sig = 0;
      sigwait(&stop, &sig);
      break;
    }
    case End::kKill:
      raise(SIGKILL);
      break;
    case End::kExit:
      std::fflush(stdout);
      _exit(0);
    case End::kThread:
      for (std::thread& t : threads) {
        pthread_kill(t.native_handle(), SIGUSR2);
        t.join();  // the raw exit clears the thread id and wakes the join
      }
      std::printf("alone %u\n", waiters);
      std::fflush(stdout);
      if (const ze_result_t r = zeEventQueryStatus(event); r != ZE_RESULT_NOT_READY)
        ze_fail("zeEventQueryStatus", r);
      break;
  }
  // The dead waiters' objects are left to the process's end.
  std::fflush(stdout);
  _exit(0);
}

// ze_workload's command line (ze_workload_options.h).
#include "ze_workload_options.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

#include "workload_cli.h"

namespace xtrace::workloads {
namespace {

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
  --queue-index N      create each thread's queue and immediate list at index N of the
                       compute group (default 0, 0..3: the simulated GPU has four engines)
  --record-once        record the regular list once, before "ready" (with i = 0), and only
                       execute it in every iteration, as a runtime replaying a graph does: a
                       tracer attached after "ready" never sees what it holds (its launches
                       are not in the launch log, nor counted in "launches=")
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

}  // namespace

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
    } else if (arg == "--queue-index") {
      o.queue_index = static_cast<std::uint32_t>(parse_count(arg, option_value(argc, argv, i), 0, 3));
    } else if (arg == "--record-once") {
      o.record_once = true;
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


}  // namespace xtrace::workloads

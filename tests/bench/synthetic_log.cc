// The synthetic launch-heavy log: a fixed cast of processes, threads and kernels, then
// launches drawn from them with a deterministic generator.
#include "synthetic_log.h"

#include <time.h>

#include <random>
#include <vector>

#include "log/log_reader.h"
#include "log/log_writer.h"
#include "model/event.h"

namespace xtrace::bench {
namespace {

constexpr int kProcesses = 2;
constexpr int kThreadsPerProcess = 4;
constexpr int kKernelsPerThread = 6;
constexpr int kListsPerThread = 2;
constexpr int kSignalEvents = 64;

struct Thread {
  uint32_t pid, tid;
  std::vector<uint64_t> kernels;
  std::vector<StringId> kernel_names;
  std::vector<uint64_t> lists;
};

std::string KernelName(int k) {
  if (k % 3 != 0) return "xt_kernel_" + std::to_string(k) + "_f32";
  std::string name = "void xt::gemm<xt::dtype::bf16, xt::tile_shape<256, 128, 32>, xt::pipeline<";
  for (int i = 0; name.size() < 1000; ++i)
    name += "xt::stage<" + std::to_string(i) + ", xt::copy_op<xt::global_to_slm>>, ";
  return name + ">>(" + std::to_string(k) + ")";
}

}  // namespace

Status WriteSyntheticLaunchLog(const std::string& path, uint64_t events, bool device_ops) {
  LogHeader header;
  header.xtrace_version = "bench";
  header.host = "bench";
  header.command_line = "xtrace_bench synthetic log";
  auto writer = LogWriter::Create(path, header);
  if (!writer.ok()) return writer.status();
  LogWriter& w = **writer;
  StringTable& strings = w.strings();

  std::mt19937_64 rng(42);
  uint64_t now = 1'000'000'000'000ull;
  uint64_t written = 0;
  auto append = [&](const Event& e) {
    if (written < events) w.Append(e);
    ++written;
  };

  std::vector<Thread> threads;
  uint64_t handle = 0x55d0c0a3e000ull;
  for (int p = 0; p < kProcesses; ++p) {
    const uint32_t pid = 4000 + 100 * p;
    append(ProcessInfo{pid, pid, strings.Intern("python3"),
                       strings.Intern("python3 train.py --model bench --steps 100000")});
    for (int t = 0; t < kThreadsPerProcess; ++t) {
      Thread th{pid, pid + 1 + t, {}, {}, {}};
      append(ThreadInfo{th.pid, th.tid, strings.Intern("worker-" + std::to_string(t))});
      for (int k = 0; k < kKernelsPerThread; ++k) {
        handle += 0x1a40;
        KernelCreate c;
        c.pid = th.pid, c.tid = th.tid, c.start_ns = now, c.end_ns = now + 2000;
        c.module = 0x55d0c0a10000ull, c.kernel = handle;
        // Every thread's kernels are its own: 48 distinct names, 16 of them long.
        c.name = strings.Intern(KernelName((p * kThreadsPerProcess + t) * kKernelsPerThread + k));
        append(c);
        th.kernels.push_back(handle);
        th.kernel_names.push_back(c.name);
        now += 3000;
      }
      for (int l = 0; l < kListsPerThread; ++l) th.lists.push_back(handle += 0x8c0);
      threads.push_back(std::move(th));
    }
  }
  std::vector<uint64_t> signal_events;
  for (int e = 0; e < kSignalEvents; ++e) signal_events.push_back(0x55d0c1f00000ull + 0x80 * e);

  while (written < events) {
    const Thread& th = threads[rng() % threads.size()];
    const size_t k = rng() % th.kernels.size();
    KernelLaunch l;
    l.pid = th.pid, l.tid = th.tid;
    now += 600 + rng() % 900;
    l.start_ns = now;
    l.end_ns = now + 150 + rng() % 400;
    l.command_list = th.lists[rng() % th.lists.size()];
    l.kernel = th.kernels[k];
    l.signal_event = rng() % 4 == 0 ? signal_events[rng() % signal_events.size()] : 0;
    l.group_count[0] = 1u << (rng() % 12);
    l.group_count[1] = 1 + rng() % 4;
    l.group_count[2] = 1;
    l.num_wait_events = l.signal_event ? 1 : 0;
    l.kernel_name = th.kernel_names[k];
    l.name_known = true;
    append(l);
    if (device_ops) {
      DeviceOp op;
      op.pid = th.pid;
      op.device = 0;
      op.queue = th.lists[0];
      op.command_list = l.command_list;
      op.id = written;
      op.name = l.kernel_name;
      op.kernel = l.kernel;
      op.measured = rng() % 4 != 0;
      op.append_tid = op.submit_tid = th.tid;
      op.append_ns = op.submit_ns = l.start_ns;
      op.start_ns = l.end_ns + 2000 + rng() % 3000;
      op.end_ns = op.start_ns + 500 + rng() % 20000;
      op.sync_tid = th.tid;
      op.sync_ns = rng() % 8 == 0 ? op.end_ns + 1000 : 0;
      append(op);
    }
  }
  LogSummary summary;
  summary.events = events;
  summary.processes = kProcesses;
  return w.Finish(summary);
}

namespace {
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
}  // namespace

Result<LogReadRun> TimeLogRead(const std::string& path) {
  const double start = ThreadCpuSeconds();
  auto reader = LogReader::Open(path);
  if (!reader.ok()) return reader.status();
  LogReadRun run;
  while (true) {
    Result<const Event*> more = reader->NextEvent();
    if (!more.ok()) return more.status();
    if (!*more) break;
    ++run.events;
  }
  run.cpu_seconds = ThreadCpuSeconds() - start;
  return run;
}

}  // namespace xtrace::bench

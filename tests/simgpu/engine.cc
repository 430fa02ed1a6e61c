// Queue worker implementation: in-order execution of submitted command lists with real
// durations, device-clock timestamps, event/fence signalling and ground-truth records.
#include "engine.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>

#include "config.h"
#include "ground_truth.h"
#include "objects.h"
#include "precise_wait.h"
#include "sync.h"

namespace simze {
namespace {

std::atomic<uint64_t> submission_counter{0};

// Live engines, so process exit can stop them before the library's code goes away.
std::mutex& registry_mutex() {
  static std::mutex* const m = new std::mutex;
  return *m;
}
std::set<Engine*>& registry() {
  static std::set<Engine*>* const s = new std::set<Engine*>;
  return *s;
}

// Copies take the time the simulated link needs (at least what memcpy really took).
uint64_t copy_duration_ns(uint64_t bytes) {
  double gbps = config().copy_gbps;
  if (gbps <= 0.0) return 0;
  return static_cast<uint64_t>(static_cast<double>(bytes) / gbps);  // GB/s == bytes/ns
}

void signal_event(Event* e, uint64_t start_ticks, uint64_t end_ticks) {
  if (e == nullptr) return;
  sync::publish([&] {
    e->start_ticks = start_ticks;
    e->end_ticks = end_ticks;
    e->has_timestamps = true;
    e->signaled.store(true);
  });
}

}  // namespace

uint64_t next_submission_number() { return submission_counter.fetch_add(1) + 1; }

Engine::Engine(const DeviceClock& clock, uint32_t device_index, uintptr_t queue_handle)
    : clock_(clock), device_index_(device_index), queue_handle_(queue_handle) {
  {
    std::lock_guard lock(registry_mutex());
    registry().insert(this);
  }
  worker_ = std::thread([this] { run(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(registry_mutex());
    registry().erase(this);
  }
  stop(/*abort_running=*/false);
}

void Engine::stop(bool abort_running) {
  sync::publish([&] {
    stopping_ = true;
    if (abort_running) aborting_.store(true);
  });
  if (worker_.joinable()) worker_.join();
}

void Engine::shutdown_all() {
  std::lock_guard lock(registry_mutex());
  for (Engine* e : registry()) e->stop(/*abort_running=*/true);
  registry().clear();
}

void Engine::submit(Batch batch) {
  sync::publish([&] {
    ++submitted_;
    pending_.push_back(std::move(batch));
  });
}

bool Engine::wait_idle(uint64_t timeout_ns) {
  uint64_t target = 0;
  {
    std::lock_guard lock(sync::mutex());
    target = submitted_;
  }
  return sync::wait(timeout_ns, [&] { return completed_ >= target; });
}

void Engine::run() {
  make_thread_timing_precise();
  for (;;) {
    Batch batch;
    {
      std::unique_lock lock(sync::mutex());
      sync::changed().wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty() || aborting_.load()) return;  // stopping and drained, or aborting
      batch = std::move(pending_.front());
      pending_.pop_front();
    }
    if (!run_batch(batch)) return;
    sync::publish([&] {
      if (batch.fence != nullptr) batch.fence->signaled.store(true);
      ++completed_;
    });
  }
}

bool Engine::run_batch(const Batch& batch) {
  for (const auto& rec : batch.recordings) {
    for (const Command& cmd : rec->commands) {
      if (!run_command(batch, *rec, cmd)) return false;
    }
  }
  return true;
}

bool Engine::run_command(const Batch& batch, const Recording& rec, const Command& cmd) {
  if (!cmd.waits.empty()) {
    // A stopping engine gives up on waits: nobody may ever signal those events.
    sync::wait(UINT64_MAX, [&] {
      return stopping_ || std::all_of(cmd.waits.begin(), cmd.waits.end(),
                                      [](const Event* e) { return e->signaled.load(); });
    });
    bool all = std::all_of(cmd.waits.begin(), cmd.waits.end(),
                           [](const Event* e) { return e->signaled.load(); });
    if (!all) return false;
  }
  if (aborting_.load()) return false;

  // Holds the engine busy until `from + duration` of real time.
  auto occupy = [&](const HostInstant& from, uint64_t duration_ns) {
    wait_until_raw(from.raw_ns + duration_ns, &aborting_);
  };
  const HostInstant start = sample_host();
  const uint64_t start_ticks = clock_.ticks_at(start.raw_ns);
  std::string_view kind;
  std::string_view name;
  uint64_t bytes = 0;

  std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, LaunchKernel>) {
          kind = "kernel";
          name = body.kernel->name;
          occupy(start, body.kernel->duration_ns);
        } else if constexpr (std::is_same_v<T, LaunchMultipleKernels>) {
          // Several kernels in one command: one ground-truth line each, back to back.
          uint32_t n = std::min<uint32_t>(*body.count, static_cast<uint32_t>(body.kernels.size()));
          HostInstant k_start = start;
          for (uint32_t i = 0; i < n; ++i) {
            occupy(k_start, body.kernels[i]->duration_ns);
            HostInstant k_end = sample_host();
            ground_truth_write({"kernel", body.kernels[i]->name, k_start, k_end,
                                clock_.ticks_at(k_start.raw_ns), clock_.ticks_at(k_end.raw_ns),
                                queue_handle_, batch.submission, device_index_, rec.list_handle,
                                batch.submit_mono_ns, batch.submit_tid, 0});
            k_start = k_end;
          }
        } else if constexpr (std::is_same_v<T, MemoryCopy>) {
          kind = "copy";
          name = body.api;
          bytes = body.size;
          if (body.size > 0) std::memmove(body.dst, body.src, body.size);
          occupy(start, copy_duration_ns(bytes));
        } else if constexpr (std::is_same_v<T, MemoryCopyRegion>) {
          kind = "copy_region";
          name = "zeCommandListAppendMemoryCopyRegion";
          const ze_copy_region_t& d = body.dst_region;
          const ze_copy_region_t& s = body.src_region;
          uint32_t depth = std::max(1u, d.depth);
          for (uint32_t z = 0; z < depth; ++z) {
            for (uint32_t y = 0; y < d.height; ++y) {
              auto* dst = static_cast<uint8_t*>(body.dst) +
                          uint64_t{d.originZ + z} * body.dst_slice_pitch +
                          uint64_t{d.originY + y} * body.dst_pitch + d.originX;
              auto* src = static_cast<const uint8_t*>(body.src) +
                          uint64_t{s.originZ + z} * body.src_slice_pitch +
                          uint64_t{s.originY + y} * body.src_pitch + s.originX;
              std::memmove(dst, src, d.width);
            }
          }
          bytes = uint64_t{d.width} * d.height * depth;
          occupy(start, copy_duration_ns(bytes));
        } else if constexpr (std::is_same_v<T, MemoryFill>) {
          kind = "fill";
          name = "zeCommandListAppendMemoryFill";
          bytes = body.size;
          auto* dst = static_cast<uint8_t*>(body.dst);
          const size_t p = body.pattern.size();
          if (p == 1) {
            std::memset(dst, body.pattern[0], body.size);
          } else {
            for (size_t off = 0; off < body.size; off += p) {
              std::memcpy(dst + off, body.pattern.data(), std::min(p, body.size - off));
            }
          }
          occupy(start, copy_duration_ns(bytes));
        } else if constexpr (std::is_same_v<T, ResetEvent>) {
          sync::publish([&] {
            body.event->signaled.store(false);
            body.event->has_timestamps = false;
          });
        } else if constexpr (std::is_same_v<T, HostFunction>) {
          kind = "host_function";
          name = "zeCommandListAppendHostFunction";
          body.function(body.user_data);
        } else if constexpr (std::is_same_v<T, WriteGlobalTimestamp>) {
          *body.dst = clock_.now();  // timestampValidBits = 64: the full counter
        } else if constexpr (std::is_same_v<T, QueryKernelTimestamps>) {
          std::lock_guard lock(sync::mutex());
          auto* base = static_cast<uint8_t*>(body.dst);
          for (size_t i = 0; i < body.events.size(); ++i) {
            size_t off = body.offsets.empty() ? i * sizeof(ze_kernel_timestamp_result_t)
                                              : body.offsets[i];
            ze_kernel_timestamp_result_t r = body.events[i]->kernel_timestamp();
            std::memcpy(base + off, &r, sizeof r);
          }
        }
        // Barrier, SignalEvent: nothing to do beyond waits and the signal below.
      },
      cmd.body);

  const HostInstant end = sample_host();
  const uint64_t end_ticks = clock_.ticks_at(end.raw_ns);
  if (!kind.empty()) {
    // Written before the completion is signalled: once the host sees it, the line is there.
    ground_truth_write({kind, name, start, end, start_ticks, end_ticks, queue_handle_,
                        batch.submission, device_index_, rec.list_handle, batch.submit_mono_ns,
                        batch.submit_tid, bytes});
  }
  signal_event(cmd.signal, start_ticks, end_ticks);
  return !aborting_.load();
}

namespace {
// When the process exits (or the loader unloads us), stop all workers first.
__attribute__((destructor)) void stop_engines_at_unload() { Engine::shutdown_all(); }
}  // namespace

}  // namespace simze

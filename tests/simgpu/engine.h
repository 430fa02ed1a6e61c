// A queue worker: the simulated hardware engine behind one command queue or immediate command
// list. Submissions run strictly in order on its own thread, for real durations, and complete
// by signalling events and fences with timestamps taken from the device clock.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "commands.h"
#include "device_clock.h"

namespace simze {

struct Fence;

struct Batch {
  std::vector<std::shared_ptr<const Recording>> recordings;
  Fence* fence = nullptr;
  uint64_t submission = 0;
  uint64_t submit_mono_ns = 0;
  int submit_tid = 0;
};

// Process-wide submission numbering (ground truth "submission" column).
uint64_t next_submission_number();

class Engine {
 public:
  Engine(const DeviceClock& clock, uint32_t device_index, uintptr_t queue_handle);
  // Finishes queued work (work blocked on an event that nobody will signal is abandoned),
  // then joins the worker.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void submit(Batch batch);
  // zeCommandQueueSynchronize: waits for everything submitted so far.
  bool wait_idle(uint64_t timeout_ns);

  // Process exit: stop every engine now, so no worker runs while the library is unloaded.
  static void shutdown_all();

 private:
  void run();
  bool run_batch(const Batch& batch);  // false: abandoned because the engine is stopping
  bool run_command(const Batch& batch, const Recording& rec, const Command& cmd);
  void stop(bool abort_running);

  const DeviceClock& clock_;
  const uint32_t device_index_;
  const uintptr_t queue_handle_;
  // Guarded by sync::mutex().
  std::deque<Batch> pending_;
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  bool stopping_ = false;
  std::atomic<bool> aborting_{false};  // also read without the lock, during long kernels
  std::thread worker_;
};

}  // namespace simze

// Destroys BPF links on threads of their own. Detaching a uprobe makes the kernel wait for
// every CPU to leave the probe (the unregistration waits for RCU grace periods): a median of
// 24 ms per link on this project's 6.18 VM (strace of close(2) on 85 uprobe_multi links),
// ≈70-120 ms earlier. Done inline, each process exit would stall the ring reader.
//
// The wait is for grace periods, not for CPU, and waits that overlap share their grace
// periods: so links are destroyed by several threads at once. One thread drained about 35
// links a second; with per-process probes every short-lived process leaves a few links
// behind, and a queue drained one at a time grew without bound under a stream of them.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "capture/bpf/bpf_link.h"

namespace xtrace {

class LinkReaper {
 public:
  // What destroying a link means; tests stand in their own. By default, dropping it.
  using DestroyFn = std::function<void(ProbeLink)>;
  static constexpr size_t kDefaultWorkers = 8;

  explicit LinkReaper(size_t max_workers = kDefaultWorkers, DestroyFn destroy = nullptr);
  // Destroys whatever is still queued, then stops.
  ~LinkReaper();
  LinkReaper(const LinkReaper&) = delete;
  LinkReaper& operator=(const LinkReaper&) = delete;

  void Destroy(std::vector<ProbeLink> links);
  // Links queued or being destroyed: they still hold their descriptors.
  size_t pending() const;
  // Returns once everything queued so far is destroyed.
  void WaitIdle();
  // Threads started so far (one more whenever the queue outgrows the idle ones, up to the
  // maximum); they stay until the reaper goes.
  size_t workers() const;

 private:
  void Loop();

  const size_t max_workers_;
  const DestroyFn destroy_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<ProbeLink> queue_;
  size_t in_progress_ = 0;
  size_t idle_ = 0;  // workers waiting for a link
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace xtrace

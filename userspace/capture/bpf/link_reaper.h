// Destroys BPF links on a thread of its own. Detaching a uprobe makes the kernel wait for
// every CPU to leave the probe (uprobe_unregister synchronizes): ≈70-120 ms per link on this
// project's 6.18 VM, measured with strace on close(2). Done inline, each process exit would
// stall the ring reader for a third of a second.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "capture/bpf/bpf_link.h"

namespace xtrace {

class LinkReaper {
 public:
  LinkReaper();
  // Destroys whatever is still queued, then stops.
  ~LinkReaper();
  LinkReaper(const LinkReaper&) = delete;
  LinkReaper& operator=(const LinkReaper&) = delete;

  void Destroy(std::vector<ProbeLink> links);
  // Links queued or being destroyed: they still hold their descriptors.
  size_t pending() const;
  // Returns once everything queued so far is destroyed.
  void WaitIdle();

 private:
  void Loop();

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<ProbeLink> queue_;
  size_t in_progress_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace xtrace

// Background link destruction, on up to max_workers threads.
#include "capture/bpf/link_reaper.h"

#include <algorithm>
#include <utility>

namespace xtrace {

LinkReaper::LinkReaper(size_t max_workers, DestroyFn destroy)
    : max_workers_(std::max<size_t>(max_workers, 1)), destroy_(std::move(destroy)) {}

LinkReaper::~LinkReaper() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void LinkReaper::Destroy(std::vector<ProbeLink> links) {
  if (links.empty()) return;
  {
    std::lock_guard lock(mu_);
    for (auto& link : links) queue_.push_back(std::move(link));
    // Started under the lock: a new worker counts as idle until it takes a link.
    while (queue_.size() > idle_ && workers_.size() < max_workers_) {
      workers_.emplace_back([this] { Loop(); });
      ++idle_;
    }
  }
  changed_.notify_all();
}

size_t LinkReaper::pending() const {
  std::lock_guard lock(mu_);
  return queue_.size() + in_progress_;
}

size_t LinkReaper::workers() const {
  std::lock_guard lock(mu_);
  return workers_.size();
}

void LinkReaper::WaitIdle() {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [this] { return queue_.empty() && in_progress_ == 0; });
}

void LinkReaper::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    ProbeLink link = std::move(queue_.front());
    queue_.pop_front();
    --idle_;
    ++in_progress_;
    lock.unlock();
    if (destroy_) destroy_(std::move(link));
    else link = ProbeLink{};  // the detach happens here, outside the lock
    lock.lock();
    --in_progress_;
    ++idle_;
    changed_.notify_all();
  }
}

}  // namespace xtrace

// Background link destruction.
#include "capture/bpf/link_reaper.h"

#include <optional>

namespace xtrace {

LinkReaper::LinkReaper() : thread_([this] { Loop(); }) {}

LinkReaper::~LinkReaper() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void LinkReaper::Destroy(std::vector<ProbeLink> links) {
  if (links.empty()) return;
  {
    std::lock_guard lock(mu_);
    for (auto& link : links) queue_.push_back(std::move(link));
  }
  changed_.notify_all();
}

size_t LinkReaper::pending() const {
  std::lock_guard lock(mu_);
  return queue_.size() + in_progress_;
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
    std::optional<ProbeLink> link(std::move(queue_.front()));
    queue_.pop_front();
    ++in_progress_;
    lock.unlock();
    link.reset();
    lock.lock();
    --in_progress_;
    changed_.notify_all();
  }
}

}  // namespace xtrace

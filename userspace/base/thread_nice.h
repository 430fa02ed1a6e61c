// ThreadNice: the calling thread's nice value, changed for as long as this lives and then put
// back. Linux keeps a nice value per thread, so this changes no other thread of the process,
// and threads started meanwhile begin with the changed value.
#pragma once

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

namespace xtrace {

// The nice value xtrace's capture threads take unless asked otherwise (CaptureOptions::nice),
// when xtrace itself runs at nice 0: ahead of the programs it traces on a shared core, so a
// burst of events is drained before the rings fill (see docs/design-notes.md, "Priority").
inline constexpr int kCaptureNice = -10;

class ThreadNice {
 public:
  // `want`: the value to take; nullopt leaves the thread as it is.
  explicit ThreadNice(std::optional<int> want) : tid_(static_cast<int>(syscall(SYS_gettid))) {
    errno = 0;
    const int now = getpriority(PRIO_PROCESS, static_cast<id_t>(tid_));
    if (now == -1 && errno != 0) {
      error_ = std::string("getpriority: ") + std::strerror(errno);
      return;
    }
    previous_ = now;
    if (!want || *want == now) return;
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(tid_), *want) != 0) {
      error_ = std::string("setpriority to nice ") + std::to_string(*want) + ": " +
               std::strerror(errno);
      return;
    }
    changed_ = true;
  }
  ~ThreadNice() {
    if (changed_) setpriority(PRIO_PROCESS, static_cast<id_t>(tid_), previous_);
  }
  ThreadNice(const ThreadNice&) = delete;
  ThreadNice& operator=(const ThreadNice&) = delete;

  // The thread's value before this changed it.
  int previous() const { return previous_; }
  bool changed() const { return changed_; }
  // Why the value could not be read or set; empty when it was (or nothing was asked).
  const std::string& error() const { return error_; }

 private:
  int tid_;
  int previous_ = 0;
  bool changed_ = false;
  std::string error_;
};

// The nice value a capture's threads take: the one asked for, or kCaptureNice when xtrace runs
// at nice 0 (a user who started it under nice(1) chose its priority: that is kept).
inline std::optional<int> CaptureThreadNice(std::optional<int> asked, int own_nice) {
  if (asked) return asked;
  if (own_nice == 0) return kCaptureNice;
  return std::nullopt;
}

}  // namespace xtrace

// UniqueFd: owns a file descriptor and closes it when it goes away, so no error path leaks one.
#pragma once

#include <unistd.h>

#include <utility>

namespace xtrace {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  // Closes the descriptor now and returns close(2)'s result (0 if there was none), for
  // callers that must report a failing close (NFS and some filesystems report write errors
  // only there).
  int Close() { return close_fd(std::exchange(fd_, -1)); }

  // Gives the descriptor up to a new owner (one that closes it itself).
  int Release() { return std::exchange(fd_, -1); }

  void Reset(int fd = -1) { close_fd(std::exchange(fd_, fd)); }

 private:
  static int close_fd(int fd) { return fd >= 0 ? ::close(fd) : 0; }
  int fd_ = -1;
};

}  // namespace xtrace

// MemoryFile: a file that lives in memory (memfd) but has a path, so that harnesses can hand
// fuzzer bytes to code that opens files by name (LogReader, the converter) without touching
// the disk. The path is /proc/self/fd/N: opening it gives a fresh file description.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/unique_fd.h"

namespace xtrace::fuzz {

class MemoryFile {
 public:
  MemoryFile() : fd_(::memfd_create("xtrace_fuzz", MFD_CLOEXEC)) {}

  bool ok() const { return fd_.get() >= 0; }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_.get()); }

  // Replaces the contents with `size` bytes of `data`.
  bool Write(const uint8_t* data, size_t size) {
    if (::ftruncate(fd_.get(), 0) != 0) return false;
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pwrite(fd_.get(), data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // The whole contents (what a converter wrote through path()).
  std::string Read() const {
    std::string out;
    char chunk[1 << 16];
    off_t at = 0;
    while (true) {
      const ssize_t n = ::pread(fd_.get(), chunk, sizeof(chunk), at);
      if (n <= 0) break;
      out.append(chunk, static_cast<size_t>(n));
      at += n;
    }
    return out;
  }

 private:
  UniqueFd fd_;
};

}  // namespace xtrace::fuzz

// OutputFile: see output_file.h.
#include "export/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace xtrace {

Result<OutputFile> OutputFile::Create(const std::string& path) {
  if (path == "-") return OutputFile(STDOUT_FILENO, "standard output");
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return Status::Error(path + ": cannot create: " + std::strerror(errno));
  struct stat st {};
  OutputFile out(fd.get(), path);
  out.regular_file_ = ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode);
  out.owned_fd_ = std::move(fd);
  return out;
}

void OutputFile::Write(std::string_view bytes) {
  const char* p = bytes.data();
  size_t left = error_.ok() ? bytes.size() : 0;
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = Status::Error("writing " + name_ + ": " + std::strerror(n < 0 ? errno : EIO));
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  bytes_written_ += static_cast<uint64_t>(p - bytes.data());
}

Status OutputFile::Close() {
  if (error_.ok() && owned_fd_.valid() && owned_fd_.Close() != 0) {
    error_ = Status::Error("closing " + name_ + ": " + std::strerror(errno));
  }
  return error_;
}

}  // namespace xtrace

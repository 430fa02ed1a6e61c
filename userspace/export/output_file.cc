// OutputFile: see output_file.h.
#include "export/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace xtrace {

// A gzip member streamed through zlib's deflate. Level 1: converting fast is the point, and
// on trace text it costs little size against the default level.
class OutputFile::Gzip {
 public:
  static constexpr int kLevel = 1;
  static constexpr int kGzipWindowBits = 15 + 16;  // zlib: +16 writes a gzip header and trailer
  static constexpr int kMemLevel = 8;              // zlib's default
  static constexpr size_t kChunk = 256 * 1024;

  Gzip() { ok_ = deflateInit2(&z_, kLevel, Z_DEFLATED, kGzipWindowBits, kMemLevel, Z_DEFAULT_STRATEGY) == Z_OK; }
  ~Gzip() { deflateEnd(&z_); }
  Gzip(const Gzip&) = delete;
  Gzip& operator=(const Gzip&) = delete;

  // Compresses `in` (finishing the stream when `finish`), handing output to `sink`.
  template <typename Sink>
  bool Deflate(std::string_view in, bool finish, Sink&& sink) {
    if (!ok_) return false;
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());
    const int flush = finish ? Z_FINISH : Z_NO_FLUSH;
    while (true) {
      z_.next_out = reinterpret_cast<Bytef*>(out_);
      z_.avail_out = sizeof(out_);
      const int rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) return ok_ = false;
      const size_t produced = sizeof(out_) - z_.avail_out;
      if (produced > 0) sink(std::string_view(out_, produced));
      if (finish ? rc == Z_STREAM_END : (z_.avail_in == 0 && z_.avail_out != 0)) return true;
    }
  }

 private:
  z_stream z_{};
  bool ok_ = false;
  char out_[kChunk];
};

OutputFile::OutputFile(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
OutputFile::OutputFile(OutputFile&&) noexcept = default;
OutputFile& OutputFile::operator=(OutputFile&&) noexcept = default;
OutputFile::~OutputFile() = default;

Result<OutputFile> OutputFile::Create(const std::string& path) {
  return Create(path, path.size() > 3 && path.ends_with(".gz"));
}

Result<OutputFile> OutputFile::Create(const std::string& path, bool gzip) {
  if (path == "-") {
    OutputFile out(STDOUT_FILENO, "standard output");
    if (gzip) out.gzip_ = std::make_unique<Gzip>();
    return out;
  }
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return Status::Error(path + ": cannot create: " + std::strerror(errno));
  struct stat st {};
  OutputFile out(fd.get(), path);
  out.regular_file_ = ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode);
  out.owned_fd_ = std::move(fd);
  if (gzip) out.gzip_ = std::make_unique<Gzip>();
  return out;
}

void OutputFile::Write(std::string_view bytes) {
  bytes_given_ += bytes.size();
  if (!gzip_) return WriteRaw(bytes);
  if (!error_.ok() || bytes.empty()) return;
  if (!gzip_->Deflate(bytes, false, [this](std::string_view out) { WriteRaw(out); }))
    error_ = Status::Error("writing " + name_ + ": gzip compression failed");
}

void OutputFile::WriteRaw(std::string_view bytes) {
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
  if (gzip_ && error_.ok()) {
    if (!gzip_->Deflate({}, true, [this](std::string_view out) { WriteRaw(out); }))
      error_ = Status::Error("writing " + name_ + ": gzip compression failed");
    gzip_.reset();
  }
  if (error_.ok() && owned_fd_.valid() && owned_fd_.Close() != 0) {
    error_ = Status::Error("closing " + name_ + ": " + std::strerror(errno));
  }
  return error_;
}

}  // namespace xtrace

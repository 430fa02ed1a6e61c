// OutputFile: where a trace writer's bytes go — a file it creates (deleted by the caller after
// a failure only when it is a regular file) or standard output, gzip-compressed on the way
// when asked (a file named *.gz) — with write errors latched, so writers check once at the end.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/unique_fd.h"

namespace xtrace {

class OutputFile {
 public:
  // Writes to `fd`, which stays the caller's; `name` names the output in error messages.
  OutputFile(int fd, std::string name);
  // Creates (truncates) `path`; "-" is standard output. A path ending in ".gz" is written
  // gzip-compressed (as is standard output with `gzip`).
  static Result<OutputFile> Create(const std::string& path);
  static Result<OutputFile> Create(const std::string& path, bool gzip);

  OutputFile(OutputFile&&) noexcept;
  OutputFile& operator=(OutputFile&&) noexcept;
  ~OutputFile();

  // Writes `bytes` (after an error, drops them).
  void Write(std::string_view bytes);
  // Ends the gzip stream (if any) and closes a file this object created. Returns the first
  // error of the whole output.
  Status Close();

  bool regular_file() const { return regular_file_; }
  uint64_t bytes_written() const { return bytes_written_; }  // to the file (compressed)
  uint64_t bytes_given() const { return bytes_given_; }      // to Write (before compression)
  const std::string& name() const { return name_; }

 private:
  class Gzip;
  void WriteRaw(std::string_view bytes);

  std::unique_ptr<Gzip> gzip_;  // the deflate stream; its state must not move
  UniqueFd owned_fd_;
  int fd_ = -1;
  std::string name_;
  uint64_t bytes_written_ = 0;
  uint64_t bytes_given_ = 0;
  Status error_;
  bool regular_file_ = false;
};

}  // namespace xtrace

// OutputFile: where a trace writer's bytes go — a file it creates (deleted by the caller after
// a failure only when it is a regular file) or standard output — with write errors latched, so
// writers check once at the end.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/unique_fd.h"

namespace xtrace {

class OutputFile {
 public:
  // Writes to `fd`, which stays the caller's; `name` names the output in error messages.
  OutputFile(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  // Creates (truncates) `path`; "-" is standard output.
  static Result<OutputFile> Create(const std::string& path);

  OutputFile(OutputFile&&) = default;
  OutputFile& operator=(OutputFile&&) = default;

  // Writes `bytes` (after an error, drops them).
  void Write(std::string_view bytes);
  // Closes a file this object created. Returns the first error of the whole output.
  Status Close();

  bool regular_file() const { return regular_file_; }
  uint64_t bytes_written() const { return bytes_written_; }
  const std::string& name() const { return name_; }

 private:
  UniqueFd owned_fd_;
  int fd_ = -1;
  std::string name_;
  uint64_t bytes_written_ = 0;
  Status error_;
  bool regular_file_ = false;
};

}  // namespace xtrace

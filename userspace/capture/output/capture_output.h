// Where a capture's log goes: one file (-o FILE), or a directory of files rotated by size and
// age (the daemon), each a complete log. A file being written in a directory is named
// *.capnp.part and renamed to *.capnp once finished, so whatever ends in .capnp is complete
// and safe to copy; the oldest finished files are deleted beyond max_files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "capture/capture_options.h"
#include "log/log_writer.h"

namespace xtrace {

class CaptureOutput {
 public:
  // A single file at `path`.
  static Result<std::unique_ptr<CaptureOutput>> ToFile(const std::string& path,
                                                       const LogHeader& header);
  // Rotated files in `dir` (created if missing, mode 0700).
  static Result<std::unique_ptr<CaptureOutput>> ToDirectory(const std::string& dir,
                                                            const RotationPolicy& policy,
                                                            const LogHeader& header,
                                                            uint64_t now_ns);

  LogWriter& writer() { return *writer_; }

  // Whether the current file is due to be replaced (size or age; never for a single file).
  bool RotationDue(uint64_t now_ns) const;
  // Finishes the current file with `summary` and starts the next one with `header`.
  Status Rotate(const LogSummary& summary, const LogHeader& header, uint64_t now_ns);
  // Finishes the current file for good.
  Status Finish(const LogSummary& summary);

  // The file being written (its final name once finished), and those finished so far.
  const std::string& current_path() const { return final_path_; }
  const std::vector<std::string>& finished() const { return finished_; }
  // Bytes in every file of this capture.
  uint64_t total_bytes() const { return earlier_bytes_ + writer_->bytes_written(); }
  // Events in the batches of every file of this capture that reached the disk.
  uint64_t total_events() const { return earlier_events_ + writer_->events_written(); }

  // After writing failed (a full disk, a file removed or cut short): what is kept and what
  // is lost, of the `appended` events the capture handed to the writer, in one sentence.
  std::string DescribeLoss(uint64_t appended) const;

 private:
  CaptureOutput() = default;
  std::string NextName();
  Status Seal();  // renames the finished .part file and applies max_files
  void Prune();

  std::unique_ptr<LogWriter> writer_;
  std::string dir_;  // empty for a single file
  RotationPolicy policy_;
  std::string final_path_;
  uint64_t file_started_ns_ = 0;
  uint32_t sequence_ = 0;
  uint64_t earlier_bytes_ = 0;
  uint64_t earlier_events_ = 0;
  bool current_complete_ = false;  // the current file has its summary, yet is still .part
  std::vector<std::string> finished_;
};

// The files a capture directory holds: finished logs (*.capnp) and the one being written
// (*.capnp.part), oldest first.
struct CaptureFileInfo {
  std::string name;
  uint64_t bytes = 0;
  bool complete = false;
  uint64_t modified_realtime_ns = 0;
};
std::vector<CaptureFileInfo> ListCaptureFiles(const std::string& dir);

}  // namespace xtrace

// Capture output: a single log file or a rotating directory of them.
#include "capture/output/capture_output.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace xtrace {
namespace {

constexpr std::string_view kPrefix = "xtrace-";
constexpr std::string_view kSuffix = ".capnp";
constexpr std::string_view kPartSuffix = ".capnp.part";

bool IsOurs(const std::string& name, std::string_view suffix) {
  return name.rfind(kPrefix, 0) == 0 && name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string PartPath(const std::string& path) { return path + ".part"; }

}  // namespace

Result<std::unique_ptr<CaptureOutput>> CaptureOutput::ToFile(const std::string& path,
                                                             const LogHeader& header) {
  std::unique_ptr<CaptureOutput> out(new CaptureOutput());
  auto writer = LogWriter::Create(path, header);
  if (!writer.ok()) return writer.status();
  out->writer_ = std::move(*writer);
  out->final_path_ = path;
  return out;
}

Result<std::unique_ptr<CaptureOutput>> CaptureOutput::ToDirectory(const std::string& dir,
                                                                  const RotationPolicy& policy,
                                                                  const LogHeader& header,
                                                                  uint64_t now_ns) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Status::Error(dir + ": cannot create the output directory: " + std::strerror(errno));
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::Error(dir + ": not a directory");
  std::unique_ptr<CaptureOutput> out(new CaptureOutput());
  out->dir_ = dir;
  out->policy_ = policy;
  out->final_path_ = out->NextName();
  auto writer = LogWriter::Create(PartPath(out->final_path_), header);
  if (!writer.ok()) return writer.status();
  out->writer_ = std::move(*writer);
  out->file_started_ns_ = now_ns;
  return out;
}

// xtrace-20250101-120000-0001.capnp: local time of the file's start, then a sequence number
// (several files can start within one second).
std::string CaptureOutput::NextName() {
  char stamp[32];
  const time_t now = time(nullptr);
  struct tm local {};
  localtime_r(&now, &local);
  strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &local);
  char name[96];
  for (;;) {
    std::snprintf(name, sizeof(name), "xtrace-%s-%04u.capnp", stamp, ++sequence_);
    const std::string path = dir_ + "/" + name;
    if (::access(path.c_str(), F_OK) != 0 && ::access(PartPath(path).c_str(), F_OK) != 0)
      return path;
  }
}

bool CaptureOutput::RotationDue(uint64_t now_ns) const {
  if (dir_.empty()) return false;
  if (policy_.max_file_bytes && writer_->bytes_written() >= policy_.max_file_bytes) return true;
  return policy_.max_file_age_ns && now_ns - file_started_ns_ >= policy_.max_file_age_ns;
}

Status CaptureOutput::Seal() {
  if (dir_.empty()) return Status::Ok();
  if (::rename(PartPath(final_path_).c_str(), final_path_.c_str()) != 0)
    return Status::Error("renaming " + PartPath(final_path_) + ": " + std::strerror(errno));
  finished_.push_back(final_path_);
  Prune();
  return Status::Ok();
}

void CaptureOutput::Prune() {
  if (!policy_.max_files) return;
  std::vector<CaptureFileInfo> files = ListCaptureFiles(dir_);
  std::erase_if(files, [](const CaptureFileInfo& f) { return !f.complete; });
  if (files.size() <= policy_.max_files) return;
  for (size_t i = 0; i + policy_.max_files < files.size(); ++i)
    ::unlink((dir_ + "/" + files[i].name).c_str());
}

Status CaptureOutput::Rotate(const LogSummary& summary, const LogHeader& header, uint64_t now_ns) {
  const std::string next = NextName();
  // The old file is complete once its last batch and summary are written; counted only then,
  // or the capture's totals would miss every rotated file's last batch. If it could not be
  // finished (a full disk), it stays a .part file: only complete logs are named *.capnp.
  Status st = writer_->Finish(summary);
  const uint64_t old_bytes = writer_->bytes_written(), old_events = writer_->events_written();
  if (st.ok()) {
    // Complete from here on, even if the next file cannot be made (a read-only directory).
    current_complete_ = true;
    st = writer_->ContinueInNewFile(summary, PartPath(next), header);
  }
  if (writer_->path() != PartPath(next)) return st;
  current_complete_ = false;
  earlier_bytes_ += old_bytes;
  earlier_events_ += old_events;
  const std::string old = final_path_;
  final_path_ = next;
  file_started_ns_ = now_ns;
  if (::rename(PartPath(old).c_str(), old.c_str()) != 0)
    return Status::Error("renaming " + PartPath(old) + ": " + std::strerror(errno));
  finished_.push_back(old);
  Prune();
  return st;
}

Status CaptureOutput::Finish(const LogSummary& summary) {
  if (Status st = writer_->Finish(summary); !st.ok()) return st;
  return Seal();
}

std::string CaptureOutput::DescribeLoss(uint64_t appended) const {
  const uint64_t written = total_events();
  std::string s;
  if (!finished_.empty())
    s = "kept " + std::to_string(finished_.size()) + " complete file" +
        (finished_.size() == 1 ? "" : "s") + " (the last " + finished_.back() + "); ";
  const std::string current = dir_.empty() ? final_path_ : PartPath(final_path_);
  if (current_complete_)
    s += current + " is complete with " + std::to_string(writer_->events_written()) +
         " events and its summary (not renamed " + final_path_ + ": the next file could not be made); ";
  else
    s += current + " keeps its first " + std::to_string(writer_->events_written()) +
         " events in complete batches (no summary: convert reads them, --salvage past any damage); ";
  s += std::to_string(appended > written ? appended - written : 0) +
       " events captured after them were not written";
  return s;
}

std::vector<CaptureFileInfo> ListCaptureFiles(const std::string& dir) {
  std::vector<CaptureFileInfo> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool complete = IsOurs(name, kSuffix);
    if (!complete && !IsOurs(name, kPartSuffix)) continue;
    struct stat st {};
    if (::stat(entry.path().c_str(), &st) != 0) continue;
    files.push_back(CaptureFileInfo{name, static_cast<uint64_t>(st.st_size), complete,
                                    uint64_t(st.st_mtim.tv_sec) * 1000000000ull +
                                        uint64_t(st.st_mtim.tv_nsec)});
  }
  // Names sort by start time (and sequence), which is what "oldest" means here.
  std::sort(files.begin(), files.end(),
            [](const CaptureFileInfo& a, const CaptureFileInfo& b) { return a.name < b.name; });
  return files;
}

}  // namespace xtrace

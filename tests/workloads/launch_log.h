// The workloads' own record of what they launched, one line per successful
// zeCommandListAppendLaunchKernel call, so tests can compare a trace against ground truth:
//   <tid>\t<kernel name>\t<groupCountX>,<groupCountY>,<groupCountZ>\n
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace xtrace::workloads {

class LaunchLog {
 public:
  // Opens `path` for appending (created if missing); exits with a message on failure.
  explicit LaunchLog(const std::string& path);
  ~LaunchLog();
  LaunchLog(const LaunchLog&) = delete;
  LaunchLog& operator=(const LaunchLog&) = delete;

  // Appends one line for the calling thread (its kernel tid, as a tracer sees it).
  // Thread-safe; the line is in the file when this returns, so a test that reads the log
  // after the workload reports a round sees every launch of that round.
  void record(std::string_view kernel_name, std::uint32_t x, std::uint32_t y, std::uint32_t z);

 private:
  int fd_ = -1;
  std::mutex mutex_;
};

}  // namespace xtrace::workloads

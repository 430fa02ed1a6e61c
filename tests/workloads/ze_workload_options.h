// ze_workload's command line: its options, their parsing and help, and the module file it
// loads with --module (ze_workload.cc runs what they ask for).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xtrace::workloads {

struct Options {
  std::uint64_t iterations = 4;
  std::uint64_t threads = 1;
  std::uint64_t rounds = 1;
  bool rounds_given = false;
  std::uint64_t warmup_rounds = 0;
  bool wait_for_signal = false;
  std::optional<double> duration_s;
  std::uint64_t sleep_us = 0;
  bool recreate_kernels = false;
  std::uint32_t queue_index = 0;
  bool record_once = false;
  std::string launch_log;
  std::string module_path;
  bool list_kernels = false;
  bool verbose = false;
  std::string end = "exit";
};

// argv parsed; --help prints the help and exits 0, a bad argument exits 2 with one line.
Options parse_options(int argc, char** argv);

// The --module file's bytes (a usage error when it cannot be read or is empty).
std::vector<char> read_module_file(const std::string& path);

// Whether `bytes` start with the SPIR-V magic number.
bool is_spirv(const std::vector<char>& bytes);

}  // namespace xtrace::workloads

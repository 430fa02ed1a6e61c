// The kernels the test workloads launch: their exact names (chosen to stress name capture:
// a ~1,000-character template, spaces, commas, angle brackets, quotes, a mangled SYCL name)
// and the simulated-GPU module that defines them with their simulated durations.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace xtrace::workloads {

enum class Kernel : std::uint32_t {
  kScale,          // plain C identifier
  kGemm,           // ~1,000-character C++ template name
  kSoftmax,        // spaces, commas, angle brackets, single and double quotes
  kSyclLambda,     // Itanium-mangled SYCL kernel-lambda type name
  kReduce,         // PyTorch-style nested template name with "::{lambda(...)#1}"
  kNeverLaunched,  // created like the others but never launched: must not appear in a trace
  kCount,
};

struct KernelSpec {
  Kernel id;
  std::string name;
  std::uint64_t duration_ns;  // how long the simulated GPU runs it
};

// All kernels, indexed by Kernel.
std::span<const KernelSpec> kernel_catalog();
const KernelSpec& kernel_spec(Kernel id);

// The embedded module in the simulated driver's format:
//   XTRACE-SIMGPU-MODULE 1
//   kernel <duration_ns> <name to end of line>
std::string simulated_module_text();

}  // namespace xtrace::workloads

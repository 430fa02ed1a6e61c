// The simulated module format: a text "binary" that names kernels and says how long each runs.
//
//   XTRACE-SIMGPU-MODULE 1
//   kernel <duration_ns> <name to end of line>
//
// Anything that does not start with the magic word (SPIR-V, native binaries, any blob) is an
// opaque module: it builds, and any kernel name can be created from it with a default duration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace simze {

struct KernelSpec {
  std::string name;
  uint64_t duration_ns;
};

struct ParsedModule {
  bool simulated = false;           // false: opaque blob, kernels are made up on demand
  std::vector<KernelSpec> kernels;  // in file order; only for simulated modules
  std::string error;                // non-empty: build failure, text for the build log
};

inline constexpr std::string_view kModuleMagic = "XTRACE-SIMGPU-MODULE";

ParsedModule parse_module(const uint8_t* data, size_t size);

}  // namespace simze

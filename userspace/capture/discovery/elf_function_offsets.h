// File offsets of function symbols in an ELF shared object, the form uprobes are attached by
// when many functions of one library are probed at once (libbpf would re-read the file for
// every symbol).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace xtrace {

// Reads `path` (a 64-bit little-endian ELF file) and returns the file offset of each of
// `names` that it defines as a function in .dynsym or .symtab. Names it lacks are absent from
// the result; an unreadable or malformed file is an error naming the file.
Result<std::map<std::string, uint64_t, std::less<>>> FindFunctionOffsets(
    const std::string& path, std::span<const std::string_view> names);

// The bytes of an executable segment (PT_LOAD with PF_X) of the ELF file at `path`, as file
// offsets: [offset, offset + size), which a process maps as one contiguous run of code.
struct FileRange {
  uint64_t offset = 0;
  uint64_t size = 0;
  bool Holds(uint64_t at) const { return at >= offset && at - offset < size; }
};
Result<std::vector<FileRange>> ExecutableSegments(const std::string& path);

}  // namespace xtrace

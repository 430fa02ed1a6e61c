// File offsets of function symbols in an ELF shared object, the form uprobes are attached by
// when many functions of one library are probed at once (libbpf would re-read the file for
// every symbol).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace xtrace {

// Reads `path` (a 64-bit little-endian ELF file) and returns the file offset of each of
// `names` that it defines as a function in .dynsym or .symtab. Names it lacks are absent from
// the result; an unreadable or malformed file is an error naming the file.
Result<std::map<std::string, uint64_t, std::less<>>> FindFunctionOffsets(
    const std::string& path, std::span<const std::string_view> names);

}  // namespace xtrace

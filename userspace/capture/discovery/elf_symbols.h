// Which functions an ELF shared object exports, read from its dynamic symbol table, so a
// source can tell whether a mapped library is worth probing before asking libbpf to attach.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace xtrace {

// For each of `symbols`, whether the file at `path` defines it in .dynsym. A file that is
// not ELF (or not readable) is an error naming the file.
Result<std::vector<bool>> ElfExports(const std::string& path,
                                     std::span<const std::string_view> symbols);

// The same, with each defined symbol's value (its address relative to the load base).
Result<std::vector<std::optional<uint64_t>>> ElfExportValues(
    const std::string& path, std::span<const std::string_view> symbols);

// The shared objects the file at `path` needs (its DT_NEEDED entries, in order).
Result<std::vector<std::string>> ElfNeeded(const std::string& path);

}  // namespace xtrace

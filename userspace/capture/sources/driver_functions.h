// Where a Level Zero driver file keeps the functions it hands out by pointer
// (zeDriverGetExtensionFunctionAddress), learned from xtrace's own copy of the driver. Intel's
// driver hands out internal functions (its namespace L0's) that the functions it exports under
// the same names only call: a probe on the exported name never sees a call made through the
// pointer, which is how SYCL makes them. The pointers are asked of the driver xtrace's own Level
// Zero loaded, and stand for the same functions in any file of the same build (the same GNU
// build id), which a traced process maps under any root.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace xtrace {

// The GNU build id of the ELF file at `path`, in hex; "" when it has none. An unreadable or
// non-ELF file is an error naming it.
Result<std::string> ElfBuildId(const std::string& path);

class DriverFunctions {
 public:
  // Offsets in a file, by function name.
  using Offsets = std::map<std::string, uint64_t, std::less<>>;

  // Notes that `name` was handed out at `address` of this process, whose memory map is
  // `maps_text` (/proc/self/maps): the file mapped there, by its build id, and the file offset.
  // False (nothing noted) when no file is mapped executable there or the file has no build id.
  bool Add(std::string_view maps_text, std::string_view name, uint64_t address);

  // The functions handed out from files of `build_id`; null when none is known.
  const Offsets* Of(const std::string& build_id) const;

  bool empty() const { return by_build_id_.empty(); }

  // Whether a driver build noted here hands out `name`.
  bool HandsOut(std::string_view name) const;

 private:
  std::map<std::string, Offsets> by_build_id_;
  std::map<std::string, std::string> build_id_of_path_;  // files already read
};

}  // namespace xtrace

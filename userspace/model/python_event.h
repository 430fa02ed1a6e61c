// Python frames of a traced call's thread (model/event.h): where in a Python program a
// launch, copy, synchronization or ITT task was made.
#pragma once

#include <cstdint>
#include <vector>

#include "model/string_table.h"

namespace xtrace {

struct PythonFrame {
  StringId file = kEmptyString;      // co_filename, as the interpreter has it
  StringId function = kEmptyString;  // co_qualname: "Model.forward"
  uint32_t line = 0;                 // the line executing; 0 when the code object has none
  bool operator==(const PythonFrame&) const = default;
};

// The Python frames of thread `tid` during [start_ns, end_ns]: the call (or ITT event) of that
// thread with these times. Innermost first. `truncated`: the stack went deeper than the
// frames read (include/xtrace/python.h), the outermost are missing.
struct PythonStack {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  std::vector<PythonFrame> frames;
  bool truncated = false;
};

}  // namespace xtrace

#include <span>
#include <string>
#include <string_view>

namespace xtrace {

// Frames whose file contains one of these are library code, not the user's: the innermost
// frame outside them is the "user frame" that device slices and `report --by python` name.
inline const std::vector<std::string>& DefaultPythonSkips() {
  static const std::vector<std::string> kSkips = {"torch/"};
  return kSkips;
}

// The innermost frame of `stack` (innermost first) whose file matches none of `skips`; the
// outermost frame when every frame matches; null for an empty stack.
inline const PythonFrame* InnermostUserFrame(const PythonStack& stack, const StringTable& strings,
                                             std::span<const std::string> skips) {
  for (const PythonFrame& f : stack.frames) {
    const std::string_view file = strings.Get(f.file);
    bool skipped = false;
    for (const std::string& s : skips) skipped = skipped || file.find(s) != std::string_view::npos;
    if (!skipped) return &f;
  }
  return stack.frames.empty() ? nullptr : &stack.frames.back();
}

// "file(line): function", as PyTorch's profiler names Python frames.
inline std::string PythonFrameName(const PythonFrame& f, const StringTable& strings) {
  std::string name(strings.Get(f.file));
  name += '(';
  name += std::to_string(f.line);
  name += "): ";
  name += strings.Get(f.function);
  return name;
}

}  // namespace xtrace

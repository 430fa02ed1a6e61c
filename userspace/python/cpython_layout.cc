// The per-version tables; see cpython_layout.h.
#include "python/cpython_layout.h"

namespace xtrace {
namespace {

// CPython 3.11 (checked against Debian's 3.11.2 headers with offsetof: the unit test
// cpython_layout_unittest.cc does so again wherever python3.11-dev is installed).
constexpr CPythonLayout kCPython311 = [] {
  CPythonLayout l;
  l.major = 3;
  l.minor = 11;
  l.runtime_interp_head = 40;
  l.runtime_interp_main = 48;
  l.interp_threads_head = 16;
  l.interp_runtime = 40;
  l.tstate_next = 8;
  l.tstate_interp = 16;
  l.tstate_frame = 56;  // cframe
  l.cframe_frame = 8;   // _PyCFrame.current_frame
  l.tstate_thread_id = 152;
  l.tstate_native_thread_id = 160;
  l.frame_code = 32;
  l.frame_previous = 48;
  l.frame_instr = 56;  // prev_instr
  l.code_firstlineno = 72;
  l.code_filename = 112;
  l.code_name = 120;
  l.code_qualname = 128;
  l.code_linetable = 136;
  l.code_adaptive = 184;
  l.code_header_size = 184;
  return l;
}();

}  // namespace

const CPythonLayout* CPythonLayoutFor(uint32_t major, uint32_t minor) {
  if (major == 3 && minor == 11) return &kCPython311;
  return nullptr;
}

xt_py_layout BpfLayout(const CPythonLayout& l, uint64_t runtime, uint32_t max_frames,
                       uint32_t generation) {
  xt_py_layout out{};
  out.interp_ptr = runtime + l.runtime_interp_main;
  out.tstate_head = l.interp_threads_head;
  out.tstate_next = l.tstate_next;
  out.tstate_thread_id = l.tstate_thread_id;
  out.tstate_frame = l.tstate_frame;
  out.cframe_frame = l.cframe_frame;
  out.frame_code = l.frame_code;
  out.frame_previous = l.frame_previous;
  out.frame_instr = l.frame_instr;
  out.max_frames = max_frames < XT_PY_MAX_FRAMES ? max_frames : XT_PY_MAX_FRAMES;
  out.generation = generation;
  return out;
}

std::string VersionText(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace xtrace

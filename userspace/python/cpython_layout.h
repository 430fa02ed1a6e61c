// Where CPython keeps what xtrace reads from outside a running interpreter: the thread list,
// the frame chain and the code objects, per minor version, from the public headers of each
// version (Include/internal/pycore_runtime.h, pycore_interp.h, cpython/pystate.h,
// pycore_frame.h, cpython/code.h, cpython/unicodeobject.h) on x86-64 for a release build.
// A table is trusted only after the interpreter it describes passed the checks in
// python_process.cc: a wrong table must give no frames, never wrong ones.
#pragma once

#include <cstdint>
#include <string>

#include "xtrace/python.h"

namespace xtrace {

struct CPythonLayout {
  uint32_t major = 0, minor = 0;
  // _PyRuntimeState
  uint32_t runtime_interp_head = 0;  // interpreters.head
  uint32_t runtime_interp_main = 0;  // interpreters.main
  // PyInterpreterState
  uint32_t interp_threads_head = 0;  // threads.head
  uint32_t interp_runtime = 0;       // runtime: points back at _PyRuntime
  // PyThreadState
  uint32_t tstate_next = 0;
  uint32_t tstate_interp = 0;
  uint32_t tstate_frame = 0;         // cframe (3.11, 3.12) or current_frame (3.13)
  uint32_t cframe_frame = XT_PY_NO_OFFSET;  // _PyCFrame.current_frame
  uint32_t tstate_thread_id = 0;
  uint32_t tstate_native_thread_id = 0;
  // _PyInterpreterFrame
  uint32_t frame_code = 0;
  uint32_t frame_previous = 0;
  uint32_t frame_instr = 0;
  // PyCodeObject
  uint32_t code_firstlineno = 0;
  uint32_t code_filename = 0;
  uint32_t code_name = 0;
  uint32_t code_qualname = 0;
  uint32_t code_linetable = 0;
  uint32_t code_adaptive = 0;        // co_code_adaptive: the instructions, inline
  uint32_t code_header_size = 0;     // bytes read at a code object (covers every field above)
  // Objects: PyObject.ob_type, PyVarObject.ob_size, PyBytesObject.ob_sval, PEP 393 strings
  uint32_t object_type = 8;
  uint32_t var_size = 16;
  uint32_t bytes_data = 32;
  uint32_t unicode_length = 16;
  uint32_t unicode_state = 32;
  uint32_t unicode_ascii_data = 48;    // sizeof(PyASCIIObject)
  uint32_t unicode_compact_data = 72;  // sizeof(PyCompactUnicodeObject)
};

// The table for CPython `major`.`minor`, or null when xtrace has none.
const CPythonLayout* CPythonLayoutFor(uint32_t major, uint32_t minor);

// What BPF needs of `layout` for a process whose _PyRuntime is at `runtime`.
xt_py_layout BpfLayout(const CPythonLayout& layout, uint64_t runtime, uint32_t max_frames,
                       uint32_t generation);

// "3.11" for messages.
std::string VersionText(uint32_t major, uint32_t minor);

}  // namespace xtrace

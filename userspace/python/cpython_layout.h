// Where CPython keeps what xtrace reads from outside a running interpreter: the thread list,
// the frame chain and the code objects. From 3.13 on the interpreter says so itself: its
// _PyRuntime begins with _Py_DebugOffsets, a table of structure offsets for out-of-process
// readers (CPythonLayoutFromDebugOffsets). Before it (3.11, 3.12) a table per minor version,
// from the headers of each version (Include/internal/pycore_runtime.h, pycore_interp.h,
// cpython/pystate.h, pycore_frame.h, cpython/code.h, cpython/unicodeobject.h) on x86-64 for a
// release build. Either is trusted only after the interpreter it describes passed the checks
// in python_process.cc (CheckCPythonLayout here, the runtime's invariants there): a wrong
// layout must give no frames, never wrong ones.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"
#include "xtrace/python.h"

namespace xtrace {

struct CPythonLayout {
  uint32_t major = 0, minor = 0;
  const char* source = "table";      // or "debug offsets": where the offsets came from
  uint64_t runtime_size = 0;         // sizeof(_PyRuntimeState) when known (debug offsets), else 0
  // _PyRuntimeState
  uint32_t runtime_interp_head = 0;  // interpreters.head
  uint32_t runtime_interp_main = 0;  // interpreters.main
  // PyInterpreterState
  uint32_t interp_threads_head = 0;  // threads.head
  uint32_t interp_runtime = XT_PY_NO_OFFSET;  // runtime: points back at _PyRuntime
  uint32_t interp_next = XT_PY_NO_OFFSET;     // next: the interpreter list, newest first
  uint32_t interp_id = XT_PY_NO_OFFSET;       // id: 0 for the main interpreter
  // PyThreadState
  uint32_t tstate_next = 0;
  uint32_t tstate_interp = 0;
  uint32_t tstate_frame = 0;         // cframe (3.11, 3.12) or current_frame (3.13)
  uint32_t cframe_frame = XT_PY_NO_OFFSET;  // _PyCFrame.current_frame
  uint32_t tstate_thread_id = 0;
  uint32_t tstate_native_thread_id = 0;
  uint32_t tstate_datastack_chunk = XT_PY_NO_OFFSET;  // datastack_chunk: the data stack's current chunk
  // _PyInterpreterFrame
  uint32_t frame_code = 0;
  uint32_t frame_previous = 0;
  uint32_t frame_instr = 0;
  uint32_t frame_owner = XT_PY_NO_OFFSET;  // owner (3.12 on: entry frames are skipped)
  uint32_t owner_cstack = 3;               // FRAME_OWNED_BY_CSTACK
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

// The table for CPython `major`.`minor`, or null when xtrace has none (3.13 and later carry
// their own offsets).
const CPythonLayout* CPythonLayoutFor(uint32_t major, uint32_t minor);

// The minor versions whose frames xtrace reads, for messages: "3.11 to 3.13".
std::string ReadableVersionsText();

// _Py_DebugOffsets, as far as xtrace reads it: the cookie and version lead in every version;
// the rest is laid out per minor version (3.13's is kDebugOffsets313Size bytes).
constexpr char kDebugOffsetsCookie[8] = {'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'};
constexpr size_t kDebugOffsetsHeadSize = 24;  // cookie, version (Py_Version's value), free_threaded
constexpr size_t kDebugOffsets313Size = 584;

// Whether `bytes` (the start of _PyRuntime) begin with the debug offsets' cookie.
bool HasDebugOffsets(std::span<const uint8_t> bytes);

// The layout the interpreter gives in `bytes` (its _Py_DebugOffsets) for a CPython whose
// Py_Version is `hex_version`. An error says why it cannot be used: another version than the
// binary's, a free-threaded build, a minor version whose table of offsets xtrace cannot
// parse, or offsets that fail CheckCPythonLayout.
Result<CPythonLayout> CPythonLayoutFromDebugOffsets(std::span<const uint8_t> bytes,
                                                     uint64_t hex_version);

// What must hold of any layout before BPF is given it: the fields BPF reads of a frame lie
// within the bytes it reads (XT_PY_FRAME_READ), the code object's fields within the header
// read, every offset within its structure.
Status CheckCPythonLayout(const CPythonLayout& layout);

// What BPF needs of `layout` for a process whose _PyRuntime is at `runtime`.
xt_py_layout BpfLayout(const CPythonLayout& layout, uint64_t runtime, uint32_t max_frames,
                       uint32_t generation);

// "3.11" for messages.
std::string VersionText(uint32_t major, uint32_t minor);

}  // namespace xtrace

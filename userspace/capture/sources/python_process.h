// Recognising a CPython interpreter in a traced process and checking xtrace's layout table
// against it before any frame is read (python/cpython_layout.h): the executable or libpython
// it maps, its version from the binary's Py_Version, the symbols the readers need, its
// layout (a table, or the interpreter's own debug offsets), and the runtime's own invariants.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "capture/discovery/proc_maps.h"
#include "python/python_frames.h"

namespace xtrace {

// Whether `lib` (a file a process maps) is a CPython interpreter binary: python3.N or
// libpython3.N*.so*.
bool IsCPythonBinary(std::string_view path);

struct CPythonProcess {
  PythonInterpreter interpreter;
  uint32_t major = 0, minor = 0;
  bool initialized = false;  // the runtime had its main interpreter when checked
};

// The libpython3.N*.so* an interpreter executable `lib` (python3.N) is linked against, where
// its CPython lives (Fedora's, pyenv's and Spack's builds, --enable-shared): that library is
// the one to read frames through, not the executable, which exports none of CPython. Empty
// for a libpython itself and for an executable that holds CPython (Debian's, conda's).
std::string CPythonLibraryOf(const MappedLibrary& lib);

// Finds and checks the interpreter `lib` in process `pid`: its layout from xtrace's table for
// its version (3.11, 3.12) or from its own _Py_DebugOffsets (3.13), then the runtime's
// invariants through that layout. An error says, in a few words, why its frames cannot be
// read ("CPython 3.14 (xtrace reads the frames of CPython 3.11 to 3.13)", "cannot read its
// memory: ...").
Result<CPythonProcess> InspectCPython(uint32_t pid, const MappedLibrary& lib);

}  // namespace xtrace

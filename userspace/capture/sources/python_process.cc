// CPython recognition and checks; see python_process.h.
#include "capture/sources/python_process.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <regex>
#include <vector>

#include "base/read_file.h"
#include "base/unique_fd.h"
#include "capture/discovery/elf_symbols.h"

namespace xtrace {
namespace {

// The address the file's virtual addresses are shifted by in the process: 0 for an
// executable linked at fixed addresses (Debian's python3.11), else the start of its mapping
// at file offset 0 (a shared object or PIE linked from address 0).
Result<uint64_t> LoadBias(uint32_t pid, const MappedLibrary& lib) {
  Elf64_Ehdr ehdr{};
  const UniqueFd fd(open(lib.host_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::Error(lib.path + ": " + std::strerror(errno));
  const ssize_t got = pread(fd.get(), &ehdr, sizeof(ehdr), 0);
  if (got != static_cast<ssize_t>(sizeof(ehdr)) || std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0)
    return Status::Error(lib.path + ": not an ELF file");
  if (ehdr.e_type == ET_EXEC) return uint64_t{0};
  if (const auto base = LoadBase(pid, lib)) return *base;
  return Status::Error(lib.path + " is not mapped at its start");
}

template <typename T>
Status ReadValue(ProcessMemory& memory, uint32_t pid, uint64_t address, T* out, const char* what) {
  if (!memory.Read(pid, address, out, sizeof(T)))
    return Status::Error(std::string("cannot read its ") + what + " (" + std::strerror(errno) + ")");
  return Status::Ok();
}

}  // namespace

bool IsCPythonBinary(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string base(path.substr(slash == std::string_view::npos ? 0 : slash + 1));
  static const std::regex kBinary(R"(python3\.[0-9]+|libpython3\.[0-9]+[a-z]*\.so(\..*)?)");
  return std::regex_match(base, kBinary);
}

std::string CPythonLibraryOf(const MappedLibrary& lib) {
  const std::string_view path = lib.path;
  if (path.substr(path.rfind('/') + 1).starts_with("lib")) return "";
  auto needed = ElfNeeded(lib.host_path);
  if (!needed.ok()) return "";
  for (const std::string& name : *needed)
    if (name.starts_with("libpython3.") && IsCPythonBinary(name)) return name;
  return "";
}

Result<CPythonProcess> InspectCPython(uint32_t pid, const MappedLibrary& lib) {
  static constexpr std::array<std::string_view, 5> kSymbols = {
      "_PyRuntime", "Py_Version", "PyCode_Type", "PyType_Type", "_Py_RefTotal"};
  auto values = ElfExportValues(lib.host_path, kSymbols);
  if (!values.ok()) return values.status();
  const auto& v = *values;
  if (!v[0] || !v[2] || !v[3])
    return Status::Error(lib.path + " does not export _PyRuntime, PyCode_Type and PyType_Type");
  if (!v[1]) return Status::Error(lib.path + " has no Py_Version: CPython before 3.11");
  // Debug builds (Py_DEBUG exports _Py_RefTotal) may lay objects out differently.
  if (v[4]) return Status::Error(lib.path + " is a debug build of CPython");
  auto bias = LoadBias(pid, lib);
  if (!bias.ok()) return bias.status();

  ProcessVmMemory memory;
  uint64_t hex = 0;
  if (Status st = ReadValue(memory, pid, *bias + *v[1], &hex, "Py_Version"); !st.ok()) return st;
  CPythonProcess out;
  out.major = (hex >> 24) & 0xff;
  out.minor = (hex >> 16) & 0xff;
  const std::string version = "CPython " + VersionText(out.major, out.minor);
  PythonInterpreter& interp = out.interpreter;
  interp.runtime = *bias + *v[0];
  interp.code_type = *bias + *v[2];
  const uint64_t type_type = *bias + *v[3];
  if (const CPythonLayout* table = CPythonLayoutFor(out.major, out.minor)) {
    interp.layout = std::make_shared<const CPythonLayout>(*table);
  } else {
    // No table: the interpreter's own offsets, where it has them (3.13 on).
    std::vector<uint8_t> head(kDebugOffsets313Size);
    if (!memory.Read(pid, interp.runtime, head.data(), head.size()))
      return Status::Error(std::string("cannot read its _PyRuntime (") + std::strerror(errno) + ")");
    if (!HasDebugOffsets(head))
      return Status::Error(version + " (xtrace reads the frames of CPython " +
                           ReadableVersionsText() + ")");
    auto layout = CPythonLayoutFromDebugOffsets(head, hex);
    if (!layout.ok()) return Status::Error(version + ": " + layout.status().message());
    interp.layout = std::make_shared<const CPythonLayout>(*layout);
  }
  const CPythonLayout& layout = *interp.layout;
  if (Status st = CheckCPythonLayout(layout); !st.ok())
    return Status::Error(version + ": " + st.message());

  // The symbol math: PyCode_Type is a type object whose type is PyType_Type.
  uint64_t code_type_type = 0;
  if (Status st = ReadValue(memory, pid, interp.code_type + layout.object_type, &code_type_type,
                            "PyCode_Type");
      !st.ok())
    return st;
  // 0: a libpython seen as it was mapped, before the dynamic linker relocated it (its file
  // holds 0 there; the relocation writes &PyType_Type). Nothing of the interpreter has run
  // then, so its runtime must be uninitialised too (checked below); the type of every code
  // object BPF reads is still checked as it is read.
  const bool relocated = code_type_type != 0;
  if (relocated && code_type_type != type_type)
    return Status::Error("PyCode_Type does not look like a type object (layout mismatch)");

  // The runtime, once initialised: its main interpreter points back at it (3.11, 3.12), lies
  // inside it (it is allocated there), is the last of the interpreters' list with id 0 (3.13,
  // whose debug offsets give those fields), and its threads point at it. Before that (a
  // command just exec'd) frames wait for it: BPF finds no interpreter until there is one, and
  // every code object is checked as it is read.
  uint64_t main = 0;
  if (Status st = ReadValue(memory, pid, interp.runtime + layout.runtime_interp_main, &main,
                            "_PyRuntime");
      !st.ok())
    return st;
  if (!relocated && main != 0)
    return Status::Error("PyCode_Type does not look like a type object (layout mismatch)");
  if (main == 0) {
    // Not initialised. Where the offset of interpreters.main is inferred (debug offsets give
    // the head), the runtime's initial image proves it: head and main are null and next_id,
    // the field after main, is still -1.
    if (layout.interp_runtime == XT_PY_NO_OFFSET) {
      uint64_t fields[3] = {1, 1, 0};
      if (!memory.Read(pid, interp.runtime + layout.runtime_interp_head, fields, sizeof(fields)))
        return Status::Error(std::string("cannot read its _PyRuntime (") + std::strerror(errno) + ")");
      if (fields[0] != 0 || fields[2] != ~uint64_t{0})
        return Status::Error("its list of interpreters is not where its debug offsets say (layout mismatch)");
    }
    return out;
  }
  if (layout.interp_runtime != XT_PY_NO_OFFSET) {
    uint64_t back = 0;
    if (Status st = ReadValue(memory, pid, main + layout.interp_runtime, &back, "interpreter");
        !st.ok())
      return st;
    if (back != interp.runtime)
      return Status::Error("its main interpreter does not point back at _PyRuntime (layout mismatch)");
  }
  if (layout.runtime_size && (main < interp.runtime || main >= interp.runtime + layout.runtime_size))
    return Status::Error("its main interpreter is not inside _PyRuntime (layout mismatch)");
  if (layout.interp_next != XT_PY_NO_OFFSET) {
    uint64_t at = 0, last = 0;
    if (Status st = ReadValue(memory, pid, interp.runtime + layout.runtime_interp_head, &at,
                              "_PyRuntime");
        !st.ok())
      return st;
    for (int i = 0; at && i < XT_PY_MAX_THREADS; ++i) {
      last = at;
      if (Status st = ReadValue(memory, pid, at + layout.interp_next, &at, "interpreters");
          !st.ok())
        return st;
    }
    if (at || last != main)
      return Status::Error("its main interpreter is not the last of its interpreters (layout mismatch)");
  }
  if (layout.interp_id != XT_PY_NO_OFFSET) {
    int64_t id = -1;
    if (Status st = ReadValue(memory, pid, main + layout.interp_id, &id, "interpreter"); !st.ok())
      return st;
    if (id != 0) return Status::Error("its main interpreter's id is not 0 (layout mismatch)");
  }
  uint64_t thread = 0;
  if (Status st = ReadValue(memory, pid, main + layout.interp_threads_head, &thread,
                            "interpreter's threads");
      !st.ok())
    return st;
  if (thread) {
    uint64_t owner = 0, thread_id = 0;
    if (Status st = ReadValue(memory, pid, thread + layout.tstate_interp, &owner, "thread state");
        !st.ok())
      return st;
    if (Status st = ReadValue(memory, pid, thread + layout.tstate_thread_id, &thread_id,
                              "thread state");
        !st.ok())
      return st;
    if (owner != main || thread_id == 0)
      return Status::Error("its thread states do not match the layout (layout mismatch)");
    // Its data stack's chunk (BPF reads frames from the chunk's start): a chunk's size, the
    // field after its `previous`, is DATA_STACK_CHUNK_SIZE or a multiple of it.
    if (layout.tstate_datastack_chunk != XT_PY_NO_OFFSET) {
      uint64_t chunk = 0, chunk_size = 0;
      if (Status st = ReadValue(memory, pid, thread + layout.tstate_datastack_chunk, &chunk,
                                "thread state");
          !st.ok())
        return st;
      if (chunk) {
        if (Status st = ReadValue(memory, pid, chunk + 8, &chunk_size, "data stack chunk");
            !st.ok())
          return st;
        if (chunk % 8 != 0 || chunk_size < XT_PY_MIN_CHUNK || chunk_size % XT_PY_MIN_CHUNK != 0 ||
            chunk_size > (uint64_t{1} << 30))
          return Status::Error("its thread's data stack does not match the layout (layout mismatch)");
      }
    }
  }
  out.initialized = true;
  return out;
}

}  // namespace xtrace

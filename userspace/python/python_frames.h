// Turning the frames BPF read (code object, last instruction) into file, function and line,
// by reading the target's code objects with process_vm_readv, once per code object. A code
// object is trusted only if its type is the interpreter's PyCode_Type: a frame that fails any
// check makes the whole stack unresolved (never a wrong frame).
//
// Code objects are cached by address, and an address can be reused: code made with exec() or
// recompiled (torch.fx, torch.compile) is freed and another code object may be made where it
// was. So a cached code object is checked again when it is used and was last checked more
// than kCodeRecheckNs ago: its header is read again and compared on what the frame's names
// and lines come from (type, file name, qualified name, line table, first line). A mismatch
// reads it afresh. This bounds both the cost (one small read per code object in use per
// interval, not per frame) and how long a replaced code object can be shown under its
// predecessor's name.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/python_event.h"
#include "model/string_table.h"
#include "python/cpython_layout.h"

namespace xtrace {

// A process's CPython interpreter, as the capture found and checked it.
struct PythonInterpreter {
  // The layout checked against this interpreter: a table of xtrace's, or the one the
  // interpreter's own debug offsets give (hence owned here).
  std::shared_ptr<const CPythonLayout> layout;
  uint64_t runtime = 0;    // &_PyRuntime in the target
  uint64_t code_type = 0;  // &PyCode_Type in the target
};

// The interpreters of a capture's processes: set by the capture as it checks them, read by
// the correlator as it resolves frames. Thread-safe.
class PythonInterpreters {
 public:
  void Set(uint32_t pid, const PythonInterpreter& interpreter);
  void Forget(uint32_t pid);
  std::optional<PythonInterpreter> Find(uint32_t pid) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint32_t, PythonInterpreter> by_pid_;
};

// Reads another process's memory; an interface so tests can serve bytes of their own.
class ProcessMemory {
 public:
  virtual ~ProcessMemory() = default;
  // All of [address, address + size), or false.
  virtual bool Read(uint32_t pid, uint64_t address, void* out, size_t size) = 0;
};

// process_vm_readv (root, or CAP_SYS_PTRACE over the target).
class ProcessVmMemory final : public ProcessMemory {
 public:
  bool Read(uint32_t pid, uint64_t address, void* out, size_t size) override;
};

// Counts for the capture's summary.
struct PythonFrameStats {
  uint64_t stacks = 0;           // stacks resolved
  uint64_t unresolved = 0;       // stacks dropped: a frame failed a check or could not be read
  uint64_t code_objects = 0;     // distinct code objects read
  uint64_t rechecks = 0;         // cached code objects checked again (see kCodeRecheckNs)
  uint64_t replaced = 0;         // ... and found to be another code object: read afresh
};

// The sentence the capture's summary gives them (" Python frames: ..."), or "" when no stack
// came in. `frames` of the stacks that came in, `shared` of them not carried by the ring but
// taken from their thread's stack before (PyStackChains::FrameCounts).
std::string PythonFramesSummary(const PythonFrameStats& stats, uint64_t frames = 0,
                                uint64_t shared = 0);

// How long a cached code object is trusted before it is checked again.
inline constexpr uint64_t kCodeRecheckNs = 200'000'000;

class PythonFrameResolver {
 public:
  // `now_ns` is a monotonic clock (CLOCK_MONOTONIC unless a test gives its own).
  PythonFrameResolver(const PythonInterpreters& interpreters, ProcessMemory& memory,
                      StringTable& strings, std::function<uint64_t()> now_ns = {});

  // The frames of `pid` for (code, instr) pairs, innermost first; nullopt if any frame cannot
  // be trusted or the process has no checked interpreter. Pairs whose code is 0 (entry frames
  // BPF blanked) are left out.
  std::optional<std::vector<PythonFrame>> Resolve(
      uint32_t pid, const std::vector<std::pair<uint64_t, uint64_t>>& frames);

  // The process exited or exec'd: its code objects are gone.
  void ForgetProcess(uint32_t pid);

  const PythonFrameStats& stats() const { return stats_; }

 private:
  // What a code object's header says, as far as its frames depend on it.
  struct CodeIdentity {
    uint64_t type = 0, filename = 0, qualname = 0, line_table = 0;
    int32_t first_line = 0;
    bool operator==(const CodeIdentity&) const = default;
  };
  struct Code {
    bool valid = false;
    CodeIdentity identity;
    uint64_t checked_ns = 0;  // when `identity` was last read from the process
    StringId file = kEmptyString;
    StringId function = kEmptyString;
    std::vector<uint8_t> line_table;
  };
  // `now` is read once per stack: a stack's frames are all checked against the same time.
  const Code& CodeAt(uint32_t pid, const PythonInterpreter& interp, uint64_t address,
                     uint64_t now);
  // Reads the code object at `address` into `code` (valid only if every check passes).
  void ReadCode(uint32_t pid, const PythonInterpreter& interp, uint64_t address, uint64_t now,
                Code& code);
  // The identity in a code object's header, or nullopt if the header cannot be read.
  std::optional<CodeIdentity> ReadIdentity(uint32_t pid, const CPythonLayout& l,
                                           uint64_t address);
  std::optional<std::string> ReadString(uint32_t pid, const CPythonLayout& l, uint64_t address);

  const PythonInterpreters& interpreters_;
  ProcessMemory& memory_;
  StringTable& strings_;
  std::function<uint64_t()> now_ns_;
  // pid -> code object address -> what it says
  std::unordered_map<uint32_t, std::unordered_map<uint64_t, Code>> codes_;
  PythonFrameStats stats_;
};

}  // namespace xtrace

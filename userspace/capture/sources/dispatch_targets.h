// Where a process's Level Zero loader dispatches each call: every export of the loader is a
// stub that loads a function pointer from the loader's dispatch tables (filled at zeInit from
// the driver's zeGet*ProcAddrTable) and jumps there. With one driver those are the driver's
// own functions, and the tables an application takes itself (zeGet*ProcAddrTable) hold the
// same pointers, so calls through them reach these functions without passing the exports.
// Reading the pointers the process holds, rather than calling the driver's getters in
// xtrace, runs none of the target's code.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "capture/discovery/proc_maps.h"

namespace xtrace {

// The executable segment of `segments` that holds `address`, or null.
const MappedSegment* SegmentAt(std::span<const MappedSegment> segments, uint64_t address);

// Reads the 8-byte word at `address` of the process; nullopt if it cannot.
using ReadWord = std::function<std::optional<uint64_t>(uint64_t address)>;

// The function the dispatch stub whose first bytes are `code`, found at `address` in the
// process, jumps to: the chain of loads it makes (`mov disp(%rip),%reg`, `mov disp(%reg),%reg`,
// past an `endbr64`, register copies, and the `cmpb $0,(%reg); jne` a newer loader tests its
// teardown flag with) followed through `read`, up to its `test %rax,%rax; je` or `jmp *%rax`.
// nullopt when `code` is not such a stub, a read fails, or the pointer is null (the loader is
// not initialised yet, or the driver lacks the function). `slot`, if given, receives the
// address the pointer was loaded from: its place in the loader's own dispatch table.
std::optional<uint64_t> FollowDispatchStub(std::span<const uint8_t> code, uint64_t address,
                                           const ReadWord& read, uint64_t* slot = nullptr);

// A ReadWord for process `pid` (process_vm_readv).
ReadWord ProcessMemoryReader(uint32_t pid);

}  // namespace xtrace

// Where in a Level Zero loader entry point to put its uprobe. Debian's loader stubs begin with
// a RIP-relative mov, which a uprobe must single-step (≈6-8 µs a hit here), then load the
// driver's function pointer, test it and branch: `mov disp(%rip),%rax; mov (%rax),%reg;
// mov disp(%reg),%rax; test %rax,%rax; je`. A uprobe on that `je` is emulated, not
// single-stepped (≈0.7 µs), and still sees the caller's arguments and return address, so
// entry and return probes both work there, provided the stub's scratch register is not an
// argument the probe reads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace xtrace {

// Argument registers in x86-64 order (rdi, rsi, rdx, rcx, r8, r9) as a bit mask.
using ArgRegisterMask = uint8_t;

// The offset from the function's start of the `je` to probe in `code` (the function's first
// bytes), if they are exactly such a stub and its scratch register is none of `needed`; else
// nullopt (probe the entry).
std::optional<uint32_t> FindEmulatedProbeSite(std::span<const uint8_t> code, ArgRegisterMask needed);

}  // namespace xtrace

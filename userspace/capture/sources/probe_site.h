// Where in a Level Zero loader entry point to put its uprobe. Debian's loader stubs begin with
// a RIP-relative mov, which a uprobe must single-step (≈6-8 µs a hit here), then load the
// driver's function pointer, test it and branch: `mov disp(%rip),%rax; mov (%rax),%reg;
// mov disp(%reg),%rax; test %rax,%rax; je`. A uprobe on that `je` is emulated, not
// single-stepped (≈0.7 µs), and still sees the caller's arguments and return address, so
// entry and return probes both work there, provided the stub's scratch register is not an
// argument the probe reads — or, where the stub first saved that argument in r10
// (`mov %rdx,%r10`, as zeCommandListAppendMemoryCopy's does), the probe can read it from r10.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace xtrace {

// Argument registers in x86-64 order (rdi, rsi, rdx, rcx, r8, r9) as a bit mask.
using ArgRegisterMask = uint8_t;

struct EmulatedProbeSite {
  uint32_t offset = 0;  // of the `je`, from the function's start
  // The argument (0-5) whose register the stub overwrote after saving it in r10: a probe
  // there reads that argument from r10. -1: every argument is in its own register.
  int argument_in_r10 = -1;
};

// Where to probe in `code` (the function's first bytes), if they are exactly such a stub and
// its scratch register is none of `needed` — or one of `readable_from_r10` that the stub saved
// in r10 first; else nullopt (probe the entry).
std::optional<EmulatedProbeSite> FindEmulatedProbeSite(std::span<const uint8_t> code,
                                                       ArgRegisterMask needed,
                                                       ArgRegisterMask readable_from_r10 = 0);

}  // namespace xtrace

// Recognises the loader's dispatch stubs byte by byte; see probe_site.h. Anything else (a
// function with a prologue, another compiler's output) is probed at its entry, which is
// always correct, only slower.
#include "capture/sources/probe_site.h"

namespace xtrace {
namespace {

// ModRM register numbers (with REX.R/B extension) of the argument registers, in argument
// order: rdi 7, rsi 6, rdx 2, rcx 1, r8 8, r9 9.
constexpr int kArgRegisters[6] = {7, 6, 2, 1, 8, 9};

// The argument index held in register `reg`, or -1.
int ArgumentIn(int reg) {
  for (int i = 0; i < 6; ++i)
    if (kArgRegisters[i] == reg) return i;
  return -1;
}

}  // namespace

std::optional<EmulatedProbeSite> FindEmulatedProbeSite(std::span<const uint8_t> c,
                                                       ArgRegisterMask needed,
                                                       ArgRegisterMask readable_from_r10) {
  size_t at = 0;
  auto have = [&](size_t n) { return at + n <= c.size(); };
  // mov disp32(%rip),%rax: 48 8b 05 disp32
  if (!have(7) || c[0] != 0x48 || c[1] != 0x8b || c[2] != 0x05) return std::nullopt;
  at = 7;
  // Optionally saving an argument first: mov %reg,%r10 (49 89 /r with rm = r10; REX.R clear,
  // so the source is one of rax-rdi).
  int saved = -1;
  if (have(3) && c[at] == 0x49 && c[at + 1] == 0x89 && (c[at + 2] & 0xc7) == 0xc2) {
    saved = (c[at + 2] >> 3) & 7;
    at += 3;
  }
  // mov (%rax),%reg: REX.W (48, or 4c for r8-r15) 8b, ModRM mod=00 rm=rax.
  if (!have(3) || (c[at] != 0x48 && c[at] != 0x4c) || c[at + 1] != 0x8b ||
      (c[at + 2] & 0xc7) != 0x00)
    return std::nullopt;
  const int table = ((c[at + 2] >> 3) & 7) + (c[at] == 0x4c ? 8 : 0);
  at += 3;
  // mov disp(%table),%rax: REX.W(+B) 8b, ModRM mod=01 (disp8) or 10 (disp32), reg=rax.
  if (!have(3) || (c[at] != 0x48 && c[at] != 0x49) || c[at + 1] != 0x8b) return std::nullopt;
  const uint8_t modrm = c[at + 2];
  const int base = (modrm & 7) + (c[at] == 0x49 ? 8 : 0);
  if (((modrm >> 3) & 7) != 0 || base != table || (modrm & 7) == 4 || (modrm & 7) == 5)
    return std::nullopt;  // not rax, another base, or a SIB/RIP form
  const size_t disp = (modrm >> 6) == 1 ? 1 : (modrm >> 6) == 2 ? 4 : 0;
  if (disp == 0) return std::nullopt;
  at += 3 + disp;
  // test %rax,%rax; je rel8
  if (!have(5) || c[at] != 0x48 || c[at + 1] != 0x85 || c[at + 2] != 0xc0 || c[at + 3] != 0x74)
    return std::nullopt;
  EmulatedProbeSite site{static_cast<uint32_t>(at + 3), -1};
  const int overwritten = ArgumentIn(table);
  if (overwritten < 0 || !(needed & (1u << overwritten))) return site;
  // The probe reads the argument the stub overwrote: fine only if its value waits in r10.
  if (table != saved || !(readable_from_r10 & (1u << overwritten))) return std::nullopt;
  site.argument_in_r10 = overwritten;
  return site;
}

}  // namespace xtrace

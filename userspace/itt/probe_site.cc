// The probe site: a function whose first instruction is a 5-byte NOP, written in assembly so
// that its bytes are exactly what the rule below needs whatever the compiler flags.
//
// The rule: a uprobe costs least on a 5-byte NOP (0f 1f 44 00 00). Kernels with uprobe
// optimization (x86-64, 6.18 here) replace such a NOP, after its first hit, with a call into
// a trampoline that enters the kernel by syscall: ≈0.3-0.4 µs per hit on this machine,
// against ≈0.7 µs for an emulated instruction and 6-8 µs for one that must be single-stepped
// (an endbr64 or a RIP-relative mov, which compilers often put first). So:
//   - the NOP is the first instruction of its own function, at the symbol the capture
//     attaches to: at function entry nothing live lies below the stack pointer, so the
//     trampoline call's push cannot clobber a red zone;
//   - no endbr64 before it (the site is only ever called directly, so IBT needs none);
//   - aligned to 16 bytes, so the 5 bytes never straddle a cache line or page.
// Without a capture attached the site is a call to "nop; ret": a few ns.
#include "itt/probe_site.h"

asm(R"(
	.text
	.globl	xtrace_itt_probe
	.protected	xtrace_itt_probe
	.type	xtrace_itt_probe, @function
	.p2align	4
xtrace_itt_probe:
	.cfi_startproc
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00
	ret
	.cfi_endproc
	.size	xtrace_itt_probe, .-xtrace_itt_probe
)");

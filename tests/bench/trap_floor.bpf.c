// SPDX-License-Identifier: GPL-2.0
/* The benchmark's floor: BPF programs that do nothing, attached where the capture probes
 * sit — uprobes at an instruction, the ioctl trace events or the raw syscall tracepoints. What a call costs with these
 * attached is what the kernel's trap (or tracepoint) alone costs there; the capture's own
 * cost is measured against it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int empty_entry(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int empty_return(void *ctx)
{
	return 0;
}

SEC("tp_btf/sys_enter")
int empty_sys_enter(void *ctx)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int empty_sys_exit(void *ctx)
{
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_ioctl")
int empty_ioctl_enter(void *ctx)
{
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_ioctl")
int empty_ioctl_exit(void *ctx)
{
	return 0;
}

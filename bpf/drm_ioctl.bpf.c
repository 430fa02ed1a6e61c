// SPDX-License-Identifier: GPL-2.0
/* ioctl(2) calls with a DRM command ('d') from traced processes. Entry copies the argument
 * struct and remembers the call per thread; exit adds the result, copies what the kernel wrote
 * back and emits one record. Which driver the fd belongs to, and so what the struct means, is
 * decided in user space.
 *
 * Three attachments of the same bodies; user space loads one pair, the first the kernel takes:
 * - fentry/fexit on the ioctl syscall's entry point (BPF trampolines): only ioctl(2) calls pay,
 *   so a capture costs the rest of the machine's syscalls nothing.
 * - the syscalls:sys_enter_ioctl and sys_exit_ioctl trace events, where trampolines are not
 *   available: only ioctl(2) calls run the programs. Every other syscall takes the kernel's
 *   slow syscall path while they are attached and returns from the event's number check
 *   without running a program. Needs tracefs (libbpf finds the event's id there).
 * - tp_btf/sys_enter and sys_exit, the last resort: every syscall on the machine runs the
 *   program. BTF-typed, so the register frame is read with plain loads, not helper calls. */
#include "drm.bpf.h"
#include "scope.bpf.h"
#include "thread.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* ioctl(2) in the x86-64 syscall table. 32-bit processes enter through the compat table
 * under another number and are not traced. */
#define XT_NR_IOCTL 16

/* Building area for a pending entry: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xt_drm_pending);
} drm_entry_scratch SEC(".maps");

/* Bytes of the argument struct to copy for `cmd` in one direction, 0 if none. */
static __always_inline __u32 xt_drm_copy_len(__u32 cmd, __u32 dir)
{
	__u32 size = XT_IOC_SIZE(cmd);

	if (!(XT_IOC_DIR(cmd) & dir))
		return 0;
	return size > XT_DRM_MAX_ARG ? XT_DRM_MAX_ARG : size;
}

/* The device number and mode of the file behind the current task's `fd`; zeros if there is
 * none. Read here rather than from /proc later: by then the fd may be closed (or reused) and
 * the process gone. */
static __always_inline void xt_fd_file(__u32 fd, __u32 *rdev, __u32 *mode)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds;
	struct file *file = NULL;

	*rdev = 0;
	*mode = 0;
	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
		return;
	*rdev = BPF_CORE_READ(file, f_inode, i_rdev);
	*mode = BPF_CORE_READ(file, f_inode, i_mode);
}

/* Entry of an ioctl(2) from the current thread. */
static __always_inline int xt_drm_enter(__u32 fd, __u32 cmd, __u64 arg)
{
	struct xt_drm_pending *p;
	__u64 pid_tgid;
	__u32 zero = 0, len;

	if (XT_IOC_TYPE(cmd) != XT_DRM_IOCTL_TYPE)
		return 0;
	if (!xt_traced())
		return 0;
	/* Kernel ids: the key stays inside BPF (drm_fence.bpf.c finds the ioctl by it too). */
	pid_tgid = bpf_get_current_pid_tgid();
	p = bpf_map_lookup_elem(&drm_entry_scratch, &zero);
	if (!p)
		return 0;
	p->start_ns = bpf_ktime_get_ns();
	p->fd = fd;
	p->cmd = cmd;
	p->arg = arg;
	p->flags = 0;
	xt_fd_file(p->fd, &p->rdev, &p->mode);
	p->in_len = 0;
	len = xt_drm_copy_len(cmd, XT_IOC_WRITE);
	if (len > 0 && len <= XT_DRM_MAX_ARG) {
		/* NULL or unmapped: the kernel will answer EFAULT; the call is still recorded. */
		if (bpf_probe_read_user(p->in, len, (const void *)p->arg))
			p->flags |= XT_FLAG_ARG_UNREADABLE;
		else
			p->in_len = len;
	}
	if (bpf_map_update_elem(&drm_pending, &pid_tgid, p, BPF_ANY))
		xt_count(XT_CNT_INFLIGHT_FULL);
	return 0;
}

/* Exit of an ioctl(2) with command `cmd` from the current thread, returning `ret`. */
static __always_inline int xt_drm_exit(__u32 cmd, long ret)
{
	struct xt_drm_pending *p;
	struct xt_drm_ioctl *rec;
	struct xt_scratch *buf;
	__u64 pid_tgid, now, size;
	__u32 zero = 0, in_len, out_len = 0, flags;

	if (XT_IOC_TYPE(cmd) != XT_DRM_IOCTL_TYPE)
		return 0;
	/* The filter first: a DRM ioctl of a process nobody traces (another GPU program) costs one
	 * lookup. An entry left pending by a process that stopped being traced meanwhile is
	 * replaced by its thread's next ioctl, or aged out of the LRU map. */
	if (!xt_traced())
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	p = bpf_map_lookup_elem(&drm_pending, &pid_tgid);
	if (!p) {
		/* In the ioctl since before the capture began (a long wait, typically). */
		xt_count(XT_CNT_DRM_UNPAIRED_EXIT);
		return 0;
	}
	now = bpf_ktime_get_ns();
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		goto out;
	rec = (struct xt_drm_ioctl *)buf->data;
	flags = p->flags;
	in_len = p->in_len;
	if (in_len > XT_DRM_MAX_ARG)
		in_len = XT_DRM_MAX_ARG;
	if (in_len > 0 && bpf_probe_read_kernel(buf->data + sizeof(*rec), in_len, p->in))
		in_len = 0;
	/* The kernel writes the struct back only when the call succeeds. */
	if (ret >= 0) {
		out_len = xt_drm_copy_len(p->cmd, XT_IOC_READ);
		if (out_len > XT_DRM_MAX_ARG)
			out_len = 0;
		if (out_len > 0 && bpf_probe_read_user(buf->data + sizeof(*rec) + in_len, out_len,
						       (const void *)p->arg)) {
			flags |= XT_FLAG_ARG_UNREADABLE;
			out_len = 0;
		}
	}
	size = sizeof(*rec) + in_len + out_len;
	if (size > sizeof(*rec) + 2 * XT_DRM_MAX_ARG)
		goto out;
	xt_note_thread(now);
	xt_fill_header(&rec->hdr, XT_REC_DRM_IOCTL, size, flags, p->start_ns, now);
	rec->ret = ret;
	rec->arg = p->arg;
	rec->fd = p->fd;
	rec->cmd = p->cmd;
	rec->rdev = p->rdev;
	rec->mode = p->mode;
	rec->in_len = in_len;
	rec->out_len = out_len;
	rec->reserved[0] = rec->reserved[1] = rec->reserved[2] = 0;
	xt_output(rec, size);
out:
	bpf_map_delete_elem(&drm_pending, &pid_tgid);
	return 0;
}

/* The x86-64 ioctl(2) entry point; 32-bit processes enter through the compat one and are not
 * traced. Its one argument is the syscall's register frame. */
SEC("fentry/__x64_sys_ioctl")
int BPF_PROG(drm_ioctl_entry, const struct pt_regs *regs)
{
	return xt_drm_enter((__u32)regs->di, (__u32)regs->si, regs->dx);
}

SEC("fexit/__x64_sys_ioctl")
int BPF_PROG(drm_ioctl_exit, const struct pt_regs *regs, long ret)
{
	return xt_drm_exit((__u32)regs->si, ret);
}

/* The syscalls:sys_enter_ioctl and sys_exit_ioctl records, as their tracefs format lays them
 * out: the common header, the syscall number, then each argument (or the result) in 8 bytes. */
struct xt_sys_enter_ioctl {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 fd;
	__u64 cmd;
	__u64 arg;
};

struct xt_sys_exit_ioctl {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

SEC("tracepoint/syscalls/sys_enter_ioctl")
int drm_ioctl_tp_enter(struct xt_sys_enter_ioctl *ctx)
{
	return xt_drm_enter((__u32)ctx->fd, (__u32)ctx->cmd, ctx->arg);
}

/* The exit record has no arguments; the command is still in the syscall's saved registers. */
SEC("tracepoint/syscalls/sys_exit_ioctl")
int drm_ioctl_tp_exit(struct xt_sys_exit_ioctl *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	return xt_drm_exit((__u32)regs->si, ctx->ret);
}

/* tp_btf, not tp/syscalls: needs no tracefs. */
SEC("tp_btf/sys_enter")
int BPF_PROG(drm_sys_enter, struct pt_regs *regs, long id)
{
	if (id != XT_NR_IOCTL)
		return 0;
	return xt_drm_enter((__u32)regs->di, (__u32)regs->si, regs->dx);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(drm_sys_exit, struct pt_regs *regs, long ret)
{
	if (regs->orig_ax != XT_NR_IOCTL)
		return 0;
	return xt_drm_exit((__u32)regs->si, ret);
}

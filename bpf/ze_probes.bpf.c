// SPDX-License-Identifier: GPL-2.0
/* Uprobes on the Level Zero loader's API entry points. Entry probes copy the arguments that
 * matter into per-thread state; return probes add the result and output handles and emit one
 * record per call. Naming and correlation happen in user space. */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

enum xt_ze_fn {
	FN_KERNEL_CREATE = 1,
	FN_APPEND_LAUNCH_KERNEL = 2,
};

/* ze_kernel_desc_t: stype@0, pNext@8, flags@16, pKernelName@24 (ze_api.h). */
#define ZE_KERNEL_DESC_NAME_OFFSET 24

static __always_inline struct xt_inflight *xt_exit(__u32 fn, __u64 *now)
{
	__u64 key = xt_inflight_key(fn, (__u32)bpf_get_current_pid_tgid());
	struct xt_inflight *in = bpf_map_lookup_elem(&inflight, &key);

	*now = bpf_ktime_get_ns();
	if (!in && xt_traced(bpf_get_current_pid_tgid() >> 32))
		xt_count(XT_CNT_ORPHAN_RETURN);
	return in;
}

static __always_inline void xt_forget(__u32 fn)
{
	__u64 key = xt_inflight_key(fn, (__u32)bpf_get_current_pid_tgid());

	bpf_map_delete_elem(&inflight, &key);
}

/* ze_result_t zeKernelCreate(ze_module_handle_t, const ze_kernel_desc_t *, ze_kernel_handle_t *) */
SEC("uprobe")
int BPF_KPROBE(ze_kernel_create_entry, void *module, const void *desc, void **out_kernel)
{
	struct xt_inflight *in = xt_enter(FN_KERNEL_CREATE);
	const char *name = NULL;

	if (!in)
		return 0;
	in->arg[0] = (__u64)module;
	in->arg[1] = (__u64)out_kernel;
	if (bpf_probe_read_user(&name, sizeof(name), (const char *)desc + ZE_KERNEL_DESC_NAME_OFFSET))
		in->flags |= XT_FLAG_ARG_UNREADABLE;
	in->arg[2] = (__u64)name;
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(ze_kernel_create_return, long ret)
{
	__u32 zero = 0;
	struct xt_scratch *buf;
	struct xt_kernel_create *rec;
	struct xt_inflight *in;
	const char *name;
	__u64 now, kernel = 0;
	long len = 0;
	__u8 last = 0;

	in = xt_exit(FN_KERNEL_CREATE, &now);
	if (!in)
		return 0;
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		goto out;
	rec = (struct xt_kernel_create *)buf->data;
	rec->module = in->arg[0];
	rec->result = (__s32)ret;
	/* The handle is written only on success; reading it on failure would report garbage. */
	if (ret == 0 && bpf_probe_read_user(&kernel, sizeof(kernel), (void *)in->arg[1]))
		in->flags |= XT_FLAG_ARG_UNREADABLE;
	rec->kernel = kernel;

	/* The name is read at return, not entry: BPF cannot fault pages in, and a name in a
	 * never-touched .rodata page is only resident once the driver has read it. */
	name = (const char *)in->arg[2];
	if (name) {
		len = bpf_probe_read_user_str(buf->data + sizeof(*rec), XT_MAX_NAME, name);
		if (len < 0) {
			in->flags |= XT_FLAG_ARG_UNREADABLE;
			len = 0;
		} else if (len > 0) {
			len -= 1; /* drop the NUL */
			/* A full buffer means the name may go on: look at the byte we cut. */
			if (len == XT_MAX_NAME - 1 &&
			    !bpf_probe_read_user(&last, 1, name + XT_MAX_NAME - 1) && last)
				in->flags |= XT_FLAG_TRUNCATED;
		}
	}
	if (len > XT_MAX_NAME)
		len = XT_MAX_NAME;
	rec->name_len = len;
	xt_fill_header(&rec->hdr, XT_REC_KERNEL_CREATE, sizeof(*rec) + len, in, now);
	xt_output(rec, sizeof(*rec) + len);
out:
	xt_forget(FN_KERNEL_CREATE);
	return 0;
}

/* ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t, ze_kernel_handle_t,
 *     const ze_group_count_t *, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
 *     ze_event_handle_t *phWaitEvents) */
SEC("uprobe")
int BPF_KPROBE(ze_append_launch_kernel_entry, void *cmdlist, void *kernel, const void *groups,
	       void *signal_event, __u32 num_wait_events)
{
	struct xt_inflight *in = xt_enter(FN_APPEND_LAUNCH_KERNEL);

	if (!in)
		return 0;
	in->arg[0] = (__u64)cmdlist;
	in->arg[1] = (__u64)kernel;
	in->arg[2] = (__u64)signal_event;
	in->arg[3] = num_wait_events;
	if (bpf_probe_read_user(in->group_count, sizeof(in->group_count), groups))
		in->flags |= XT_FLAG_ARG_UNREADABLE;
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(ze_append_launch_kernel_return, long ret)
{
	struct xt_launch_kernel rec = {};
	struct xt_inflight *in;
	__u64 now;

	in = xt_exit(FN_APPEND_LAUNCH_KERNEL, &now);
	if (!in)
		return 0;
	rec.command_list = in->arg[0];
	rec.kernel = in->arg[1];
	rec.signal_event = in->arg[2];
	rec.num_wait_events = (__u32)in->arg[3];
	rec.group_count[0] = in->group_count[0];
	rec.group_count[1] = in->group_count[1];
	rec.group_count[2] = in->group_count[2];
	rec.result = (__s32)ret;
	xt_fill_header(&rec.hdr, XT_REC_LAUNCH_KERNEL, sizeof(rec), in, now);
	xt_output(&rec, sizeof(rec));
	xt_forget(FN_APPEND_LAUNCH_KERNEL);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/* Uprobes on the Level Zero loader's API entry points. Entry probes copy the arguments that
 * matter into per-thread state; return probes add the result and output handles and emit one
 * record per call. Naming and correlation happen in user space. */
#include "pairing.bpf.h"
#include "query.bpf.h"
#include "python_frames.bpf.h"
#include "scope.bpf.h"
#include "xtrace/ze_tables.h"

char LICENSE[] SEC("license") = "GPL";

/* Pairing ids of the dedicated programs (pairing.bpf.h, records.h enum xt_ze_pairing_fn):
 * above every generic call's fn, which the cookie holds in 8 bits. The three launch variants
 * share one. */
#define FN_KERNEL_CREATE XT_ZE_PAIR_KERNEL_CREATE
#define FN_APPEND_LAUNCH_KERNEL XT_ZE_PAIR_APPEND_LAUNCH_KERNEL

/* ze_kernel_desc_t: stype@0, pNext@8, flags@16, pKernelName@24 (ze_api.h). */
#define ZE_KERNEL_DESC_NAME_OFFSET 24

/* ze_result_t zeKernelCreate(ze_module_handle_t, const ze_kernel_desc_t *, ze_kernel_handle_t *) */
SEC("uprobe")
int BPF_KPROBE(ze_kernel_create_entry, void *module, const void *desc, void **out_kernel)
{
	struct xt_call_slot *in = xt_enter_naming(FN_KERNEL_CREATE);
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
	const char *name;
	__u64 now = bpf_ktime_get_ns(), kernel = 0;
	struct xt_call_slot *in = xt_exit(FN_KERNEL_CREATE);
	long len = 0;
	__u8 last = 0;

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
	xt_query_note_made(in, kernel);

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
	xt_fill_header(&rec->hdr, XT_REC_KERNEL_CREATE, sizeof(*rec) + len, in->flags, in->start_ns,
		       now);
	xt_output(rec, sizeof(*rec) + len);
out:
	xt_forget(in);
	return 0;
}

/* ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t, ze_kernel_handle_t,
 *     const ze_group_count_t *, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
 *     ze_event_handle_t *phWaitEvents) */
SEC("uprobe")
int BPF_KPROBE(ze_append_launch_kernel_entry, void *cmdlist, void *kernel, const void *groups,
	       void *signal_event, __u32 num_wait_events)
{
	struct xt_call_slot *in = xt_enter(FN_APPEND_LAUNCH_KERNEL);

	if (!in)
		return 0;
	in->arg[0] = (__u64)cmdlist;
	in->arg[1] = (__u64)kernel;
	in->arg[2] = (__u64)signal_event;
	in->arg[3] = num_wait_events;
	if (bpf_get_attach_cookie(ctx) == XT_LAUNCH_WITH_ARGUMENTS) {
		/* ze_group_count_t by value: x and y in rdx, z in rcx. hSignalEvent and
		 * numWaitEvents are the 7th and 8th parameters: at sp + 24 and sp + 32 (the return
		 * address at sp, pArguments and pNext before them). */
		__u64 stack[2] = {};
		__u64 xy = PT_REGS_PARM3(ctx);

		in->group_count[0] = (__u32)xy;
		in->group_count[1] = (__u32)(xy >> 32);
		in->group_count[2] = (__u32)PT_REGS_PARM4(ctx);
		if (bpf_probe_read_user(stack, sizeof(stack), (void *)(PT_REGS_SP(ctx) + 24)))
			in->flags |= XT_FLAG_ARG_UNREADABLE;
		in->arg[2] = stack[0];
		in->arg[3] = (__u32)stack[1];
	} else if (bpf_get_attach_cookie(ctx) == XT_LAUNCH_WITH_PARAMETERS) {
		/* (hCommandList, hKernel, pGroupCounts, pNext, hSignalEvent, numWaitEvents, ...):
		 * the group counts by pointer, as a plain launch's, and pNext before the event. */
		in->arg[2] = PT_REGS_PARM5(ctx);
		in->arg[3] = (__u32)ctx->r9; /* libbpf 1.1 has no PT_REGS_PARM6 */
		if (bpf_probe_read_user(in->group_count, sizeof(in->group_count), groups))
			in->flags |= XT_FLAG_ARG_UNREADABLE;
	} else if (bpf_get_attach_cookie(ctx) == XT_LAUNCH_INDIRECT) {
		/* An indirect launch's group counts are in device memory, written by the GPU: not
		 * ours to read, and not known yet anyway. (A failed read zeroes them too.) */
		__builtin_memset(in->group_count, 0, sizeof(in->group_count));
	} else if (bpf_probe_read_user(in->group_count, sizeof(in->group_count), groups)) {
		in->flags |= XT_FLAG_ARG_UNREADABLE;
	}
	/* Every kind, the launch with arguments too: SYCL's v2 adapter launches only that way,
	 * so a kernel made before an attach is asked for at its first launch of any kind. */
	xt_query_unknown(ctx, in, (__u64)kernel, XT_QUERY_KERNEL);
	/* Its list's device and engine, and whether its signal event can carry timestamps: each
	 * asked in the same hold (the first ask takes it, the others ride on it). */
	xt_query_unknown(ctx, in, in->arg[0], XT_QUERY_COMMAND_LIST);
	xt_query_unknown(ctx, in, in->arg[2], XT_QUERY_EVENT);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(ze_append_launch_kernel_return, long ret)
{
	__u64 now = bpf_ktime_get_ns();
	struct xt_call_slot *in = xt_exit(FN_APPEND_LAUNCH_KERNEL);
	struct xt_launch_kernel *rec, with_frames;
	__u32 staged;

	if (!in)
		return 0;
	/* With Python frames, the launch goes out with them in one ring write; without, it is
	 * filled in place in the ring. */
	staged = xt_py_stage_here(in->start_ns, now);
	rec = staged ? &with_frames : xt_reserve(sizeof(*rec), XT_REC_LAUNCH_KERNEL);
	if (rec) {
		xt_fill_header(&rec->hdr, XT_REC_LAUNCH_KERNEL, sizeof(*rec), in->flags, in->start_ns,
			       now);
		rec->command_list = in->arg[0];
		rec->kernel = in->arg[1];
		rec->signal_event = in->arg[2];
		rec->num_wait_events = (__u32)in->arg[3];
		rec->group_count[0] = in->group_count[0];
		rec->group_count[1] = in->group_count[1];
		rec->group_count[2] = in->group_count[2];
		rec->result = (__s32)ret;
		rec->kind = (__u32)bpf_get_attach_cookie(ctx);
		if (staged)
			xt_py_output_with(staged, rec, sizeof(*rec));
		else
			xt_submit(rec);
	}
	xt_forget(in);
	return 0;
}

/* Generic calls: one entry and one return program for every function recorded as
 * struct xt_ze_call; the uprobe's cookie says which function it is and what to copy (layout
 * in records.h). The entry only saves the argument registers (and up to two stack arguments);
 * all pointer reads happen at return, when inputs are still valid and outputs are written. */
SEC("uprobe")
int BPF_KPROBE(ze_call_entry)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	struct xt_call_slot *st = xt_enter(XT_ZE_COOKIE_FN(cookie));
	__u32 stack_count, moved;

	if (!st)
		return 0;
	st->arg[0] = PT_REGS_PARM1(ctx);
	st->arg[1] = PT_REGS_PARM2(ctx);
	st->arg[2] = PT_REGS_PARM3(ctx);
	st->arg[3] = PT_REGS_PARM4(ctx);
	st->arg[4] = PT_REGS_PARM5(ctx);
	st->arg[5] = ctx->r9; /* libbpf 1.1's bpf_tracing.h has no PT_REGS_PARM6 (x86-64: r9) */
	st->arg[6] = 0;
	st->arg[7] = 0;
	moved = XT_ZE_COOKIE_R10_ARG(cookie);
	if (moved >= 1 && moved <= 6)
		st->arg[moved - 1] = ctx->r10;
	stack_count = XT_ZE_COOKIE_STACK_COUNT(cookie);
	if (stack_count) {
		/* At entry the return address is at sp; argument n (n >= 6) at sp + 8 * (n - 5). */
		__u64 at = PT_REGS_SP(ctx) + 8 * (XT_ZE_COOKIE_STACK_FIRST(cookie) - 5);
		bpf_probe_read_user(&st->arg[6], stack_count > 1 ? 16 : 8, (void *)at);
	}
	/* An execution's engine: the queue, or the immediate list regular lists (or a graph) are
	 * appended to. */
	if (XT_ZE_COOKIE_FN(cookie) == XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS)
		xt_query_unknown(ctx, st, st->arg[0], XT_QUERY_COMMAND_QUEUE);
	else if (XT_ZE_COOKIE_FN(cookie) == XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP ||
		 XT_ZE_COOKIE_FN(cookie) == XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP)
		xt_query_unknown(ctx, st, st->arg[0], XT_QUERY_COMMAND_LIST);
	return 0;
}

/* One of the cookie's reads into `dst` (XT_ZE_READ_MAX bytes). A null pointer is not an
 * error: Level Zero's count/array idiom passes one to ask for the count only. */
static __always_inline void ze_read(__u32 spec, const struct xt_call_slot *st, __s32 result,
				    __u64 *dst, __u32 *flags)
{
	__u32 size = XT_ZE_READ_SIZE(spec);
	__u64 ptr;

	if (size == 0 || (XT_ZE_READ_OUTPUT(spec) && result != 0))
		return;
	if (size > XT_ZE_READ_MAX)
		size = XT_ZE_READ_MAX;
	ptr = st->arg[XT_ZE_READ_ARG(spec)];
	if (!ptr)
		return;
	if (bpf_probe_read_user(dst, size, (void *)(ptr + XT_ZE_READ_OFFSET(spec))))
		*flags |= XT_FLAG_ARG_UNREADABLE;
}

/* Asks the capture to look at the current process again (a process-maps record) and probe
 * where the loader's dispatch tables point (capture/sources/ze_source.cc). Where the capture
 * holds processes at library loads, the process is held until it has, so that no call through
 * a table can come first. `why` (XT_FLAG_TABLE_GETTER or XT_FLAG_ZE_INIT) tells the capture
 * what such a hold was for. */
static __always_inline void ze_rescan(__u64 now, __u32 why)
{
	const struct xt_capture_config *cfg = xt_config();
	struct xt_record_header rec = {};
	__u32 pid = 0, tgid = 0;

	if (!cfg || !xt_current_ids(cfg, &pid, &tgid))
		return;
	xt_fill_header_of(&rec, XT_REC_PROCESS_MAPS, sizeof(rec), why, now, now, tgid, pid);
	rec.flags |= xt_hold(cfg, tgid, pid, XT_HOLD_LIBRARY, now);
	if (xt_output_waking(&rec, sizeof(rec), BPF_RB_FORCE_WAKEUP) && (rec.flags & XT_FLAG_HELD))
		xt_unhold(tgid);
}

/* Processes that took a function table from their loader themselves (zeGet*ProcAddrTable):
 * with one driver the table holds the driver's own functions, which no loader export passes.
 * The capture probes where the loader's dispatch points for these processes alone
 * (ZeSource::ProcessScanned), so that every other process keeps one trap per call. Keyed by
 * process id as the collector numbers it; user space forgets a process at its exit and exec. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XT_MAX_TABLE_TAKERS);
	__type(key, __u32);
	__type(value, __u8);
} table_takers SEC(".maps");

/* The entry of a loader's or a driver's zeGet*ProcAddrTable. The loader calls its own getters
 * too, to fill its dispatch at zeInit (through its PLT, so they pass this probe): the caller's
 * return address tells them apart, inside the loader's code or not, which the cookie bounds
 * around this function (xtrace/ze_tables.h). It calls its driver's getters inside its zeInit
 * or zeInitDrivers, whose entry has taken the thread's call slot: a getter called with a
 * Level Zero call under way is never the application's. An application's first call marks
 * the process and asks for a scan, held: after zeInit the dispatch is filled and the scan
 * probes the functions the table is about to hand out; before it, zeInit's own scan does; a
 * driver's getters called without the loader (its Global table's pfnInit instead of zeInit)
 * have their functions probed where xtrace's own Level Zero found that driver build's. */
SEC("uprobe")
int BPF_KPROBE(ze_table_getter_entry)
{
	const struct xt_capture_config *cfg = xt_config();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 ip = PT_REGS_IP(ctx), caller = 0;
	struct xt_thread_state *st;
	__u32 pid = 0, tgid = 0;
	__u8 one = 1;

	if (!xt_traced())
		return 0;
	if (bpf_probe_read_user(&caller, sizeof(caller), (void *)PT_REGS_SP(ctx)))
		return 0;
	if (caller >= ip - XT_ZE_TABLE_COOKIE_BEFORE(cookie) &&
	    caller < ip + XT_ZE_TABLE_COOKIE_FROM(cookie))
		return 0; /* the loader filling its own dispatch */
	st = xt_thread_state(0);
	if (st && st->call.start_ns)
		return 0; /* the loader's zeInit filling its dispatch from its driver's getters */
	if (!cfg || !xt_current_ids(cfg, &pid, &tgid))
		return 0;
	if (bpf_map_lookup_elem(&table_takers, &tgid))
		return 0; /* said already: its scans probe the tables' functions */
	bpf_map_update_elem(&table_takers, &tgid, &one, BPF_ANY);
	ze_rescan(bpf_ktime_get_ns(), XT_FLAG_TABLE_GETTER);
	return 0;
}

/* Objects asked about in a process attached mid-run (query.bpf.h) that a successful call made
 * or destroyed: made ones are known, destroyed ones forgotten. Every such create's new handle
 * is its second read, at data[4] (model/ze_api_table.h). */
static __always_inline void ze_note_object(struct xt_call_slot *st, __u32 fn,
					   const struct xt_ze_call *rec)
{
	switch (fn) {
	case XT_ZE_COMMAND_LIST_CREATE:
	case XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE:
	case XT_ZE_COMMAND_QUEUE_CREATE:
	case XT_ZE_EVENT_CREATE:
	case XT_ZE_EVENT_COUNTER_BASED_CREATE:
	case XT_ZE_EX_COUNTER_BASED_EVENT_CREATE2:
		xt_query_note_made(st, rec->data[4]);
		break;
	case XT_ZE_KERNEL_DESTROY:
	case XT_ZE_COMMAND_LIST_DESTROY:
	case XT_ZE_COMMAND_QUEUE_DESTROY:
	case XT_ZE_EVENT_DESTROY:
		xt_query_note_destroyed(st, rec->arg[0]);
		break;
	}
}

SEC("uretprobe")
int BPF_KRETPROBE(ze_call_return, long ret)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 fn = XT_ZE_COOKIE_FN(cookie);
	__u64 now = bpf_ktime_get_ns();
	struct xt_call_slot *st = xt_exit(fn);
	struct xt_ze_call rec = {};
	__u32 flags, staged = 0;

	if (!st)
		return 0;
	flags = st->flags;
	rec.fn = fn;
	rec.result = (__s32)ret;
	__builtin_memcpy(rec.arg, st->arg, sizeof(rec.arg));
	ze_read(XT_ZE_COOKIE_READ(cookie, 0), st, rec.result, &rec.data[0], &flags);
	ze_read(XT_ZE_COOKIE_READ(cookie, 1), st, rec.result, &rec.data[4], &flags);
	if (xt_py_wants_ze(fn))
		staged = xt_py_stage_here(st->start_ns, now);
	xt_fill_header(&rec.hdr, XT_REC_ZE_CALL, sizeof(rec), flags, st->start_ns, now);
	xt_py_output_with(staged, &rec, sizeof(rec));
	if (rec.result == 0)
		ze_note_object(st, fn, &rec);
	xt_forget(st);
	/* After zeInit or zeInitDrivers the loader's dispatch tables hold the driver's functions,
	 * which a process that takes the tables calls without passing the exports. */
	if ((fn == XT_ZE_INIT || fn == XT_ZE_INIT_DRIVERS) && rec.result == 0)
		ze_rescan(now, XT_FLAG_ZE_INIT);
	return 0;
}

/* zeCommandQueueExecuteCommandLists and zeCommandListImmediateAppendCommandListsExp (the
 * cookie says which; both take the count and the array second and third): entry is
 * ze_call_entry; the return copies the list handles, the one variable-length argument a
 * profiler needs whole. */
SEC("uretprobe")
int BPF_KRETPROBE(ze_execute_return, long ret)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 fn = XT_ZE_COOKIE_FN(bpf_get_attach_cookie(ctx));
	struct xt_call_slot *st = xt_exit(fn);
	struct xt_ze_execute *rec;
	struct xt_scratch *buf;
	__u32 zero = 0, flags, n, copy, bytes;

	if (!st)
		return 0;
	flags = st->flags;
	xt_py_stack_here(st->start_ns, now);
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		goto out;
	rec = (struct xt_ze_execute *)buf->data;
	rec->queue = st->arg[0];
	n = (__u32)st->arg[1];
	rec->num_lists = n;
	rec->fence = st->arg[3];
	rec->result = (__s32)ret;
	rec->fn = fn;
	rec->num_wait_events = (__u32)st->arg[4];
	copy = n;
	if (copy > XT_MAX_EXEC_LISTS) {
		copy = XT_MAX_EXEC_LISTS;
		flags |= XT_FLAG_TRUNCATED;
	}
	/* The mask changes nothing (copy <= XT_MAX_EXEC_LISTS) but gives the verifier a bound
	 * the compiler cannot reorder away. */
	bytes = (copy * 8) & (2 * XT_MAX_EXEC_LISTS * 8 - 1);
	if (bytes && bpf_probe_read_user(buf->data + sizeof(*rec), bytes, (void *)st->arg[2])) {
		flags |= XT_FLAG_ARG_UNREADABLE;
		bytes = 0;
	}
	xt_fill_header(&rec->hdr, XT_REC_ZE_EXECUTE, sizeof(*rec) + bytes, flags, st->start_ns, now);
	xt_output(rec, sizeof(*rec) + bytes);
out:
	xt_forget(st);
	return 0;
}

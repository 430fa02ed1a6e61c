// SPDX-License-Identifier: GPL-2.0
/* ITT labels. One uprobe on libxtrace_itt.so's probe site sees every ITT call of a process
 * that loaded the collector; three uprobes on PyTorch's torch::profiler::itt_range_push,
 * itt_range_pop and itt_mark see emit_itt() ranges with no collector at all. A domain or
 * string handle's text is sent once per process, after which events carry only the handle.
 * __itt_pause/__itt_resume/__itt_detach change the process's collection state, which every
 * source's programs check (scope.bpf.h), and are recorded as transitions. */
#include "scope.bpf.h"
#include "thread.bpf.h"
#include "python_frames.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Handles remembered per process: far more than the few hundred names a framework uses. */
#define ITT_MAX_HANDLES 65536

struct itt_handle_key {
	__u64 handle;
	__u32 tgid; /* as the collector numbers it: user space forgets a process's handles by it */
	__u32 kind;
};

/* Handles whose text has reached user space, per process. LRU: an evicted handle's text is
 * simply sent again. User space forgets a process's handles when the process goes away. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ITT_MAX_HANDLES);
	__type(key, struct itt_handle_key);
	__type(value, __u8);
} itt_handles SEC(".maps");

/* Copies the NUL-terminated string at `src` to `dst` (at most XT_MAX_ITT_NAME bytes, NUL
 * dropped); returns its length and flags an unreadable or cut string in `flags`. */
static __always_inline __u32 itt_copy_name(__u8 *dst, const char *src, __u32 *flags)
{
	long len;
	__u8 next = 0;

	if (!src)
		return 0;
	len = bpf_probe_read_user_str(dst, XT_MAX_ITT_NAME, src);
	if (len <= 0) {
		*flags |= XT_FLAG_ARG_UNREADABLE;
		return 0;
	}
	len -= 1;
	if (len == XT_MAX_ITT_NAME - 1 && !bpf_probe_read_user(&next, 1, src + len) && next)
		*flags |= XT_FLAG_TRUNCATED;
	if (len > XT_MAX_ITT_NAME)
		len = XT_MAX_ITT_NAME;
	return (__u32)len;
}

/* Sends `text` as the name of `handle` (0 for a thread name); 0 when it reached the ring. */
static __always_inline int itt_send_name(__u64 handle, __u32 kind, const char *text, __u32 flags,
					 __u64 now)
{
	__u32 zero = 0, len;
	struct xt_scratch *buf = bpf_map_lookup_elem(&scratch, &zero);
	struct xt_itt_name *rec;

	if (!buf)
		return -1;
	rec = (struct xt_itt_name *)buf->data;
	__builtin_memset(rec, 0, sizeof(*rec));
	len = itt_copy_name(buf->data + sizeof(*rec), text, &flags);
	xt_fill_header(&rec->hdr, XT_REC_ITT_NAME, sizeof(*rec) + len, flags, now, now);
	rec->handle = handle;
	rec->kind = kind;
	rec->name_len = len;
	/* A thread name is a call (__itt_thread_set_name); a handle's text is not. */
	if (kind == XT_ITT_NAME_THREAD)
		return xt_output(rec, sizeof(*rec) + len);
	return xt_output_bookkeeping(rec, sizeof(*rec) + len);
}

/* Sends a domain's or string handle's text the first time this process uses it. */
static __always_inline void itt_note_handle(__u32 tgid, __u64 handle, __u32 kind, __u64 now)
{
	struct itt_handle_key key = {.handle = handle, .tgid = tgid, .kind = kind};
	__u64 offset = kind == XT_ITT_NAME_DOMAIN ? XT_ITT_DOMAIN_NAME_OFFSET : XT_ITT_STRING_TEXT_OFFSET;
	const char *text = NULL;
	__u32 flags = 0;
	__u8 one = 1;

	if (!handle || bpf_map_lookup_elem(&itt_handles, &key))
		return;
	if (bpf_probe_read_user(&text, sizeof(text), (const void *)(handle + offset)))
		flags |= XT_FLAG_ARG_UNREADABLE;
	/* Remembered only once user space has it, so a dropped name is sent with the next use. */
	if (itt_send_name(handle, kind, text, flags, now) == 0)
		bpf_map_update_elem(&itt_handles, &key, &one, BPF_ANY);
}

/* __itt_pause / __itt_resume / __itt_detach: detach is final; a call that changes nothing
 * (resume while collecting) records nothing. */
static __always_inline void itt_change_state(__u32 tgid, __u64 op, __u64 now)
{
	__u32 *current = bpf_map_lookup_elem(&collection_state, &tgid);
	__u32 previous = current ? *current : XT_COLLECT_ON;
	__u32 next = op == XT_ITT_PAUSE ? XT_COLLECT_PAUSED
		   : op == XT_ITT_RESUME ? XT_COLLECT_ON : XT_COLLECT_DETACHED;
	struct xt_itt_state rec = {};

	if (previous == XT_COLLECT_DETACHED || next == previous)
		return;
	if (bpf_map_update_elem(&collection_state, &tgid, &next, BPF_ANY))
		return;
	xt_filter_changed();
	xt_note_thread(now);
	xt_fill_header(&rec.hdr, XT_REC_ITT_STATE, sizeof(rec), 0, now, now);
	rec.state = next;
	rec.previous = previous;
	xt_output(&rec, sizeof(rec));
}

/* void xtrace_itt_probe(op, domain, name, id_d1, id_d2, extra): see XT_ITT_PROBE_SYMBOL.
 * (libbpf 1.1's BPF_KPROBE stops at five arguments; the sixth is read from r9.) */
SEC("uprobe")
int itt_probe(struct pt_regs *ctx)
{
	__u64 op = PT_REGS_PARM1(ctx);
	__u64 domain = PT_REGS_PARM2(ctx);
	__u64 name = PT_REGS_PARM3(ctx);
	const struct xt_capture_config *cfg = xt_config();
	__u32 tgid = xt_current_tgid(cfg);
	struct xt_itt_event rec = {};
	__u32 staged = 0;
	__u64 now;

	if (!xt_selected(cfg, tgid))
		return 0;
	if (op == XT_ITT_PAUSE || op == XT_ITT_RESUME || op == XT_ITT_DETACH) {
		itt_change_state(tgid, op, bpf_ktime_get_ns());
		return 0;
	}
	if (!xt_collecting(tgid))
		return 0;
	now = bpf_ktime_get_ns();
	xt_note_thread(now);
	if (op == XT_ITT_THREAD_NAME) {
		itt_send_name(0, XT_ITT_NAME_THREAD, (const char *)name, 0, now);
		return 0;
	}
	itt_note_handle(tgid, domain, XT_ITT_NAME_DOMAIN, now);
	itt_note_handle(tgid, name, XT_ITT_NAME_STRING, now);
	/* Python frames at a task's begin and end: the frames' slices then enclose the task. */
	if (op == XT_ITT_TASK_BEGIN || op == XT_ITT_TASK_BEGIN_FN || op == XT_ITT_TASK_END ||
	    op == XT_ITT_MARKER)
		staged = xt_py_stage(tgid, now, now);
	xt_fill_header(&rec.hdr, XT_REC_ITT_EVENT, sizeof(rec), 0, now, now);
	rec.domain = domain;
	rec.name = name;
	rec.id[0] = PT_REGS_PARM4(ctx);
	rec.id[1] = PT_REGS_PARM5(ctx);
	rec.extra = ctx->r9;
	rec.op = (__u16)op;
	rec.origin = XT_ITT_FROM_COLLECTOR;
	xt_py_output_with(staged, &rec, sizeof(rec));
	return 0;
}

/* A PyTorch range event: the name is a plain string, different on every call, so it travels
 * inline rather than as a handle. */
static __always_inline int torch_event(__u16 op, const char *msg)
{
	__u32 zero = 0, flags = 0, len;
	struct xt_scratch *buf;
	struct xt_itt_event *rec;
	__u64 now;

	if (!xt_traced())
		return 0;
	now = bpf_ktime_get_ns();
	xt_note_thread(now);
	xt_py_stack_here(now, now);
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		return 0;
	rec = (struct xt_itt_event *)buf->data;
	__builtin_memset(rec, 0, sizeof(*rec));
	len = itt_copy_name(buf->data + sizeof(*rec), msg, &flags);
	xt_fill_header(&rec->hdr, XT_REC_ITT_EVENT, sizeof(*rec) + len, flags, now, now);
	rec->op = op;
	rec->origin = XT_ITT_FROM_PYTORCH;
	rec->name_len = len;
	xt_output(rec, sizeof(*rec) + len);
	return 0;
}

/* void torch::profiler::itt_range_push(const char* msg), itt_range_pop() and
 * itt_mark(const char* msg): the cookie is the event's op (XT_ITT_TASK_BEGIN, XT_ITT_TASK_END,
 * XT_ITT_MARKER). One program for the three, as the verifier checks each program whole,
 * Python frames' hook and all, at every capture's start. */
SEC("uprobe")
int BPF_KPROBE(torch_range, const char *msg)
{
	const __u16 op = (__u16)bpf_get_attach_cookie(ctx);

	return torch_event(op, op == XT_ITT_TASK_END ? NULL : msg);
}

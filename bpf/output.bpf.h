/* Records to user space: the one header filler, and writing to the ring with drops counted
 * (overall and per process). A record is either built (on the stack or in scratch) and
 * copied with xt_output, or reserved in the ring with xt_reserve, filled in place and
 * published with xt_submit. BPF-only. */
#ifndef XTRACE_OUTPUT_BPF_H
#define XTRACE_OUTPUT_BPF_H

#include "ids.bpf.h"

/* Pending bytes in the ring at which a write wakes the reader; set as rodata between open and
 * load. Below it records are written with BPF_RB_NO_WAKEUP (≈130 ns instead of ≈800 ns per
 * write) and the reader polls on a timer, so a busy target never pays for a wakeup per
 * record. */
const volatile __u64 wakeup_bytes = 1 << 20;

static __always_inline void xt_count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &which);

	if (v)
		*v += 1;
}

/* The drop counter of a record's source (enum xt_record_type ranges). */
static __always_inline __u32 xt_drop_counter(__u16 type)
{
	if (type == XT_REC_KERNEL_CREATE || type == XT_REC_LAUNCH_KERNEL || (type >= 16 && type <= 63))
		return XT_CNT_DROPPED_ZE;
	if (type >= 64 && type <= 79)
		return XT_CNT_DROPPED_ITT;
	if (type >= 80 && type <= 95)
		return XT_CNT_DROPPED_DRM;
	return XT_CNT_DROPPED_OTHER;
}

/* A record of the current process was lost: the ring was full. Counted in all, in
 * `source_counter` (an XT_CNT_DROPPED_* counter) and by process. */
static __always_inline void xt_count_drop_in(__u32 source_counter)
{
	__u32 pid = 0, tgid = 0;
	__u64 one = 1, *n;

	xt_count(XT_CNT_DROPPED);
	xt_count(source_counter);
	if (!xt_current_ids(xt_config(), &pid, &tgid))
		return;
	n = bpf_map_lookup_elem(&drops_by_pid, &tgid);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&drops_by_pid, &tgid, &one, BPF_NOEXIST);
}

/* A record of type `type` of the current process was lost, counted with its source. */
static __always_inline void xt_count_drop(__u16 type)
{
	xt_count_drop_in(xt_drop_counter(type));
}

/* Fills a record header. `pid` and `tid` are the process and thread it is about, as the
 * collector numbers them (ids.bpf.h). */
static __always_inline void xt_fill_header_of(struct xt_record_header *hdr, __u16 type,
					      __u16 size, __u32 flags, __u64 start_ns,
					      __u64 end_ns, __u32 pid, __u32 tid)
{
	hdr->type = type;
	hdr->size = size;
	hdr->flags = flags;
	hdr->pid = pid;
	hdr->tid = tid;
	hdr->start_ns = start_ns;
	hdr->end_ns = end_ns;
}

/* The same, for a record about the current thread: what nearly every record is. */
static __always_inline void xt_fill_header(struct xt_record_header *hdr, __u16 type, __u16 size,
					   __u32 flags, __u64 start_ns, __u64 end_ns)
{
	__u32 pid = 0, tgid = 0;

	xt_current_ids(xt_config(), &pid, &tgid);
	xt_fill_header_of(hdr, type, size, flags, start_ns, end_ns, tgid, pid);
}

/* No wakeup per record: only once wakeup_bytes are pending. */
static __always_inline __u64 xt_wakeup_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									  : BPF_RB_NO_WAKEUP;
}

/* Copies a built record into the ring with BPF_RB_* `wakeup` flags; -1 (counted) if full. */
static __always_inline int xt_output_waking(void *rec, __u64 size, __u64 wakeup)
{
	if (bpf_ringbuf_output(&events, rec, size, wakeup)) {
		xt_count_drop(((struct xt_record_header *)rec)->type);
		return -1;
	}
	return 0;
}

/* Copies a built record into the ring, waking the reader only past wakeup_bytes. */
static __always_inline int xt_output(void *rec, __u64 size)
{
	return xt_output_waking(rec, size, xt_wakeup_flags());
}

/* Copies a bookkeeping record that carries no call of its source's (an ITT handle's text,
 * sent before the first event naming the handle, and sent again with the next use if it
 * is lost): a loss counts with the other bookkeeping records (XT_CNT_DROPPED_OTHER, as a
 * thread name's does), so a source's drops count its lost calls and nothing else. */
static __always_inline int xt_output_bookkeeping(void *rec, __u64 size)
{
	if (bpf_ringbuf_output(&events, rec, size, xt_wakeup_flags())) {
		xt_count_drop_in(XT_CNT_DROPPED_OTHER);
		return -1;
	}
	return 0;
}

/* Reserves `size` bytes in the ring for a record of `type` to fill in place and hand to
 * xt_submit: no record built on the stack and copied. NULL (counted as a drop) when the ring
 * is full. `size` must be a constant. */
static __always_inline void *xt_reserve(__u64 size, __u16 type)
{
	void *rec = bpf_ringbuf_reserve(&events, size, 0);

	if (!rec)
		xt_count_drop(type);
	return rec;
}

/* Publishes a record from xt_reserve, waking the reader only past wakeup_bytes. */
static __always_inline void xt_submit(void *rec)
{
	bpf_ringbuf_submit(rec, xt_wakeup_flags());
}

#endif /* XTRACE_OUTPUT_BPF_H */

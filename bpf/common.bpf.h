/* Maps and helpers every xtrace BPF program shares: the record ring buffer, drop counters,
 * the traced-process filter and entry/return pairing. BPF-only (includes vmlinux.h). */
#ifndef XTRACE_COMMON_BPF_H
#define XTRACE_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "xtrace/records.h"

/* Records to user space. Its size is set by user space (--buffer-size) between open and load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/* enum xt_counter; per-CPU so counting needs no atomics on the hot path. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XT_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Processes (tgid) to record when filter_by_pid is set: uprobes attached to one library
 * inode fire in every process that maps it, so system-wide or multi-target captures filter
 * here. A uprobe attached for one pid needs no filter: the kernel installs it only there. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_TRACED_PROCS);
	__type(key, __u32);
	__type(value, __u8);
} traced_pids SEC(".maps");

/* Collection state per process (tgid -> enum xt_collection_state): paused by --start-paused
 * or __itt_pause, resumed by __itt_resume, ended for good by __itt_detach. Absent means
 * collecting. Checked by every program through xt_traced, so pause applies to every source. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_TRACED_PROCS);
	__type(key, __u32);
	__type(value, __u32);
} collection_state SEC(".maps");

/* Per-thread state between a probed function's entry and its return, keyed by
 * (function << 32 | tid). LRU: a thread that dies inside a call must not leak its slot. */
struct xt_inflight {
	__u64 start_ns;
	__u64 arg[4];
	__u32 group_count[3];
	__u32 flags;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XT_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct xt_inflight);
} inflight SEC(".maps");

/* Last name reported per thread, keyed by pid_tgid so a reused tid in another process is
 * a new thread. LRU: exited threads age out. */
union xt_comm {
	char c[XT_COMM_LEN];
	__u64 w[XT_COMM_LEN / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XT_MAX_THREADS);
	__type(key, __u64);
	__type(value, union xt_comm);
} thread_comm SEC(".maps");

/* Scratch space for records with a string tail: too large for the 512-byte BPF stack. */
struct xt_scratch {
	__u8 data[XT_MAX_RECORD];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xt_scratch);
} scratch SEC(".maps");

/* Configuration, set as rodata between open and load. (Globals are __u32/__u64 so the C++
 * skeleton compiles.) */
const volatile __u32 filter_by_pid = 0;
/* Pending bytes in the ring at which a write wakes the reader. Below it records are written
 * with BPF_RB_NO_WAKEUP (≈130 ns instead of ≈800 ns per write) and the reader polls on a
 * timer, so a busy target never pays for a wakeup per record. */
const volatile __u64 wakeup_bytes = 1 << 20;

static __always_inline void xt_count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &which);

	if (v)
		*v += 1;
}

/* True when `tgid` passes the process filter (whatever its collection state). */
static __always_inline int xt_selected(__u32 tgid)
{
	if (!filter_by_pid)
		return 1;
	return bpf_map_lookup_elem(&traced_pids, &tgid) != NULL;
}

/* True unless `tgid`'s collection is paused or detached; a skipped hit is counted. */
static __always_inline int xt_collecting(__u32 tgid)
{
	__u32 *state = bpf_map_lookup_elem(&collection_state, &tgid);

	if (state && *state != XT_COLLECT_ON) {
		xt_count(XT_CNT_PAUSED);
		return 0;
	}
	return 1;
}

/* Whether a probe hit in `tgid` is recorded: every program asks this first. */
static __always_inline int xt_traced(__u32 tgid)
{
	return xt_selected(tgid) && xt_collecting(tgid);
}

static __always_inline int xt_output(void *rec, __u64 size)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, rec, size, flags)) {
		xt_count(XT_CNT_DROPPED);
		return -1;
	}
	return 0;
}

/* Reports the current thread's name if it is new or changed since its last record. Called
 * before a record is emitted, so user space always knows a thread's name before its events.
 * Costs a comm read and one map lookup per call when nothing changed. */
static __always_inline void xt_note_thread(__u64 now)
{
	__u64 id = bpf_get_current_pid_tgid();
	union xt_comm cur = {};
	union xt_comm *known;
	struct xt_thread_name rec = {};
	struct task_struct *task;

	bpf_get_current_comm(cur.c, sizeof(cur.c));
	known = bpf_map_lookup_elem(&thread_comm, &id);
	if (known && known->w[0] == cur.w[0] && known->w[1] == cur.w[1])
		return;
	rec.hdr.type = XT_REC_THREAD_NAME;
	rec.hdr.size = sizeof(rec);
	rec.hdr.pid = id >> 32;
	rec.hdr.tid = (__u32)id;
	rec.hdr.start_ns = now;
	rec.hdr.end_ns = now;
	__builtin_memcpy(rec.comm, cur.c, sizeof(rec.comm));
	task = (struct task_struct *)bpf_get_current_task();
	BPF_CORE_READ_STR_INTO(&rec.process_comm, task, group_leader, comm);
	/* Remember the name only once it reached user space, so a drop is retried next call. */
	if (xt_output(&rec, sizeof(rec)) == 0)
		bpf_map_update_elem(&thread_comm, &id, &cur, BPF_ANY);
}

static __always_inline __u64 xt_inflight_key(__u32 fn, __u32 tid)
{
	return ((__u64)fn << 32) | tid;
}

/* Remembers an entry; returns the slot to fill, or NULL when the call is not recorded. */
static __always_inline struct xt_inflight *xt_enter(__u32 fn)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 key = xt_inflight_key(fn, (__u32)id);
	struct xt_inflight init = {};

	if (!xt_traced(id >> 32))
		return NULL;
	init.start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&inflight, &key, &init, BPF_ANY)) {
		xt_count(XT_CNT_INFLIGHT_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&inflight, &key);
}

/* Fills a record header at return from the matching entry. */
static __always_inline void xt_fill_header(struct xt_record_header *hdr, __u16 type, __u16 size,
					   const struct xt_inflight *in, __u64 now)
{
	__u64 id = bpf_get_current_pid_tgid();

	xt_note_thread(now);
	hdr->type = type;
	hdr->size = size;
	hdr->flags = in->flags;
	hdr->pid = id >> 32;
	hdr->tid = (__u32)id;
	hdr->start_ns = in->start_ns;
	hdr->end_ns = now;
}

#endif /* XTRACE_COMMON_BPF_H */

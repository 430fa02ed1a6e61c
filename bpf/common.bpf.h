/* Maps and helpers every xtrace BPF program shares: the record ring buffer, drop counters,
 * the traced-process filter and capture scope, and per-thread state (entry/return pairing,
 * thread names). BPF-only (includes vmlinux.h). */
#ifndef XTRACE_COMMON_BPF_H
#define XTRACE_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "xtrace/capture_config.h"
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

/* Collection state per process (tgid as the collector numbers it -> enum xt_collection_state): paused by --start-paused
 * or __itt_pause, resumed by __itt_resume, ended for good by __itt_detach. Absent means
 * collecting. Checked by every program through xt_traced, so pause applies to every source. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_TRACED_PROCS);
	__type(key, __u32);
	__type(value, __u32);
} collection_state SEC(".maps");

/* Which processes the capture records (one struct xt_capture_config, see capture_config.h).
 * A map, not rodata, so every probe object follows it without setting anything itself, and
 * user space can set it once for all of them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xt_capture_config);
} capture_config SEC(".maps");

/* XT_SCOPE_CGROUP: the cgroup (v2) at index 0, set from a directory fd by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} scope_cgroup SEC(".maps");

/* Records lost in the ring per process (tgid as the collector numbers it), for the
 * per-process summary. Written only when a record is dropped. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_DROP_PROCS);
	__type(key, __u32);
	__type(value, __u64);
} drops_by_pid SEC(".maps");

/* Changes to traced_pids, collection_state and capture_config, counted, so a thread may keep
 * its last xt_traced answer until something changes (xt_traced_by_thread): [0] is bumped by
 * user space (CaptureMaps, its only writer), [1] by BPF programs (xt_filter_changed,
 * atomically). Whoever changes one of those maps must bump one of these after the change. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} filter_epoch SEC(".maps");

/* Entry state of one probed call, from its entry to its return. */
struct xt_inflight {
	__u64 start_ns; /* 0: no call of this function is pending on the thread */
	__u64 arg[4];
	__u32 group_count[3];
	__u32 flags;
};

/* Pairing slots per thread: the dedicated programs' fn ids (ze_probes.bpf.c) are below this.
 * Every slot is in every traced thread's task storage, so it stays small. */
#define XT_MAX_FN 4

union xt_comm {
	char c[XT_COMM_LEN];
	__u64 w[XT_COMM_LEN / 8];
};

/* What BPF keeps per thread: its pending calls, one slot per function, and the name last
 * reported for it. Task-local storage rather than hash maps keyed by tid: finding it is a
 * pointer chase instead of a hash lookup (entry/return pairing and the thread-name check run
 * on every probed call), nothing is inserted or deleted per call, the kernel frees it when
 * the thread exits, and a new thread that reuses a tid starts afresh. */
/* A call recorded by a generic program (one program pair for many functions, told apart by
 * attach cookie): which function, when it began, its arguments as passed. A thread is in
 * one library call at a time, so one slot serves every such function; the return checks the
 * function is its own. */
struct xt_call_slot {
	__u64 start_ns; /* 0: none pending */
	__u32 fn;
	__u32 pad;
	__u64 arg[8];
};

struct xt_thread_state {
	union xt_comm reported; /* all zero until the first report */
	__u64 filter_epoch[2];  /* filter_epoch when `traced` was decided */
	__u32 traced;           /* enum xt_traced_answer; XT_TRACED_UNKNOWN: decide afresh */
	__u32 pad;
	struct xt_inflight inflight[XT_MAX_FN];
	struct xt_call_slot call;
};

enum xt_traced_answer {
	XT_TRACED_UNKNOWN = 0,
	XT_TRACED_NO = 1,     /* not selected by the process filter */
	XT_TRACED_PAUSED = 2, /* selected, but its collection is paused or detached */
	XT_TRACED_YES = 3,
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct xt_thread_state);
} thread_state SEC(".maps");

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

static __always_inline const struct xt_capture_config *xt_config(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&capture_config, &zero);
}

static __always_inline int xt_in_pid_namespace(const struct xt_capture_config *cfg)
{
	return cfg && (cfg->scope & XT_SCOPE_PID_NAMESPACE);
}

/* The number `p` has in the collector's pid namespace; 0 when it has none there (the task
 * lies outside that namespace). Nested namespaces below it are inside. */
static __always_inline __u32 xt_pid_nr(struct pid *p, const struct xt_capture_config *cfg)
{
	__u32 level = cfg->pidns_level;
	struct upid up = {};

	if (!p || level >= XT_MAX_PID_NS_LEVEL || BPF_CORE_READ(p, level) < level)
		return 0;
	if (bpf_core_read(&up, sizeof(up), &p->numbers[level]))
		return 0;
	if (BPF_CORE_READ(up.ns, ns.inum) != cfg->pidns_inum)
		return 0;
	return up.nr;
}

/* A task's thread id and process id as the collector numbers them: the kernel's own ids, or,
 * when the collector runs in a pid namespace of its own (a pod sidecar), that namespace's.
 * Returns 0 when the task lies outside it. */
static __always_inline int xt_task_ids(struct task_struct *task,
				       const struct xt_capture_config *cfg, __u32 *pid,
				       __u32 *tgid)
{
	if (!xt_in_pid_namespace(cfg)) {
		*pid = BPF_CORE_READ(task, pid);
		*tgid = BPF_CORE_READ(task, tgid);
		return 1;
	}
	*pid = xt_pid_nr(BPF_CORE_READ(task, thread_pid), cfg);
	*tgid = xt_pid_nr(BPF_CORE_READ(task, group_leader, thread_pid), cfg);
	return *pid && *tgid;
}

static __always_inline int xt_current_ids(const struct xt_capture_config *cfg, __u32 *pid,
					  __u32 *tgid)
{
	__u64 id;

	if (xt_in_pid_namespace(cfg))
		return xt_task_ids((struct task_struct *)bpf_get_current_task(), cfg, pid, tgid);
	id = bpf_get_current_pid_tgid();
	*pid = (__u32)id;
	*tgid = id >> 32;
	return 1;
}

/* Process `tgid` (collector numbering) is one the capture records. */
static __always_inline int xt_scope_selects(const struct xt_capture_config *cfg, __u32 tgid)
{
	if (cfg && (cfg->scope & XT_SCOPE_ALL_PROCESSES))
		return 1;
	return bpf_map_lookup_elem(&traced_pids, &tgid) != NULL;
}

/* The current task lies under the capture's cgroup, if it has one. */
static __always_inline int xt_in_cgroup_scope(const struct xt_capture_config *cfg)
{
	if (!cfg || !(cfg->scope & XT_SCOPE_CGROUP))
		return 1;
	return bpf_current_task_under_cgroup(&scope_cgroup, 0) == 1;
}

/* The current process's id as the collector numbers it (`tgid` as bpf_get_current_pid_tgid()
 * gives it); 0 when it lies outside the collector's pid namespace. Keys of traced_pids,
 * collection_state and drops_by_pid are these ids. */
static __always_inline __u32 xt_collector_tgid(__u32 tgid)
{
	const struct xt_capture_config *cfg = xt_config();
	__u32 pid;

	if (xt_in_pid_namespace(cfg) && !xt_current_ids(cfg, &pid, &tgid))
		return 0;
	return tgid;
}

/* True when the current process, `tgid`, passes the process filter (whatever its collection
 * state). `tgid` is the current task's, as bpf_get_current_pid_tgid() gives it; see
 * capture_config.h for the rule. */
static __always_inline int xt_selected(__u32 tgid)
{
	const struct xt_capture_config *cfg;

	if (!filter_by_pid)
		return 1;
	cfg = xt_config();
	tgid = xt_collector_tgid(tgid);
	return tgid && xt_scope_selects(cfg, tgid) && xt_in_cgroup_scope(cfg);
}

/* True unless the current process's collection is paused or detached; a skipped hit is
 * counted. */
static __always_inline int xt_collecting(__u32 tgid)
{
	__u32 key = xt_collector_tgid(tgid);
	__u32 *state = bpf_map_lookup_elem(&collection_state, &key);

	if (state && *state != XT_COLLECT_ON) {
		xt_count(XT_CNT_PAUSED);
		return 0;
	}
	return 1;
}

/* Whether a probe hit in the current process `tgid` is recorded: every program asks this
 * first. */
static __always_inline int xt_traced(__u32 tgid)
{
	return xt_selected(tgid) && xt_collecting(tgid);
}

/* Counts a dropped record against the current process. */
static __always_inline void xt_count_process_drop(void)
{
	__u32 pid = 0, tgid = 0;
	__u64 one = 1, *n;

	if (!xt_current_ids(xt_config(), &pid, &tgid))
		return;
	n = bpf_map_lookup_elem(&drops_by_pid, &tgid);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&drops_by_pid, &tgid, &one, BPF_NOEXIST);
}

/* For a BPF program that changed traced_pids or collection_state: see filter_epoch. */
static __always_inline void xt_filter_changed(void)
{
	__u32 key = 1;
	__u64 *epoch = bpf_map_lookup_elem(&filter_epoch, &key);

	if (epoch)
		__sync_fetch_and_add(epoch, 1);
}

/* No wakeup per record: only once a quarter of the ring (wakeup_bytes) is pending. */
static __always_inline __u64 xt_wakeup_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									  : BPF_RB_NO_WAKEUP;
}

static __always_inline int xt_output(void *rec, __u64 size)
{
	if (bpf_ringbuf_output(&events, rec, size, xt_wakeup_flags())) {
		xt_count(XT_CNT_DROPPED);
		xt_count_process_drop();
		return -1;
	}
	return 0;
}

/* The current thread's state; created on first use when `create` is set. */
static __always_inline struct xt_thread_state *xt_thread_state(int create)
{
	return bpf_task_storage_get(&thread_state, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* Reports the current thread's name (its state is `st`) if it is new or changed since it
 * was last reported, so user space knows a thread's name before its events. Costs a comm
 * read and a compare when nothing changed. */
static __always_inline void xt_note_thread_of(struct xt_thread_state *st, __u64 now)
{
	struct task_struct *self = bpf_get_current_task_btf();
	union xt_comm cur = {};
	struct xt_thread_name rec = {};
	struct task_struct *task;

	/* Two loads through the task pointer: cheaper than copying comm out with a helper. */
	if (st && st->reported.w[0] == *(__u64 *)&self->comm[0] &&
	    st->reported.w[1] == *(__u64 *)&self->comm[8])
		return;
	bpf_get_current_comm(cur.c, sizeof(cur.c));
	rec.hdr.type = XT_REC_THREAD_NAME;
	rec.hdr.size = sizeof(rec);
	xt_current_ids(xt_config(), &rec.hdr.tid, &rec.hdr.pid);
	rec.hdr.start_ns = now;
	rec.hdr.end_ns = now;
	__builtin_memcpy(rec.comm, cur.c, sizeof(rec.comm));
	task = (struct task_struct *)bpf_get_current_task();
	BPF_CORE_READ_STR_INTO(&rec.process_comm, task, group_leader, comm);
	/* Remember the name only once it reached user space, so a drop is retried next call. */
	if (xt_output(&rec, sizeof(rec)) == 0 && st)
		st->reported = cur;
}

/* The same, for a probe that has not looked up the thread's state (xt_enter does this for
 * paired calls). */
static __always_inline void xt_note_thread(__u64 now)
{
	xt_note_thread_of(xt_thread_state(1), now);
}

/* xt_traced for the current thread, whose state is `st`: the answer it got last time while
 * neither filter map has changed since (two array reads), else asked afresh (two hash
 * lookups) and kept. Counts a paused hit as xt_collecting does. */
static __always_inline int xt_traced_by_thread(struct xt_thread_state *st, __u32 tgid)
{
	__u32 user = 0, bpf = 1;
	__u64 *user_epoch = bpf_map_lookup_elem(&filter_epoch, &user);
	__u64 *bpf_epoch = bpf_map_lookup_elem(&filter_epoch, &bpf);
	const struct xt_capture_config *cfg = xt_config();
	__u64 seen_user, seen_bpf;

	/* A cgroup scope is a property of the task that changes without any map changing (the
	 * task can be moved): asked afresh every time. */
	if (!user_epoch || !bpf_epoch || (cfg && (cfg->scope & XT_SCOPE_CGROUP)))
		return xt_traced(tgid);
	seen_user = *user_epoch;
	seen_bpf = *bpf_epoch;
	if (st->traced == XT_TRACED_UNKNOWN || st->filter_epoch[0] != seen_user ||
	    st->filter_epoch[1] != seen_bpf) {
		/* Epochs read before the maps: a change racing with this is seen next time. */
		st->traced = !xt_selected(tgid)		  ? XT_TRACED_NO
			     : !xt_collecting(tgid) ? XT_TRACED_PAUSED
						    : XT_TRACED_YES;
		st->filter_epoch[0] = seen_user;
		st->filter_epoch[1] = seen_bpf;
		return st->traced == XT_TRACED_YES;
	}
	if (st->traced == XT_TRACED_PAUSED)
		xt_count(XT_CNT_PAUSED);
	return st->traced == XT_TRACED_YES;
}

/* Whether the current thread's call is recorded; if so *st is its state (created now if it
 * had none; NULL only if creating failed). A thread gets state only once it is traced: other
 * processes that map a probed file (system-wide captures) keep none. Once it has state, the
 * filter answer it keeps there is reused until filter_epoch moves. */
static __always_inline int xt_traced_thread(struct xt_thread_state **st)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	*st = xt_thread_state(0);
	if (*st ? !xt_traced_by_thread(*st, tgid) : !xt_traced(tgid))
		return 0;
	if (!*st)
		*st = xt_thread_state(1);
	return 1;
}

/* Remembers an entry; returns the slot to fill, or NULL when the call is not recorded.
 * Reports the thread's name first if needed (the state is at hand here, and a record made at
 * the call's return follows it in the ring). */
static __always_inline struct xt_inflight *xt_enter(__u32 fn)
{
	struct xt_thread_state *st;
	struct xt_inflight *in;

	if (!xt_traced_thread(&st))
		return NULL;
	if (!st || fn >= XT_MAX_FN) {
		xt_count(XT_CNT_INFLIGHT_FULL);
		return NULL;
	}
	in = &st->inflight[fn];
	__builtin_memset(in, 0, sizeof(*in));
	in->start_ns = bpf_ktime_get_ns();
	xt_note_thread_of(st, in->start_ns);
	return in;
}

/* xt_enter for a generic program: the thread's call slot, set to `fn` now; NULL when the
 * call is not recorded. */
static __always_inline struct xt_call_slot *xt_enter_call(__u32 fn)
{
	struct xt_thread_state *st;

	if (!xt_traced_thread(&st))
		return NULL;
	if (!st) {
		xt_count(XT_CNT_INFLIGHT_FULL);
		return NULL;
	}
	st->call.fn = fn;
	st->call.start_ns = bpf_ktime_get_ns();
	xt_note_thread_of(st, st->call.start_ns);
	return &st->call;
}

/* The thread's pending generic call if it is `fn`'s, else NULL. Clear start_ns when done. */
static __always_inline struct xt_call_slot *xt_pending_call(__u32 fn)
{
	struct xt_thread_state *st = xt_thread_state(0);

	if (!st || !st->call.start_ns || st->call.fn != fn)
		return NULL;
	return &st->call;
}

/* The entry state of `fn` pending on this thread, or NULL if its entry was not recorded. */
static __always_inline struct xt_inflight *xt_pending(__u32 fn)
{
	struct xt_thread_state *st = xt_thread_state(0);

	if (!st || fn >= XT_MAX_FN || !st->inflight[fn].start_ns)
		return NULL;
	return &st->inflight[fn];
}

/* Fills a record header at return from the matching entry (xt_enter reported the thread). */
static __always_inline void xt_fill_header(struct xt_record_header *hdr, __u16 type, __u16 size,
					   const struct xt_inflight *in, __u64 now)
{
	__u32 pid = 0, tgid = 0;

	xt_current_ids(xt_config(), &pid, &tgid);
	hdr->type = type;
	hdr->size = size;
	hdr->flags = in->flags;
	hdr->pid = tgid;
	hdr->tid = pid;
	hdr->start_ns = in->start_ns;
	hdr->end_ns = now;
}

/* Reserves a `size`-byte record of `type` in the ring with its header filled, for a return
 * probe to complete in place and hand to xt_submit: no record built on the stack and copied.
 * NULL (counted as a drop) when the ring is full. `size` must be a constant. */
static __always_inline void *xt_reserve_record(__u16 type, __u16 size, const struct xt_inflight *in,
					       __u64 now)
{
	struct xt_record_header *hdr = bpf_ringbuf_reserve(&events, size, 0);

	if (!hdr) {
		xt_count(XT_CNT_DROPPED);
		xt_count_process_drop();
		return NULL;
	}
	xt_fill_header(hdr, type, size, in, now);
	return hdr;
}

/* Publishes a record from xt_reserve_record, waking the reader only past wakeup_bytes. */
static __always_inline void xt_submit(void *rec)
{
	bpf_ringbuf_submit(rec, xt_wakeup_flags());
}

#endif /* XTRACE_COMMON_BPF_H */

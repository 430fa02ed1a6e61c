/* Per-thread state (maps.bpf.h, struct xt_thread_state): finding it, reporting the thread's
 * name when it is new or changed, and the filter answer a thread keeps until the filter
 * changes. BPF-only. */
#ifndef XTRACE_THREAD_BPF_H
#define XTRACE_THREAD_BPF_H

#include "output.bpf.h"
#include "scope.bpf.h"

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
	xt_fill_header(&rec.hdr, XT_REC_THREAD_NAME, sizeof(rec), 0, now, now);
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
static __always_inline int xt_traced_by_thread(struct xt_thread_state *st)
{
	__u32 user = 0, bpf = 1;
	__u64 *user_epoch = bpf_map_lookup_elem(&filter_epoch, &user);
	__u64 *bpf_epoch = bpf_map_lookup_elem(&filter_epoch, &bpf);
	const struct xt_capture_config *cfg = xt_config();
	__u64 seen_user, seen_bpf;
	__u32 tgid;

	/* A cgroup scope is a property of the task that changes without any map changing (the
	 * task can be moved): asked afresh every time. */
	if (!user_epoch || !bpf_epoch || (cfg && (cfg->scope & XT_SCOPE_CGROUP))) {
		st->query = xt_query_mode(cfg, xt_current_tgid(cfg));
		return xt_traced();
	}
	seen_user = *user_epoch;
	seen_bpf = *bpf_epoch;
	if (st->traced == XT_TRACED_UNKNOWN || st->filter_epoch[0] != seen_user ||
	    st->filter_epoch[1] != seen_bpf) {
		/* Epochs read before the maps: a change racing with this is seen next time. */
		tgid = xt_current_tgid(cfg);
		st->traced = !xt_selected(cfg, tgid) ? XT_TRACED_NO
			     : !xt_collecting(tgid)  ? XT_TRACED_PAUSED
						     : XT_TRACED_YES;
		st->query = xt_query_mode(cfg, tgid);
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
	*st = xt_thread_state(0);
	if (*st ? !xt_traced_by_thread(*st) : !xt_traced())
		return 0;
	if (!*st) {
		*st = xt_thread_state(1);
		/* Its kept answers (traced, query) filled now: a thread's first call may be a launch
		 * that must be held to ask about its kernel (a process attached mid-run whose
		 * thread's first call since is a launch). */
		if (*st)
			xt_traced_by_thread(*st);
	}
	return 1;
}

#endif /* XTRACE_THREAD_BPF_H */

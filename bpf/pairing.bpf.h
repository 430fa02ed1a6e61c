/* Entry/return pairing, the one scheme every entry + return pair of programs uses: the entry
 * fills the thread's call slot (maps.bpf.h, struct xt_call_slot) and the return takes it
 * back if the pending call is its own, then emits one record for the whole call. A thread is
 * in one library call at a time: a probed call made from a signal handler that interrupted
 * another takes the outer call's slot, and the outer call is lost (counted as an orphan
 * return). BPF-only. */
#ifndef XTRACE_PAIRING_BPF_H
#define XTRACE_PAIRING_BPF_H

#include "thread.bpf.h"

/* Fills the thread's call slot (state `st`) for the entry of call `fn`. */
static __always_inline struct xt_call_slot *xt_take_slot(struct xt_thread_state *st, __u32 fn,
							 __u32 flags)
{
	if (!st) {
		xt_count(XT_CNT_INFLIGHT_FULL);
		return NULL;
	}
	/* A call inside a call held for a query is xtrace's own (zeDeviceGetProperties, asked
	 * in the held thread): neither recorded nor allowed to take the held call's slot. The
	 * held call itself entered again once its thread goes on (the loader's stub jumping into
	 * the driver's function, probed too) keeps its slot as well: its inner return records
	 * it, and the outer return is no orphan. */
	if (st->call.start_ns && st->call.held) {
		if (st->call.fn == fn)
			st->call.nested = 1;
		return NULL;
	}
	/* The same call entered again before its return: the loader's stub has jumped into the
	 * driver's function, probed too (the function a dispatch table or an extension pointer
	 * reaches). The inner entry takes the slot and its return records the call once. */
	st->call.nested = st->call.start_ns && st->call.fn == fn;
	st->call.held = 0;
	st->call.fn = fn;
	st->call.flags = flags;
	st->call.start_ns = bpf_ktime_get_ns();
	xt_note_thread_of(st, st->call.start_ns);
	return &st->call;
}

/* Remembers the entry of call `fn` and returns its slot to fill with what the return needs;
 * NULL when the call is not recorded. Reports the thread's name first if needed (the state
 * is at hand here, and the record made at the call's return follows it in the ring). */
static __always_inline struct xt_call_slot *xt_enter(__u32 fn)
{
	struct xt_thread_state *st;

	if (!xt_traced_thread(&st))
		return NULL;
	return xt_take_slot(st, fn, 0);
}

/* xt_enter for a call that names what later calls use (zeKernelCreate): while the process's
 * collection is paused it is still recorded, flagged XT_FLAG_PAUSED, so that a launch after
 * the resume is named; user space keeps the name and shows no event. Nothing once the process
 * detached. Costs two map lookups more than xt_enter, on a call made once per kernel. */
static __always_inline struct xt_call_slot *xt_enter_naming(__u32 fn)
{
	const struct xt_capture_config *cfg = xt_config();
	__u32 tgid = xt_current_tgid(cfg);
	__u32 *state = bpf_map_lookup_elem(&collection_state, &tgid);

	if (!state || *state != XT_COLLECT_PAUSED)
		return xt_enter(fn);
	if (!xt_selected(cfg, tgid))
		return NULL;
	return xt_take_slot(xt_thread_state(1), fn, XT_FLAG_PAUSED);
}

/* At the return of `fn`: its slot if its entry was recorded, else NULL (an orphan return of a
 * traced thread is counted: the probe was attached mid-call, or the slot was taken). Hand
 * the slot to xt_forget when done. */
static __always_inline struct xt_call_slot *xt_exit(__u32 fn)
{
	struct xt_thread_state *st = xt_thread_state(0);

	if (st && st->call.start_ns && st->call.fn == fn)
		return &st->call;
	/* The outer return of a call entered twice: the inner one has recorded it. */
	if (st && !st->call.start_ns && st->call.nested && st->call.fn == fn) {
		st->call.nested = 0;
		return NULL;
	}
	/* The return of a call xtrace made in a thread it held (xt_take_slot): not an orphan. */
	if (st && st->call.start_ns && st->call.held)
		return NULL;
	if (xt_traced())
		xt_count(XT_CNT_ORPHAN_RETURN);
	return NULL;
}

/* Frees the slot xt_exit returned. */
static __always_inline void xt_forget(struct xt_call_slot *call)
{
	call->start_ns = 0;
}

#endif /* XTRACE_PAIRING_BPF_H */

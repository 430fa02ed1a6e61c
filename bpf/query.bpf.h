/* Objects made before the attach (include/xtrace/hold.h, capture/sources/ze_query.h): in a process
 * attached mid-run, a launch whose kernel xtrace never saw made holds the launching thread at
 * that call's entry, where it holds no Level Zero lock, so that the capture can ask the
 * process's own loader about it; creations seen during the capture mark their handles known
 * so they are never asked about. Processes traced from their start pay nothing: the thread's
 * kept `query` answer is 0. BPF-only. */
#ifndef XTRACE_QUERY_BPF_H
#define XTRACE_QUERY_BPF_H

#include "hold.bpf.h"
#include "thread.bpf.h"

#define XT_QUERY_SIGSTOP 19
#define XT_QUERY_SIGCONT 18
#define XT_QUERY_EEXIST 17

/* The thread state that owns a call slot from xt_enter. */
static __always_inline struct xt_thread_state *xt_state_of_slot(struct xt_call_slot *slot)
{
	return (struct xt_thread_state *)((char *)slot - __builtin_offsetof(struct xt_thread_state, call));
}

/* A handle the current process made during the capture: never asked about. */
static __always_inline void xt_query_note_made(struct xt_call_slot *slot, __u64 handle)
{
	struct xt_query_key key = {};
	__u8 made = XT_HANDLE_MADE;

	if (!handle || !xt_state_of_slot(slot)->query)
		return;
	key.pid = xt_current_tgid(xt_config());
	key.handle = handle;
	if (bpf_map_update_elem(&known_handles, &key, &made, BPF_ANY))
		xt_count(XT_CNT_QUERY_MISSED);
}

/* An object the current process destroyed: forgotten, so that a process that makes and
 * destroys kernels or events by the thousand keeps known_handles small. (Its handle may come back made
 * anew: a creation xtrace sees.) */
static __always_inline void xt_query_note_destroyed(struct xt_call_slot *slot, __u64 handle)
{
	struct xt_query_key key = {};

	if (!handle || !xt_state_of_slot(slot)->query)
		return;
	key.pid = xt_current_tgid(xt_config());
	key.handle = handle;
	bpf_map_delete_elem(&known_handles, &key);
}

/* At the entry of a call that uses `handle`, a `kind` of object (enum xt_query_kind): if the
 * process was attached mid-run, its loader can be asked about that kind and the handle is
 * unknown, it is asked for, and the thread held unless another thread of the process
 * is held for asking already (then that hold asks for this one too: its process is stopping).
 * Order: ask, hold, stop, and only then the record, as every hold (hold.h). The record's room
 * is reserved first, though: the ring is read in the order of reservations, and a thread that
 * rides on this hold (it saw the held entry) runs its launch on at once. Its launch record,
 * reserved after this one, is read after the hold has been served, never before it, even when
 * this thread is preempted between taking the hold and writing its record. */
static __always_inline void xt_query_unknown(struct pt_regs *ctx, struct xt_call_slot *slot,
					     __u64 handle, __u8 kind)
{
	const struct xt_capture_config *cfg;
	struct xt_query_key key = {};
	struct xt_ze_query_hold *rec;
	struct xt_hold hold = {}, *other;
	__u8 asked = kind;
	__u32 tgid = 0, tid = 0;
	long err;

	if (!handle || !(xt_state_of_slot(slot)->query & (1u << kind)))
		return;
	cfg = xt_config();
	xt_current_ids(cfg, &tid, &tgid);
	key.pid = tgid;
	key.handle = handle;
	if (bpf_map_lookup_elem(&known_handles, &key))
		return;
	/* Asked for already is no reason to stop here: a hold of the process may be under way
	 * (the hold below then fails and this rides on it), or the ask came too late for the last
	 * hold and waits for a hold of its own. */
	err = bpf_map_update_elem(&asked_handles, &key, &asked, BPF_NOEXIST);
	if (err && err != -XT_QUERY_EEXIST) {
		xt_count(XT_CNT_QUERY_MISSED);
		return;
	}
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		/* A query hold under way takes this handle too, as below: no record was needed. */
		other = bpf_map_lookup_elem(&held, &tgid);
		if (other && other->reason == XT_HOLD_QUERY)
			return;
		/* Nobody would hear of a hold: none is taken. */
		bpf_map_delete_elem(&asked_handles, &key);
		xt_count_drop(XT_REC_ZE_QUERY_HOLD);
		xt_count(XT_CNT_QUERY_MISSED);
		return;
	}
	hold.since_ns = bpf_ktime_get_ns();
	hold.tid = tid;
	hold.reason = XT_HOLD_QUERY;
	hold.ip = PT_REGS_IP(ctx);
	err = xt_held_insert(tgid, &hold);
	if (err) {
		bpf_ringbuf_discard(rec, 0);
		other = bpf_map_lookup_elem(&held, &tgid);
		/* Held for asking: that hold takes this handle too. Held for another reason (a
		 * library load) or not holdable: asked again at the next use. */
		if (!other || other->reason != XT_HOLD_QUERY) {
			bpf_map_delete_elem(&asked_handles, &key);
			if (err != -XT_QUERY_EEXIST)
				xt_count(XT_CNT_QUERY_MISSED);
		}
		return;
	}
	xt_note_hold_parent(hold.since_ns, tgid);
	if (bpf_send_signal_thread(XT_QUERY_SIGSTOP)) {
		bpf_ringbuf_discard(rec, 0);
		bpf_map_delete_elem(&held, &tgid);
		bpf_map_delete_elem(&asked_handles, &key);
		xt_count(XT_CNT_QUERY_MISSED);
		return;
	}
	/* The queries run in this thread, inside this call: probes pass them by (pairing.bpf.h). */
	slot->held = 1;
	__builtin_memset(rec, 0, sizeof(*rec));
	rec->ip = hold.ip;
	xt_fill_header_of(&rec->hdr, XT_REC_ZE_QUERY_HOLD, sizeof(*rec), XT_FLAG_HELD, hold.since_ns,
			  hold.since_ns, tgid, tid);
	/* Woken at once: the process waits. */
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
}

#endif /* XTRACE_QUERY_BPF_H */

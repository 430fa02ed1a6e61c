/* What BPF keeps per thread (task-local storage, the `thread_state` map), shared with user
 * space, which reads a thread's pending call through a pidfd when the capture stops.
 *
 * Plain C with __u32/__u64 only: compiled by clang -target bpf and by C++.
 */
#ifndef XTRACE_THREAD_STATE_H
#define XTRACE_THREAD_STATE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "xtrace/layout_check.h"

#include "xtrace/records.h"

union xt_comm {
	char c[XT_COMM_LEN];
	__u64 w[XT_COMM_LEN / 8];
};

/* The probed call pending on a thread, from its entry to its return (pairing.bpf.h). A thread
 * is in one library call at a time, so one slot serves every probed function; the return
 * checks that the call is its own. */
struct xt_call_slot {
	__u64 start_ns; /* 0: none pending */
	__u32 fn;       /* whose: enum xt_ze_fn, or a dedicated program's pairing id */
	__u32 flags;    /* enum xt_record_flags, from the entry's reads */
	__u64 arg[XT_ZE_CALL_ARGS];
	__u32 group_count[3]; /* launches only: the group counts, read at entry */
	__u32 nested;   /* this call's entry was probed twice (a loader stub jumps into a probed
			 * driver function): the outer return finds the slot taken back, and is
			 * no orphan (bpf/pairing.bpf.h) */
	__u32 held;     /* the thread is held at this call's entry to be asked about objects made
			 * before the attach (query.bpf.h): the calls xtrace makes in it are not
			 * the process's, and probes pass them by */
};

enum xt_traced_answer {
	XT_TRACED_UNKNOWN = 0,
	XT_TRACED_NO = 1,     /* not selected by the process filter */
	XT_TRACED_PAUSED = 2, /* selected, but its collection is paused or detached */
	XT_TRACED_YES = 3,
};

/* What BPF keeps per thread: its pending call, the name last reported for it and its last
 * filter answer. Task-local storage rather than hash maps keyed by tid: finding it is a
 * pointer chase instead of a hash lookup (entry/return pairing and the thread-name check run
 * on every probed call), nothing is inserted or deleted per call, the kernel frees it when
 * the thread exits, and a new thread that reuses a tid starts afresh. */
struct xt_thread_state {
	union xt_comm reported; /* all zero until the first report */
	__u64 filter_epoch[2];  /* filter_epoch when `traced` was decided */
	__u32 traced;           /* enum xt_traced_answer; XT_TRACED_UNKNOWN: decide afresh */
	__u32 query;            /* its process's query_pids kinds (hold.h), 0 if not there:
				 * decided with `traced` */
	struct xt_call_slot call;
};

/* Read by user space through a pidfd as BPF wrote it (layout_check.h). */
XT_LAYOUT(sizeof(union xt_comm) == XT_COMM_LEN);
XT_LAYOUT(XT_SIZE(xt_call_slot) == 104);
XT_LAYOUT(XT_OFFSET(xt_call_slot, fn) == 8);
XT_LAYOUT(XT_OFFSET(xt_call_slot, arg) == 16);
XT_LAYOUT(XT_OFFSET(xt_call_slot, group_count) == 80);
XT_LAYOUT(XT_OFFSET(xt_call_slot, nested) == 92);
XT_LAYOUT(XT_OFFSET(xt_call_slot, held) == 96);
XT_LAYOUT(XT_SIZE(xt_thread_state) == 144);
XT_LAYOUT(XT_OFFSET(xt_thread_state, filter_epoch) == 16);
XT_LAYOUT(XT_OFFSET(xt_thread_state, traced) == 32);
XT_LAYOUT(XT_OFFSET(xt_thread_state, call) == 40);

#endif /* XTRACE_THREAD_STATE_H */

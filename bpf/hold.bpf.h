/* Holding a process (include/xtrace/hold.h) from any BPF program that stops one: the
 * lifecycle programs at exec and library loads, the Level Zero probes for queries. BPF-only. */
#ifndef XTRACE_HOLD_BPF_H
#define XTRACE_HOLD_BPF_H

#include "maps.bpf.h"

/* Notes the current process's parent in hold_parents as it is held (maps.bpf.h says why). */
static __always_inline void xt_note_hold_parent(__u64 now)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 parent = BPF_CORE_READ(task, real_parent, tgid);
	struct xt_hold_parent *old, entry = { .since_ns = now,
					      .child = bpf_get_current_pid_tgid() >> 32 };

	if (parent <= 1)
		return; /* init mirrors nobody's stops */
	/* A parent stopped for another held child keeps that entry until the child goes on. */
	old = bpf_map_lookup_elem(&hold_parents, &parent);
	if (old && old->state == XT_PARENT_STOPPED && old->child != entry.child)
		return;
	bpf_map_update_elem(&hold_parents, &parent, &entry, BPF_ANY);
}

#endif /* XTRACE_HOLD_BPF_H */

/* Holding a process (include/xtrace/hold.h) from any BPF program that stops one: the
 * lifecycle programs at exec and library loads, the Level Zero probes for queries. BPF-only. */
#ifndef XTRACE_HOLD_BPF_H
#define XTRACE_HOLD_BPF_H

#include "maps.bpf.h"
#include "output.bpf.h"

#define XT_SIGCONT 18 /* asm-generic/signal.h: the same on x86-64 */
#define XT_SIGSTOP 19
#define XT_EEXIST 17

/* Notes the current process (`tgid_ns` in the collector's pid namespace) as held in its
 * parent's hold_parents entry (maps.bpf.h says why). */
static __always_inline void xt_note_hold_parent(__u64 now, __u32 tgid_ns)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 parent = BPF_CORE_READ(task, real_parent, tgid);
	struct xt_hold_parent *old, entry = { .since_ns = now,
					      .child = bpf_get_current_pid_tgid() >> 32,
					      .child_ns = tgid_ns };

	if (parent <= 1)
		return; /* init mirrors nobody's stops */
	/* A parent stopped for another held child keeps that entry until the child goes on. */
	old = bpf_map_lookup_elem(&hold_parents, &parent);
	if (old && old->state == XT_PARENT_STOPPED && old->child != entry.child)
		return;
	bpf_map_update_elem(&hold_parents, &parent, &entry, BPF_ANY);
}

/* Puts `hold` in `held` for the current process (keyed `tgid`, its pid in the collector's
 * namespace) unless the process is held already: -XT_EEXIST then. An entry older than the
 * process is no hold of it: an earlier process with the same pid left it (it exited in the
 * moment the capture had taken the entry out to look at it, and the entry was put back). It
 * would keep every hold of the new process from being taken until the guardian's bound, so
 * it is replaced. Two threads replacing it at once are both stopped: the continue the capture
 * sends for the one whose entry stands continues the other too. */
static __always_inline long xt_held_insert(__u32 tgid, const struct xt_hold *hold)
{
	struct task_struct *task;
	struct xt_hold *old;
	long err = bpf_map_update_elem(&held, &tgid, hold, BPF_NOEXIST);

	if (err != -XT_EEXIST)
		return err;
	old = bpf_map_lookup_elem(&held, &tgid);
	task = (struct task_struct *)bpf_get_current_task();
	if (!old || old->since_ns >= BPF_CORE_READ(task, group_leader, start_time))
		return err;
	return bpf_map_update_elem(&held, &tgid, hold, BPF_EXIST);
}

/* Whether the current process runs as a job of a terminal's shell: it has a controlling
 * terminal and leads a process group its parent is not in. A shell with job control puts
 * each job in a group of its own, and it waits for its jobs with WUNTRACED: a hold, however
 * short, is a stop it reports as the job's ("[1]+ Stopped", $? = 147, the terminal taken back,
 * the job left to finish in the background). During a --system capture that was every command
 * typed on the machine. Programs a script, a launcher or a service starts stay in their
 * parent's group, or have no terminal, and are held as before. */
static __always_inline int xt_terminal_job(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pid *group = BPF_CORE_READ(task, signal, pids[PIDTYPE_PGID]);

	return BPF_CORE_READ(task, signal, tty) &&
	       group == BPF_CORE_READ(task, signal, pids[PIDTYPE_TGID]) &&
	       group != BPF_CORE_READ(task, real_parent, signal, pids[PIDTYPE_PGID]);
}

/* Holds the current process (`tgid`, thread `tid`) for `reason` if the capture asks for it:
 * its entry in `held` first, then the stop, which takes effect as the thread returns to user
 * space. XT_FLAG_HELD when held. The record that says so must be written after the stop is
 * sent: a capture that read it sooner could continue the process before it was stopped. */
static __always_inline __u32 xt_hold(const struct xt_capture_config *cfg, __u32 tgid, __u32 tid,
				     __u32 reason, __u64 now)
{
	struct xt_hold hold = { .since_ns = now, .tid = tid, .reason = reason };
	long err;

	if (!(cfg->hold & reason) || !tgid)
		return 0;
	if (!(cfg->hold & XT_HOLD_TERMINAL_JOBS) && xt_terminal_job()) {
		xt_count(XT_CNT_HOLD_TERMINAL_JOB);
		return 0;
	}
	err = xt_held_insert(tgid, &hold);
	if (err) {
		/* Held already (the capture has not continued it yet): that hold covers this too. */
		if (err != -XT_EEXIST)
			xt_count(XT_CNT_HOLD_MISSED);
		return 0;
	}
	xt_note_hold_parent(now, tgid);
	if (bpf_send_signal_thread(XT_SIGSTOP)) {
		bpf_map_delete_elem(&held, &tgid);
		xt_count(XT_CNT_HOLD_MISSED);
		return 0;
	}
	return XT_FLAG_HELD;
}

/* The record announcing a hold was lost (a full ring): nobody would continue the process but
 * the guardian's bound, so it is not held after all. The stop is still pending (the thread has
 * not left the kernel) and SIGCONT discards it. */
static __always_inline void xt_unhold(__u32 tgid)
{
	if (bpf_map_delete_elem(&held, &tgid) == 0)
		bpf_send_signal_thread(XT_SIGCONT);
	xt_count(XT_CNT_HOLD_MISSED);
}

#endif /* XTRACE_HOLD_BPF_H */

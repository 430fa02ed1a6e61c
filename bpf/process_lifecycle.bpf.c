// SPDX-License-Identifier: GPL-2.0
/* Process lifecycle: how a capture learns of processes without polling /proc. exec, fork and
 * exit tracepoints (raw_tp) keep `traced_pids` up to date in the kernel, before the new
 * process runs a single instruction (children of traced processes, processes named --comm),
 * and report processes in scope to user space; a uprobe on the dynamic linker's debugger hook
 * (_dl_debug_state, called after every change to the list of loaded objects, at start-up and
 * on each dlopen/dlclose) tells it when to look at a process's libraries again.
 *
 * Holds (include/xtrace/hold.h): when a selected process execs, or its linker has just mapped
 * new objects, the program that sees it stops it (SIGSTOP) before it runs another instruction
 * of its own, and says so in the record (XT_FLAG_HELD); the capture continues it once its new
 * files are probed, so its first calls are traced. */
#include "hold.bpf.h"
#include "scope.bpf.h"

#define XT_SIGTSTP 20
#define XT_SIGTTIN 21
#define XT_SIGTTOU 22
#define XT_SI_USER 0   /* kill(2) */
#define XT_SI_TKILL -6 /* tkill(2), tgkill(2) */
#define XT_TRACE_SIGNAL_DELIVERED 0 /* include/trace/events/signal.h */
#define XT_TRACE_SIGNAL_ALREADY_PENDING 2
#define XT_PIDTYPE_TGID 1 /* enum pid_type */

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;
extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type,
				u64 value) __ksym __weak;

char LICENSE[] SEC("license") = "GPL";

/* Lifecycle records wake the reader at once (unlike probe records, which wait for its timer):
 * they are rare, and the sooner user space scans a new process, the fewer of its first calls
 * run before its libraries are probed. */
static __always_inline int xt_output_now(void *rec, __u64 size)
{
	return xt_output_waking(rec, size, BPF_RB_FORCE_WAKEUP);
}

static __always_inline int xt_same_comm(const char *a, const char *b)
{
	union xt_comm x = {}, y = {};

	__builtin_memcpy(x.c, a, sizeof(x.c));
	__builtin_memcpy(y.c, b, sizeof(y.c));
	return x.w[0] == y.w[0] && x.w[1] == y.w[1];
}

/* The current thread asks the filter afresh at its next probe hit (thread.bpf.h). */
static __always_inline void xt_forget_thread_answer(void)
{
	struct xt_thread_state *st =
		bpf_task_storage_get(&thread_state, bpf_get_current_task_btf(), 0, 0);

	if (st)
		st->traced = XT_TRACED_UNKNOWN;
}

static __always_inline void xt_select(__u32 tgid)
{
	__u8 one = 1;

	if (bpf_map_update_elem(&traced_pids, &tgid, &one, BPF_ANY))
		xt_count(XT_CNT_TRACED_FULL);
	else
		xt_filter_changed(); /* e.g. an exec that now matches --comm: its thread asks again */
}

/* The process's pid in its own (innermost) pid namespace. */
static __always_inline __u32 xt_innermost_pid(struct task_struct *task)
{
	struct pid *p = BPF_CORE_READ(task, group_leader, thread_pid);
	__u32 level = BPF_CORE_READ(p, level);
	struct upid up = {};

	if (level >= XT_MAX_PID_NS_LEVEL)
		return 0;
	bpf_core_read(&up, sizeof(up), &p->numbers[level]);
	return up.nr;
}

/* Fills the fixed part of a process event about `task` (process `tgid`, thread `pid`). */
static __always_inline void xt_fill_process_event(struct xt_process_event *rec, __u16 type,
						  struct task_struct *task,
						  const struct xt_capture_config *cfg, __u32 pid,
						  __u32 tgid)
{
	__u32 parent_pid = 0, parent_tgid = 0;
	__u64 now = bpf_ktime_get_ns();

	xt_fill_header_of(&rec->hdr, type, sizeof(*rec), 0, now, now, tgid, pid);
	if (xt_task_ids(BPF_CORE_READ(task, real_parent), cfg, &parent_pid, &parent_tgid))
		rec->parent_pid = parent_tgid;
	rec->ns_pid = xt_innermost_pid(task);
	rec->cgroup_id = bpf_get_current_cgroup_id();
	BPF_CORE_READ_STR_INTO(&rec->comm, task, group_leader, comm);
	rec->args_len = 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(xt_process_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	const struct xt_capture_config *cfg = xt_config();
	struct xt_itt_rings_seen *seen;
	struct xt_process_event *rec;
	struct xt_scratch *buf;
	__u32 zero = 0, pid, tgid;
	unsigned long arg_start, arg_end;
	__u64 len;
	char comm[XT_COMM_LEN] = {};

	if (!cfg || !xt_task_ids(task, cfg, &pid, &tgid))
		return 0;
	/* ITT fast-path rings lay in the image just replaced: not to be looked for any more. */
	seen = bpf_map_lookup_elem(&itt_rings, &tgid);
	if (seen)
		seen->control = 0;
	/* The new image's credentials are set by now: a set-user-ID program makes a process
	 * somebody else's. The thread's kept filter answer is for the old ones; a process that
	 * is no longer the owner's leaves the filter (and its children with it), and user space
	 * is told, to say so (an exec record flagged XT_FLAG_LEFT_SCOPE, bare: nothing of the
	 * other user's program, neither its arguments nor its name). */
	if (cfg->scope & XT_SCOPE_OWNER) {
		xt_forget_thread_answer();
		if (!xt_owned(cfg) && bpf_map_delete_elem(&traced_pids, &tgid) == 0) {
			struct xt_process_event left = {};

			xt_filter_changed();
			xt_fill_process_event(&left, XT_REC_PROCESS_EXEC, task, cfg, pid, tgid);
			__builtin_memset(left.comm, 0, sizeof(left.comm));
			left.hdr.flags |= XT_FLAG_LEFT_SCOPE;
			xt_output_now(&left, sizeof(left));
			return 0;
		}
	}
	/* The new image's name is set by now: this is where --comm selects a process. */
	if ((cfg->scope & XT_SCOPE_COMM) && xt_owned(cfg)) {
		BPF_CORE_READ_STR_INTO(&comm, task, comm);
		if (xt_same_comm(comm, cfg->comm))
			xt_select(tgid);
	}
	if (!xt_scope_selects(cfg, tgid) || !xt_in_cgroup_scope(cfg))
		return 0;
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		return 0;
	rec = (struct xt_process_event *)buf->data;
	xt_fill_process_event(rec, XT_REC_PROCESS_EXEC, task, cfg, pid, tgid);
	/* The new stack holds argv, just written by the kernel, so it is resident. */
	arg_start = BPF_CORE_READ(task, mm, arg_start);
	arg_end = BPF_CORE_READ(task, mm, arg_end);
	len = arg_end > arg_start ? arg_end - arg_start : 0;
	if (len > XT_MAX_ARGS) {
		len = XT_MAX_ARGS;
		rec->hdr.flags |= XT_FLAG_TRUNCATED;
	}
	/* A no-op on the value that gives the verifier its bound (XT_MAX_ARGS is a power of 2). */
	len &= 2 * XT_MAX_ARGS - 1;
	if (len && bpf_probe_read_user(buf->data + sizeof(*rec), len, (const void *)arg_start)) {
		rec->hdr.flags |= XT_FLAG_ARG_UNREADABLE;
		len = 0;
	}
	rec->args_len = len;
	rec->hdr.size = sizeof(*rec) + len;
	/* The new image and its dynamic linker are mapped, neither has run: the capture probes
	 * them (and hooks the linker, if it is a file it has not seen) while the process waits. */
	rec->hdr.flags |= xt_hold(cfg, tgid, pid, XT_HOLD_EXEC, rec->hdr.start_ns);
	if (xt_output_now(rec, sizeof(*rec) + len) && (rec->hdr.flags & XT_FLAG_HELD))
		xt_unhold(tgid);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(xt_process_fork, struct task_struct *parent, struct task_struct *child)
{
	const struct xt_capture_config *cfg = xt_config();
	struct xt_process_event rec = {};
	__u32 parent_pid, parent_tgid, pid, tgid;
	char comm[XT_COMM_LEN] = {};

	/* A new thread is not a new process. */
	if (!cfg || BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid))
		return 0;
	if (!xt_task_ids(child, cfg, &pid, &tgid))
		return 0;
	/* The child has its parent's credentials: the parent's (current) are the ones to test. */
	if (!xt_owned(cfg))
		return 0;
	if ((cfg->scope & XT_SCOPE_FOLLOW_CHILDREN) && xt_current_ids(cfg, &parent_pid, &parent_tgid) &&
	    bpf_map_lookup_elem(&traced_pids, &parent_tgid))
		xt_select(tgid);
	if (cfg->scope & XT_SCOPE_COMM) {
		BPF_CORE_READ_STR_INTO(&comm, child, comm);
		if (xt_same_comm(comm, cfg->comm))
			xt_select(tgid);
	}
	/* The child starts in its parent's cgroup: the current task's is the one to test. */
	if (!xt_scope_selects(cfg, tgid) || !xt_in_cgroup_scope(cfg))
		return 0;
	xt_fill_process_event(&rec, XT_REC_PROCESS_FORK, child, cfg, pid, tgid);
	xt_output_now(&rec, sizeof(rec));
	return 0;
}

/* A thread leaving while inside a recorded call: the call will never return, so its entry is
 * all there is to report. The slot is filled only for traced threads (pairing.bpf.h); a call
 * entered while paused was recorded for its name alone and is not reported. The exiting
 * thread is the current task here, whose storage lives until the task is freed. */
static __always_inline void xt_report_unfinished_call(const struct xt_capture_config *cfg,
						      struct task_struct *task, __u64 now)
{
	struct xt_thread_state *st;
	struct xt_call_unfinished rec = {};

	st = bpf_task_storage_get(&thread_state, bpf_get_current_task_btf(), 0, 0);
	if (!st || !st->call.start_ns)
		return;
	if (!(st->call.flags & XT_FLAG_PAUSED)) {
		xt_fill_header_of(&rec.hdr, XT_REC_CALL_UNFINISHED, sizeof(rec), 0, st->call.start_ns,
				  now, 0, 0);
		/* The ids as the collector numbers them, as every record of the thread has them. */
		if (xt_current_ids(cfg, &rec.hdr.tid, &rec.hdr.pid)) {
			rec.fn = st->call.fn;
			rec.exit_code = BPF_CORE_READ(task, exit_code);
			xt_output_now(&rec, sizeof(rec));
		}
	}
	st->call.start_ns = 0;
}

/* The ITT fast path's rings live in the process's memory: records xtrace has not read yet go
 * with it. Its threads' exits and its exec are the last moments anyone can read that memory
 * (the exit tracepoint runs before the task lets go of its mm since Linux 6.16; exec's
 * prepare tracepoint before the old image is replaced), so the rings' counters are added up
 * here, and user space counts what it never read as dropped. Every look keeps the largest
 * totals: a later look at a process that goes on only ever sees more. */
struct xt_ring_sums {
	__u64 control;
	__u64 records;
	__u64 dropped;
	int failed;
};

static long xt_add_ring(__u32 i, void *data)
{
	struct xt_ring_sums *sums = data;
	__u64 ring = 0, counters[2] = {};

	if (bpf_probe_read_user(&ring, sizeof(ring),
				(void *)(sums->control + XT_ITT_CONTROL_RINGS_OFFSET + 8 * (__u64)i)))
		goto unreadable;
	if (!ring)
		return 0; /* a ring still being set up: it holds nothing yet */
	if (bpf_probe_read_user(counters, sizeof(counters),
				(void *)(ring + XT_ITT_RING_COUNTERS_OFFSET)))
		goto unreadable;
	sums->dropped += counters[0];
	sums->records += counters[1];
	return 0;
unreadable:
	sums->failed = 1;
	return 1;
}

static __always_inline void xt_look_at_itt_rings(__u32 tgid)
{
	struct xt_itt_rings_seen *seen = bpf_map_lookup_elem(&itt_rings, &tgid);
	struct xt_ring_sums sums = {};
	__u64 header[2] = {}; /* no_ring_dropped, then ring_count (and its padding) */
	__u32 count;

	if (!seen || !seen->control)
		return;
	sums.control = seen->control;
	if (bpf_probe_read_user(header, sizeof(header),
				(void *)(sums.control + XT_ITT_CONTROL_NO_RING_DROPPED_OFFSET))) {
		__sync_fetch_and_add(&seen->unreadable, 1);
		return;
	}
	count = (__u32)header[1];
	if (count > XT_ITT_MAX_RINGS)
		count = XT_ITT_MAX_RINGS;
	sums.dropped = header[0];
	bpf_loop(count, xt_add_ring, &sums, 0);
	if (sums.failed) {
		__sync_fetch_and_add(&seen->unreadable, 1);
		return;
	}
	if (sums.records > seen->records)
		seen->records = sums.records;
	if (sums.dropped > seen->dropped)
		seen->dropped = sums.dropped;
	__sync_fetch_and_add(&seen->looks, 1);
}

SEC("raw_tp/sched_prepare_exec")
int BPF_PROG(xt_process_prepare_exec, struct task_struct *task, struct linux_binprm *bprm)
{
	const struct xt_capture_config *cfg = xt_config();
	__u32 pid, tgid;

	if (cfg && xt_current_ids(cfg, &pid, &tgid))
		xt_look_at_itt_rings(tgid);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(xt_process_exit, struct task_struct *task)
{
	const struct xt_capture_config *cfg = xt_config();
	struct xt_process_exit rec = {};
	__u32 pid, tgid;
	__u64 now;

	if (!cfg)
		return 0;
	xt_report_unfinished_call(cfg, task, bpf_ktime_get_ns());
	if (xt_current_ids(cfg, &pid, &tgid))
		xt_look_at_itt_rings(tgid);
	/* Every thread passes here; the process is gone when its last live thread does
	 * (signal->live is decremented before this tracepoint). */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	if (!xt_task_ids(task, cfg, &pid, &tgid))
		return 0;
	if (xt_scope_selects(cfg, tgid) && xt_in_cgroup_scope(cfg)) {
		now = bpf_ktime_get_ns();
		xt_fill_header_of(&rec.hdr, XT_REC_PROCESS_EXIT, sizeof(rec), 0, now, now, tgid, pid);
		rec.exit_code = BPF_CORE_READ(task, exit_code);
		xt_output_now(&rec, sizeof(rec));
	}
	/* A pid is reused sooner or later: the next process with it starts unselected, and
	 * collecting (a pause or __itt_detach was this process's alone). */
	/* Both deletes run: a paused process that left the filter has both entries. */
	int forgot = bpf_map_delete_elem(&traced_pids, &tgid) == 0;

	forgot |= bpf_map_delete_elem(&collection_state, &tgid) == 0;
	if (forgot)
		xt_filter_changed();
	/* A process that dies held (SIGKILL while stopped) is not continued: its pid may be the
	 * next process's. */
	bpf_map_delete_elem(&held, &tgid);
	tgid = BPF_CORE_READ(task, tgid);
	bpf_map_delete_elem(&hold_parents, &tgid);
	return 0;
}

static __always_inline int xt_is_stop_signal(int sig)
{
	return sig == XT_SIGSTOP || sig == XT_SIGTSTP || sig == XT_SIGTTIN || sig == XT_SIGTTOU;
}

/* Continues `parent` (kernel tgid), stopped only because its held child was. */
static __always_inline void xt_continue_parent(__u32 parent)
{
	struct task_struct *task;

	/* Weak: without them (before Linux 6.13) the program loads, and the parent stays stopped. */
	if (!bpf_send_signal_task || !bpf_task_from_pid || !bpf_task_release)
		return;
	task = bpf_task_from_pid(parent);
	if (!task)
		return;
	if (bpf_send_signal_task(task, XT_SIGCONT, XT_PIDTYPE_TGID, 0) == 0)
		xt_count(XT_CNT_PARENT_CONTINUED);
	bpf_task_release(task);
}

/* Every signal sent while holds are taken (attached only then). Two cases matter:
 *   - a process stops itself (kill or tgkill from its own thread) while it is the parent of a
 *     held child: if the child was continued already, this stop is undone now; otherwise it
 *     is marked, and the child's release continues the parent;
 *   - a held child is continued: its parent, if it stopped itself meanwhile, goes on too.
 * Each side sets its bit atomically and looks at the other's, so exactly one of them
 * continues the parent whatever the order. Our own hold (sent by the kernel: SI_KERNEL) and
 * the terminal's job control stops (the kernel's too) are never taken for an echo. */
SEC("tp_btf/signal_generate")
int BPF_PROG(xt_signal_generate, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	struct xt_hold_parent *e;
	__u32 target = task->tgid, parent;
	__u64 old;
	int code;

	if (sig == XT_SIGCONT) {
		parent = task->real_parent->tgid;
		e = bpf_map_lookup_elem(&hold_parents, &parent);
		if (!e || e->child != target)
			return 0;
		/* The parent we continued continues its child: the echo it owed has landed. */
		if ((bpf_get_current_pid_tgid() >> 32) == parent && (e->state & XT_PARENT_CONTINUED)) {
			bpf_map_delete_elem(&hold_parents, &parent);
			return 0;
		}
		old = __sync_fetch_and_or(&e->state, XT_CHILD_RELEASED);
		if ((old & XT_PARENT_STOPPED) &&
		    !(__sync_fetch_and_or(&e->state, XT_PARENT_CONTINUED) & XT_PARENT_CONTINUED))
			xt_continue_parent(parent);
		return 0;
	}
	if (!xt_is_stop_signal(sig) || (bpf_get_current_pid_tgid() >> 32) != target)
		return 0;
	if (result != XT_TRACE_SIGNAL_DELIVERED && result != XT_TRACE_SIGNAL_ALREADY_PENDING)
		return 0;
	/* SEND_SIG_NOINFO (0) and SEND_SIG_PRIV (1) are not pointers: the kernel's own signals. */
	if ((unsigned long)info < 4096)
		return 0;
	code = info->si_code;
	if (code != XT_SI_USER && code != XT_SI_TKILL)
		return 0;
	e = bpf_map_lookup_elem(&hold_parents, &target);
	if (!e)
		return 0;
	if (bpf_ktime_get_ns() - e->since_ns > XT_PARENT_ECHO_NS) {
		bpf_map_delete_elem(&hold_parents, &target);
		return 0;
	}
	/* Continued once for this hold already: a stop of its own (its child stopped by someone
	 * else), not ours to undo. */
	if (e->state & XT_PARENT_CONTINUED)
		return 0;
	old = __sync_fetch_and_or(&e->state, XT_PARENT_STOPPED);
	if ((old & XT_CHILD_RELEASED) &&
	    !(__sync_fetch_and_or(&e->state, XT_PARENT_CONTINUED) & XT_PARENT_CONTINUED)) {
		/* The child runs already: the stop is pending on this process, and a SIGCONT
		 * (sent once the signal lock is dropped) discards it before it takes effect. The
		 * entry stays until the parent's echo to its child lands. */
		if (bpf_send_signal(XT_SIGCONT) == 0)
			xt_count(XT_CNT_PARENT_CONTINUED);
	}
	return 0;
}

/* Whether the linker's list of objects is consistent at this call of _dl_debug_state: the
 * uprobe's cookie is the distance from _dl_debug_state to _r_debug in this linker's file (0:
 * it has no _r_debug, and every call counts). */
static __always_inline int xt_link_map_consistent(struct pt_regs *ctx)
{
	__s64 to_r_debug = (__s64)bpf_get_attach_cookie(ctx);
	int state = XT_RT_CONSISTENT;

	if (!to_r_debug)
		return 1;
	if (bpf_probe_read_user(&state, sizeof(state),
				(void *)(bpf_get_func_ip(ctx) + to_r_debug + XT_R_DEBUG_STATE_OFFSET)))
		return 1;
	return state == XT_RT_CONSISTENT;
}

/* void _dl_debug_state(void) in ld.so: the dynamic linker's breakpoint for debuggers. */
SEC("uprobe")
int xt_dl_debug_state(struct pt_regs *ctx)
{
	const struct xt_capture_config *cfg = xt_config();
	struct xt_record_header rec = {};
	__u32 pid = 0, tgid = 0;
	__u64 now;

	/* Selected, whatever its collection state: a paused process's libraries are probed too. */
	if (!cfg || !xt_current_ids(cfg, &pid, &tgid) || !xt_selected(cfg, tgid))
		return 0;
	now = bpf_ktime_get_ns();
	xt_fill_header_of(&rec, XT_REC_PROCESS_MAPS, sizeof(rec), 0, now, now, tgid, pid);
	if (xt_link_map_consistent(ctx))
		rec.flags |= xt_hold(cfg, tgid, pid, XT_HOLD_LIBRARY, now);
	if (xt_output_now(&rec, sizeof(rec)) && (rec.flags & XT_FLAG_HELD))
		xt_unhold(tgid);
	return 0;
}

/* Where the collector itself lives, found by running xt_whoami once in its own context
 * (BPF_PROG_TEST_RUN): the depth and inode of its pid namespace. /proc cannot say the depth
 * from inside a namespace, and BPF needs it to number processes as the collector sees them. */
__u32 self_pidns_level = 0;
__u64 self_pidns_inum = 0;

SEC("raw_tp")
int xt_whoami(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pid *p = BPF_CORE_READ(task, thread_pid);
	__u32 level = BPF_CORE_READ(p, level);
	struct upid up = {};

	if (level >= XT_MAX_PID_NS_LEVEL)
		return 0;
	if (bpf_core_read(&up, sizeof(up), &p->numbers[level]))
		return 0;
	self_pidns_level = level;
	self_pidns_inum = BPF_CORE_READ(up.ns, ns.inum);
	return 0;
}

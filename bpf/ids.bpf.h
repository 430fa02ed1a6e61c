/* Process and thread ids as the collector numbers them: the kernel's own ids, or, when the
 * collector runs in a pid namespace of its own (a container, a pod sidecar), that
 * namespace's. The one place BPF turns a task into the ids records and maps carry
 * (records.h, struct xt_record_header). BPF-only. */
#ifndef XTRACE_IDS_BPF_H
#define XTRACE_IDS_BPF_H

#include "maps.bpf.h"

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

/* `task`'s thread id and process id as the collector numbers them. Returns 0 when the task
 * lies outside the collector's pid namespace. */
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

/* xt_task_ids for the current task; without a namespace of its own, one helper call. */
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

/* The current process's id as the collector numbers it; 0 when it lies outside the
 * collector's pid namespace. */
static __always_inline __u32 xt_current_tgid(const struct xt_capture_config *cfg)
{
	__u32 pid = 0, tgid = 0;

	if (!xt_current_ids(cfg, &pid, &tgid))
		return 0;
	return tgid;
}

#endif /* XTRACE_IDS_BPF_H */

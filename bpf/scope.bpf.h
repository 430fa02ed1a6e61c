/* Whether a probe hit is recorded: the capture's scope (traced processes, cgroup) and each
 * process's collection state (paused, detached). Every program asks xt_traced, or the
 * per-thread kept answer (thread.bpf.h), before it records anything. BPF-only. */
#ifndef XTRACE_SCOPE_BPF_H
#define XTRACE_SCOPE_BPF_H

#include "ids.bpf.h"
#include "output.bpf.h"

/* Set as rodata between open and load: the probe sources filter by the scope, the maps
 * object (which has no programs) does not care. */
const volatile __u32 filter_by_pid = 0;

/* XT_SCOPE_OWNER: the current task's real, effective and saved uid are all the owner's (the
 * saved one too: a process that kept another uid there can take it back at any moment, and
 * ptrace's own rule asks the same). The real uid is compared first, from a helper, so that
 * another user's process is turned away without its credentials being read. */
static __always_inline int xt_owned(const struct xt_capture_config *cfg)
{
	struct task_struct *task;
	__u32 uid;

	if (!cfg || !(cfg->scope & XT_SCOPE_OWNER))
		return 1;
	uid = cfg->owner_uid;
	if ((__u32)bpf_get_current_uid_gid() != uid)
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(task, cred, euid.val) == uid &&
	       BPF_CORE_READ(task, cred, suid.val) == uid;
}

/* Process `tgid` (collector numbering) is one the capture records. Asked only when a thread's
 * kept answer is stale (thread.bpf.h), so the owner check costs nothing per call. */
static __always_inline int xt_scope_selects(const struct xt_capture_config *cfg, __u32 tgid)
{
	if (!xt_owned(cfg))
		return 0;
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

/* True when the current process, `tgid` (xt_current_tgid), passes the process filter
 * (whatever its collection state); see capture_config.h for the rule. */
static __always_inline int xt_selected(const struct xt_capture_config *cfg, __u32 tgid)
{
	if (!filter_by_pid)
		return 1;
	return tgid && xt_scope_selects(cfg, tgid) && xt_in_cgroup_scope(cfg);
}

/* True unless process `tgid`'s collection is paused or detached; a skipped hit is counted. */
static __always_inline int xt_collecting(__u32 tgid)
{
	__u32 *state = bpf_map_lookup_elem(&collection_state, &tgid);

	if (state && *state != XT_COLLECT_ON) {
		xt_count(XT_CNT_PAUSED);
		return 0;
	}
	return 1;
}

/* The kinds of unknown handles asked about in process `tgid` (a mask of 1 << enum
 * xt_query_kind; 0: none, it was not attached mid-run), only while the capture takes such
 * holds (hold.h). */
static __always_inline __u32 xt_query_mode(const struct xt_capture_config *cfg, __u32 tgid)
{
	__u32 *kinds;

	if (!cfg || !(cfg->hold & XT_HOLD_QUERY))
		return 0;
	kinds = bpf_map_lookup_elem(&query_pids, &tgid);
	return kinds ? *kinds : 0;
}

/* Whether a probe hit in the current process is recorded. */
static __always_inline int xt_traced(void)
{
	const struct xt_capture_config *cfg = xt_config();
	__u32 tgid = xt_current_tgid(cfg);

	return xt_selected(cfg, tgid) && xt_collecting(tgid);
}

/* For a BPF program that changed traced_pids or collection_state: see filter_epoch. */
static __always_inline void xt_filter_changed(void)
{
	__u32 key = 1;
	__u64 *epoch = bpf_map_lookup_elem(&filter_epoch, &key);

	if (epoch)
		__sync_fetch_and_add(epoch, 1);
}

#endif /* XTRACE_SCOPE_BPF_H */

/* Which processes a capture records, as every BPF probe reads it from the shared
 * `capture_config` map (one entry, written by user space before anything is attached).
 *
 * Plain C with __u32/__u64 only: compiled by clang -target bpf and by C++.
 * A probe records the current process when it is selected and lies in the capture's scope:
 *   selected  = XT_SCOPE_ALL_PROCESSES, or its tgid is in `traced_pids` (explicit targets,
 *               their children with XT_SCOPE_FOLLOW_CHILDREN, processes named `comm` with
 *               XT_SCOPE_COMM: the lifecycle program adds those at fork and exec);
 *   in scope  = under the cgroup in `scope_cgroup` when XT_SCOPE_CGROUP, and, when
 *               XT_SCOPE_PID_NAMESPACE, inside the collector's own pid namespace;
 *   owned     = with XT_SCOPE_OWNER, the process's real, effective and saved uid are all
 *               `owner_uid` (a capture a user asked the daemon for: their processes alone).
 * With no scope flag at all only `traced_pids` counts (attach --pid, as before).
 */
#ifndef XTRACE_CAPTURE_CONFIG_H
#define XTRACE_CAPTURE_CONFIG_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "xtrace/layout_check.h"

enum xt_scope_flags {
	XT_SCOPE_ALL_PROCESSES = 1u << 0, /* --system, or a --cgroup/--container filter alone */
	XT_SCOPE_FOLLOW_CHILDREN = 1u << 1, /* a traced process's new children are traced */
	XT_SCOPE_COMM = 1u << 2,            /* processes that exec (or fork) as `comm` are traced */
	XT_SCOPE_CGROUP = 1u << 3,          /* only processes under scope_cgroup (and its children) */
	XT_SCOPE_PID_NAMESPACE = 1u << 4,   /* only the collector's pid namespace (ids: records.h) */
	XT_SCOPE_OWNER = 1u << 5,           /* only processes whose uids are all owner_uid */
};

/* Deepest pid namespace nesting the kernel allows (MAX_PID_NS_LEVEL). */
#define XT_MAX_PID_NS_LEVEL 32

struct xt_capture_config {
	__u32 scope;       /* enum xt_scope_flags */
	__u32 pidns_level; /* the collector's pid namespace depth (0 = the initial namespace) */
	__u64 pidns_inum;  /* its inode number (/proc/self/ns/pid) */
	char comm[16];     /* XT_SCOPE_COMM: the process name, NUL-padded (TASK_COMM_LEN) */
	__u32 hold;        /* where a selected process is held (hold.h): XT_HOLD_EXEC | XT_HOLD_LIBRARY;
			    * 0: never. The bound on a hold is the guardian's, never read by BPF. */
	__u32 owner_uid;   /* XT_SCOPE_OWNER: the uid, as the initial user namespace numbers it */
};

/* Written by user space, read by every probe (layout_check.h). */
XT_LAYOUT(XT_SIZE(xt_capture_config) == 40);
XT_LAYOUT(XT_OFFSET(xt_capture_config, pidns_inum) == 8);
XT_LAYOUT(XT_OFFSET(xt_capture_config, comm) == 16);
XT_LAYOUT(XT_OFFSET(xt_capture_config, hold) == 32);
XT_LAYOUT(XT_OFFSET(xt_capture_config, owner_uid) == 36);

#endif /* XTRACE_CAPTURE_CONFIG_H */

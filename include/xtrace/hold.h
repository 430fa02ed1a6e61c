/* Held processes: a process that matches a capture is stopped (SIGSTOP from the BPF program
 * that saw it exec or load a library) until the probes are in place on its new files, so
 * that its first calls are traced. Every hold is an entry of the `held` map, keyed by the
 * process id as the collector's pid namespace numbers it:
 *   - the BPF program adds the entry as it sends the stop;
 *   - the capture deletes it and sends SIGCONT once it has attached;
 *   - the hold guardian (a small process of xtrace's own) continues any process whose hold
 *     outlived the bound, and every held process when xtrace is gone, even if killed.
 *
 * Plain C with __u32/__u64 only: compiled by clang -target bpf and by C++.
 */
#ifndef XTRACE_HOLD_H
#define XTRACE_HOLD_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "xtrace/layout_check.h"

/* Processes held at once; a hold that finds the map full is not taken (counted). */
#define XT_MAX_HELD 1024

/* Why a process is held; also the bits of xt_capture_config.hold that enable each hold. */
enum xt_hold_reason {
	XT_HOLD_EXEC = 1,   /* it exec'd: its executable and dynamic linker are new files */
	XT_HOLD_LIBRARY = 2, /* its dynamic linker reported a change to its list of libraries */
	XT_HOLD_QUERY = 4,  /* a process attached mid-run used a Level Zero object xtrace never saw
			     * made: it is held at the entry of that call to be asked about it */
	/* Not a reason, a setting: hold (at exec and library loads) a program a shell with job
	 * control runs as a job of its terminal too. Without it such a program is not stopped
	 * (hold.bpf.h, xt_terminal_job): its shell would report the stop as the job's. */
	XT_HOLD_TERMINAL_JOBS = 8,
};

/* Objects made before the attach (capture/sources/ze_query.h). A process in `query_pids` has each
 * kernel handle its launches use looked up in `known_handles` (made or learned since the
 * capture began); one that is not there goes into `asked_handles` and the launching thread is
 * held (XT_HOLD_QUERY, record xt_ze_query_hold) at that call's entry, where the capture asks
 * the process's own loader about every handle asked for, then moves them to `known_handles`. */
#define XT_MAX_QUERY_HANDLES 65536
#define XT_MAX_QUERY_ASKED 1024

/* What a handle asked about is, as the value of its `asked_handles` entry; a process's
 * `query_pids` value is the mask (1 << kind) of the kinds its loader can be asked about
 * (the command-list, queue and event queries arrived in Level Zero 1.9). */
enum xt_query_kind {
	XT_QUERY_KERNEL = 0,        /* its name (zeKernelGetName) */
	XT_QUERY_COMMAND_LIST = 1,  /* device, ordinal, index, immediate or not */
	XT_QUERY_COMMAND_QUEUE = 2, /* ordinal and index */
	XT_QUERY_EVENT = 3,         /* its pool's flags (kernel timestamps, host visible) */
	XT_QUERY_KINDS = 4,
};

enum xt_known_handle {
	XT_HANDLE_MADE = 1,    /* its creation was seen */
	XT_HANDLE_LEARNED = 2, /* made before the attach, and asked about */
};

struct xt_query_key {
	__u32 pid;
	__u32 pad;
	__u64 handle;
};

/* struct r_debug (glibc <link.h>, x86-64): r_version@0, r_map@8, r_brk@16, r_state@24 (an
 * int: RT_CONSISTENT 0, RT_ADD 1, RT_DELETE 2), r_ldbase@32. The linker calls
 * _dl_debug_state before and after each change to its list of objects; only the call with
 * the list consistent again holds the process: the new objects are mapped, none has run. */
#define XT_R_DEBUG_STATE_OFFSET 24
#define XT_RT_CONSISTENT 0

struct xt_hold {
	__u64 since_ns; /* bpf_ktime_get_ns() when the stop was sent (CLOCK_MONOTONIC) */
	__u32 tid;      /* the thread that was stopped (collector's pid namespace) */
	__u32 reason;   /* enum xt_hold_reason */
	__u64 ip;       /* query holds: the address of the call the thread is held in; else 0 */
};

/* Parents that mirror their child's stops (bpf/maps.bpf.h, hold_parents: keyed by the
 * parent's kernel tgid). Such a parent (nsenter, unshare --fork, sudo, su) stops itself when
 * its child stops and, once continued, sends its child a SIGCONT: the echo. xtrace continues
 * the parent when it continues the held child, and the echo comes whenever the parent next
 * gets a CPU: if it came after the child's next hold began and before the capture had the
 * held thread in a ptrace stop, it would end that hold early. So the entry stays until the
 * echo lands, and a query hold lets its thread go only once no echo is owed to its process
 * (capture/sources/ze_query.cc): an echo then finds the thread still in its ptrace stop. */
enum xt_hold_parent_state {
	XT_PARENT_STOPPED = 1,   /* the parent stopped itself while the child was held */
	XT_CHILD_RELEASED = 2,   /* the child was continued */
	XT_PARENT_CONTINUED = 4, /* xtrace continued the parent: it owes its child a SIGCONT */
};

struct xt_hold_parent {
	__u64 since_ns; /* when the child was held */
	__u32 child;    /* the held child, kernel tgid */
	__u32 child_ns; /* the same as the collector's pid namespace numbers it */
	__u64 state;    /* enum xt_hold_parent_state bits, set atomically (64-bit: BPF's v1-v2
			 * instruction sets have no 32-bit fetch-or) */
};

/* Keys and values of the hold and query maps, read by BPF and user space (layout_check.h). */
XT_LAYOUT(XT_SIZE(xt_query_key) == 16);
XT_LAYOUT(XT_OFFSET(xt_query_key, handle) == 8);
XT_LAYOUT(XT_SIZE(xt_hold) == 24);
XT_LAYOUT(XT_OFFSET(xt_hold, reason) == 12);
XT_LAYOUT(XT_OFFSET(xt_hold, ip) == 16);
XT_LAYOUT(XT_SIZE(xt_hold_parent) == 24);
XT_LAYOUT(XT_OFFSET(xt_hold_parent, child_ns) == 12);
XT_LAYOUT(XT_OFFSET(xt_hold_parent, state) == 16);

#endif /* XTRACE_HOLD_H */

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

/* Processes held at once; a hold that finds the map full is not taken (counted). */
#define XT_MAX_HELD 1024

enum xt_hold_reason {
	XT_HOLD_EXEC = 1,   /* it exec'd: its executable and dynamic linker are new files */
	XT_HOLD_LIBRARY = 2, /* its dynamic linker reported a change to its list of libraries */
};

struct xt_hold {
	__u64 since_ns; /* bpf_ktime_get_ns() when the stop was sent (CLOCK_MONOTONIC) */
	__u32 tid;      /* the thread that was stopped (collector's pid namespace) */
	__u32 reason;   /* enum xt_hold_reason */
};

#endif /* XTRACE_HOLD_H */

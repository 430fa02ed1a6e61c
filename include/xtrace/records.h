/* Record layouts and limits shared by the BPF programs and the user-space decoder.
 *
 * Plain C with __u32/__u64 only: this header is compiled by clang -target bpf and by C++.
 * Every record starts with struct xt_record_header; the decoder dispatches on `type` and
 * checks `size` before it reads anything past the header. A variable-length tail (a string)
 * always ends the record and its length is set by the BPF side.
 */
#ifndef XTRACE_RECORDS_H
#define XTRACE_RECORDS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Longest kernel name copied from the target. Templated SYCL kernel names run to well over
 * a thousand characters; longer names are cut and flagged XT_FLAG_TRUNCATED. */
#define XT_MAX_NAME 4096

/* Largest single record (header + fixed part + tail). */
#define XT_MAX_RECORD (XT_MAX_NAME + 128)

/* Pending entries kept per thread while a probed call runs (entry/return pairing). */
#define XT_MAX_INFLIGHT 16384

/* Threads whose current name BPF remembers (to report renames). */
#define XT_MAX_THREADS 65536

/* Length of a task's comm, NUL included (TASK_COMM_LEN). */
#define XT_COMM_LEN 16

/* Processes traced at once (BPF-side pid filter). */
#define XT_MAX_TRACED_PROCS 4096

enum xt_record_type {
	XT_REC_KERNEL_CREATE = 1, /* zeKernelCreate, entry + return */
	XT_REC_LAUNCH_KERNEL = 2, /* zeCommandListAppendLaunchKernel, entry + return */
	XT_REC_THREAD_NAME = 3,   /* before a thread's first record, and after it renames itself */
};

enum xt_record_flags {
	XT_FLAG_TRUNCATED = 1u << 0,   /* the string tail was cut at XT_MAX_NAME */
	XT_FLAG_ARG_UNREADABLE = 1u << 1, /* an argument pointer could not be read */
};

struct xt_record_header {
	__u16 type;    /* enum xt_record_type */
	__u16 size;    /* bytes of the whole record, header included */
	__u32 flags;   /* enum xt_record_flags */
	__u32 pid;     /* tgid, as the kernel's init pid namespace sees it */
	__u32 tid;
	__u64 start_ns; /* CLOCK_MONOTONIC at function entry */
	__u64 end_ns;   /* CLOCK_MONOTONIC at function return */
};

/* zeKernelCreate(hModule, desc, phKernel): the name is read from desc->pKernelName at entry,
 * the handle from *phKernel at return. Followed by name_len bytes (no NUL). */
struct xt_kernel_create {
	struct xt_record_header hdr;
	__u64 module;
	__u64 kernel;
	__s32 result;
	__u32 name_len;
	/* char name[name_len]; */
};

/* zeCommandListAppendLaunchKernel(hCommandList, hKernel, pLaunchFuncArgs, hSignalEvent,
 *                                 numWaitEvents, phWaitEvents) */
struct xt_launch_kernel {
	struct xt_record_header hdr;
	__u64 command_list;
	__u64 kernel;
	__u64 signal_event;
	__u32 group_count[3];
	__u32 num_wait_events;
	__s32 result;
	__u32 reserved;
};

/* A thread's name as the kernel has it when the thread makes a traced call. Emitted by BPF,
 * not read from /proc later, because short-lived threads are gone by the time user space
 * would look. start_ns = end_ns = the time the name was seen. */
struct xt_thread_name {
	struct xt_record_header hdr;
	char comm[XT_COMM_LEN];
	char process_comm[XT_COMM_LEN]; /* the thread group leader's */
};

/* Counters kept by BPF in a per-CPU array, indexed by this enum. */
enum xt_counter {
	XT_CNT_DROPPED = 0,      /* bpf_ringbuf_output failed: the ring was full */
	XT_CNT_INFLIGHT_FULL = 1, /* entry could not be remembered: the pairing map was full */
	XT_CNT_ORPHAN_RETURN = 2, /* return seen without its entry (probe attached mid-call) */
	XT_CNT_MAX = 8,
};

#endif /* XTRACE_RECORDS_H */

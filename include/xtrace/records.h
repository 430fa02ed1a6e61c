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
	/* ITT: 64-79 */
	XT_REC_ITT_NAME = 64,     /* an ITT handle's text, the first time a process uses the handle */
	XT_REC_ITT_EVENT = 65,    /* one ITT call or PyTorch range push/pop/mark */
	XT_REC_ITT_STATE = 66,    /* __itt_pause/__itt_resume/__itt_detach changed collection */
	/* DRM: 80-95 */
	XT_REC_DRM_IOCTL = 80,    /* ioctl(2) with a DRM command, entry + exit (drm_records.h) */
	XT_REC_DRM_FENCE = 81,    /* a fence made by a traced DRM ioctl signaled (drm_records.h) */
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
	XT_CNT_PAUSED = 5,        /* a probe fired in a process whose collection was paused */
	XT_CNT_DRM_UNPAIRED_EXIT = 6, /* a DRM ioctl returned that began before capture (or whose
				       * entry was evicted): not recorded */
	XT_CNT_DRM_FENCE_UNWATCHED = 7, /* a fence from a traced DRM ioctl could not be remembered */
	XT_CNT_MAX = 8,
};

/* ---- ITT (VTune-style labels) ------------------------------------------------------------
 * libxtrace_itt.so, the ITT collector a process loads through INTEL_LIBITTNOTIFY64, reports
 * every supported ITT call by calling one probe site, XT_ITT_PROBE_SYMBOL, as
 *     xtrace_itt_probe(op, domain, name, id_d1, id_d2, extra)
 * (System V argument registers rdi, rsi, rdx, rcx, r8, r9). The BPF program on that site
 * turns each call into records. */
#define XT_ITT_PROBE_SYMBOL "xtrace_itt_probe"

/* Where the BPF program finds a handle's text: __itt_domain.nameA, __itt_string_handle.strA
 * (x86-64; checked against the collector's view in userspace/itt/itt_abi.h). */
#define XT_ITT_DOMAIN_NAME_OFFSET 8
#define XT_ITT_STRING_TEXT_OFFSET 0

/* Longest ITT name copied (domains, string handles, thread names, PyTorch ranges); longer
 * ones are cut and flagged XT_FLAG_TRUNCATED. Operator names are far shorter. */
#define XT_MAX_ITT_NAME 512

enum xt_itt_op {
	XT_ITT_TASK_BEGIN = 1,            /* domain, name handle, id */
	XT_ITT_TASK_BEGIN_FN = 2,         /* domain, extra = function address (no name handle) */
	XT_ITT_TASK_END = 3,              /* domain */
	XT_ITT_TASK_BEGIN_OVERLAPPED = 4, /* domain, name handle, id */
	XT_ITT_TASK_END_OVERLAPPED = 5,   /* domain, id */
	XT_ITT_REGION_BEGIN = 6,          /* domain, name handle, id */
	XT_ITT_REGION_END = 7,            /* domain, id */
	XT_ITT_FRAME_BEGIN = 8,           /* domain, id (0 when the caller passed none) */
	XT_ITT_FRAME_END = 9,             /* domain, id */
	XT_ITT_MARKER = 10,               /* domain, name handle, id, extra = __itt_scope */
	XT_ITT_THREAD_NAME = 11,          /* name = const char* (not a handle) */
	XT_ITT_PAUSE = 12,
	XT_ITT_RESUME = 13,
	XT_ITT_DETACH = 14,
};

/* Where an ITT event came from. */
enum xt_itt_origin {
	XT_ITT_FROM_COLLECTOR = 0, /* libxtrace_itt.so: domain and name are handles */
	XT_ITT_FROM_PYTORCH = 1,   /* torch::profiler::itt_range_push/pop/itt_mark: inline name */
};

enum xt_itt_name_kind {
	XT_ITT_NAME_DOMAIN = 1, /* __itt_domain*: nameA */
	XT_ITT_NAME_STRING = 2, /* __itt_string_handle*: strA */
	XT_ITT_NAME_THREAD = 3, /* __itt_thread_set_name: the calling thread's name (handle 0) */
};

/* Per-process collection state, kept by BPF and checked by every probe. */
enum xt_collection_state {
	XT_COLLECT_ON = 0,       /* recording (also what an absent entry means) */
	XT_COLLECT_PAUSED = 1,   /* --start-paused or __itt_pause: nothing recorded until resume */
	XT_COLLECT_DETACHED = 2, /* __itt_detach: nothing recorded for this process again */
};

/* A handle's text, sent once per (process, handle): events then carry only the handle.
 * Followed by name_len bytes (no NUL). */
struct xt_itt_name {
	struct xt_record_header hdr;
	__u64 handle;
	__u32 kind;     /* enum xt_itt_name_kind */
	__u32 name_len;
	/* char name[name_len]; */
};

/* One ITT call at start_ns (= end_ns). PyTorch ranges carry their name inline instead of a
 * handle: name_len bytes follow the fixed part. */
struct xt_itt_event {
	struct xt_record_header hdr;
	__u64 domain;   /* __itt_domain* in the target; 0 for PyTorch */
	__u64 name;     /* __itt_string_handle* (0: none or inline) */
	__u64 id[2];    /* __itt_id d1, d2 */
	__u64 extra;    /* op-specific, see enum xt_itt_op */
	__u16 op;       /* enum xt_itt_op */
	__u16 origin;   /* enum xt_itt_origin */
	__u32 name_len;
	/* char name[name_len]; */
};

/* A process's collection state changed (at start_ns = end_ns, on the calling thread). */
struct xt_itt_state {
	struct xt_record_header hdr;
	__u32 state;    /* enum xt_collection_state, now */
	__u32 previous; /* and before */
};

#endif /* XTRACE_RECORDS_H */

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

#include "xtrace/layout_check.h"

/* Longest kernel name copied from the target. Templated SYCL kernel names run to well over
 * a thousand characters; longer names are cut and flagged XT_FLAG_TRUNCATED. */
#define XT_MAX_NAME 4096

/* Largest single record (header + fixed part + tail). */
#define XT_MAX_RECORD (XT_MAX_NAME + 128)

/* Length of a task's comm, NUL included (TASK_COMM_LEN). */
#define XT_COMM_LEN 16

/* Processes traced at once (BPF-side pid filter). */
#define XT_MAX_TRACED_PROCS 4096

/* Processes whose dropped records are counted one by one (for the per-process summary). */
#define XT_MAX_DROP_PROCS 4096

enum xt_record_type {
	XT_REC_KERNEL_CREATE = 1, /* zeKernelCreate, entry + return */
	XT_REC_LAUNCH_KERNEL = 2, /* zeCommandListAppendLaunchKernel, entry + return */
	XT_REC_THREAD_NAME = 3,   /* before a thread's first record, and after it renames itself */
	/* Level Zero (16-63) */
	XT_REC_ZE_CALL = 16,      /* any other probed Level Zero call: struct xt_ze_call */
	XT_REC_ZE_EXECUTE = 17,   /* zeCommandQueueExecuteCommandLists: struct xt_ze_execute */
	XT_REC_CALL_UNFINISHED = 18, /* a thread exited inside a recorded call: xt_call_unfinished */
	XT_REC_ZE_QUERY_HOLD = 19, /* a thread is held to be asked about objects made before the
				    * attach (hold.h): struct xt_ze_query_hold */
	/* ITT: 64-79 */
	XT_REC_ITT_NAME = 64,     /* an ITT handle's text, the first time a process uses the handle */
	XT_REC_ITT_EVENT = 65,    /* one ITT call or PyTorch range push/pop/mark */
	XT_REC_ITT_STATE = 66,    /* __itt_pause/__itt_resume/__itt_detach changed collection */
	/* DRM: 80-95 */
	XT_REC_DRM_IOCTL = 80,    /* ioctl(2) with a DRM command, entry + exit (drm_records.h) */
	XT_REC_DRM_FENCE = 81,    /* a fence made by a traced DRM ioctl signaled (drm_records.h) */
	/* Process lifecycle (96-111): how a capture learns of processes and library loads. */
	XT_REC_PROCESS_EXEC = 96, /* a process in scope exec'd: struct xt_process_event + argv tail */
	XT_REC_PROCESS_FORK = 97, /* a process in scope was created: struct xt_process_event */
	XT_REC_PROCESS_EXIT = 98, /* the last thread of a process in scope exited: xt_process_exit */
	XT_REC_PROCESS_MAPS = 99, /* the dynamic linker changed a process's libraries: header only */
	/* Python (112-127) */
	XT_REC_PY_STACK = 112,    /* Python frames of a traced call's thread: xtrace/python.h */
};

enum xt_record_flags {
	XT_FLAG_TRUNCATED = 1u << 0,   /* the string tail was cut at XT_MAX_NAME */
	XT_FLAG_ARG_UNREADABLE = 1u << 1, /* an argument pointer could not be read */
	XT_FLAG_HELD = 1u << 2,        /* exec and maps records: the process is held (hold.h) until
					* the capture continues it */
	XT_FLAG_PAUSED = 1u << 3,      /* made while the process's collection was paused: kept
					* for what it names (a kernel), not shown */
	XT_FLAG_LEFT_SCOPE = 1u << 4,  /* exec record: a followed process exec'd a program that
					* made it another user's (XT_SCOPE_OWNER) and left the
					* capture; neither its arguments nor its new name are in it */
	XT_FLAG_TABLE_GETTER = 1u << 5, /* maps record, held: the process took a Level Zero function
					 * table itself (zeGet*ProcAddrTable), not a library load */
	XT_FLAG_ZE_INIT = 1u << 6,     /* maps record, held: its zeInit filled the loader's dispatch */
};

/* Process and thread ids, in every record (the header's and any other field naming a process)
 * and in the BPF maps keyed by process: as the collector's pid namespace numbers them. That is
 * the kernel's own ids when xtrace runs in the initial namespace, and its namespace's when it
 * runs in one of its own (a container, a pod sidecar); a process outside that namespace is
 * not recorded, and a parent outside it is 0. */
struct xt_record_header {
	__u16 type;    /* enum xt_record_type */
	__u16 size;    /* bytes of the whole record, header included */
	__u32 flags;   /* enum xt_record_flags */
	__u32 pid;     /* the process (tgid) */
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

/* Which append produced an xt_launch_kernel: plain, cooperative and indirect share their first
 * six parameters; the two 1.14 launches place theirs as said. */
enum xt_launch_kind {
	XT_LAUNCH_PLAIN = 0,       /* zeCommandListAppendLaunchKernel */
	XT_LAUNCH_COOPERATIVE = 1, /* zeCommandListAppendLaunchCooperativeKernel */
	XT_LAUNCH_INDIRECT = 2,    /* zeCommandListAppendLaunchKernelIndirect: the group counts live
				    * in device memory and are read by the GPU, so none are copied */
	XT_LAUNCH_WITH_ARGUMENTS = 3, /* zeCommandListAppendLaunchKernelWithArguments (1.14): group
				       * counts and sizes by value (SysV: counts in rdx and rcx,
				       * sizes in r8 and r9), signal event and wait count on the
				       * stack */
	XT_LAUNCH_WITH_PARAMETERS = 4, /* zeCommandListAppendLaunchKernelWithParameters (1.14):
					* group counts by pointer as a plain launch, then pNext, so
					* the signal event and wait count are in r8 and r9 */
};

/* zeCommandListAppendLaunchKernel(hCommandList, hKernel, pLaunchFuncArgs, hSignalEvent,
 *                                 numWaitEvents, phWaitEvents), and its cooperative and
 * indirect variants (kind). */
struct xt_launch_kernel {
	struct xt_record_header hdr;
	__u64 command_list;
	__u64 kernel;
	__u64 signal_event;
	__u32 group_count[3];
	__u32 num_wait_events;
	__s32 result;
	__u32 kind; /* enum xt_launch_kind */
};

/* Level Zero calls recorded as struct xt_ze_call. The numbers are stored in the event log:
 * append only, never renumber (userspace/model/ze_api.cc describes each). */
enum xt_ze_fn {
	XT_ZE_INIT = 1,
	XT_ZE_DRIVER_GET = 2,
	XT_ZE_DEVICE_GET = 3,
	XT_ZE_DEVICE_GET_GLOBAL_TIMESTAMPS = 4,
	XT_ZE_CONTEXT_CREATE = 5,
	XT_ZE_CONTEXT_DESTROY = 6,
	XT_ZE_MEM_ALLOC_DEVICE = 7,
	XT_ZE_MEM_ALLOC_HOST = 8,
	XT_ZE_MEM_ALLOC_SHARED = 9,
	XT_ZE_MEM_FREE = 10,
	XT_ZE_MODULE_CREATE = 11,
	XT_ZE_MODULE_DESTROY = 12,
	XT_ZE_KERNEL_DESTROY = 13,
	XT_ZE_COMMAND_QUEUE_CREATE = 14,
	XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS = 15, /* as struct xt_ze_execute */
	XT_ZE_COMMAND_QUEUE_SYNCHRONIZE = 16,
	XT_ZE_COMMAND_QUEUE_DESTROY = 17,
	XT_ZE_COMMAND_LIST_CREATE = 18,
	XT_ZE_COMMAND_LIST_CREATE_IMMEDIATE = 19,
	XT_ZE_COMMAND_LIST_CLOSE = 20,
	XT_ZE_COMMAND_LIST_RESET = 21,
	XT_ZE_COMMAND_LIST_DESTROY = 22,
	XT_ZE_APPEND_MEMORY_COPY = 23, /* the appends run from here to ..._QUERY_KERNEL_TIMESTAMPS */
	XT_ZE_APPEND_MEMORY_COPY_REGION = 24,
	XT_ZE_APPEND_MEMORY_FILL = 25,
	XT_ZE_APPEND_MEMORY_PREFETCH = 26,
	XT_ZE_APPEND_BARRIER = 27,
	XT_ZE_APPEND_MEMORY_RANGES_BARRIER = 28,
	XT_ZE_APPEND_SIGNAL_EVENT = 29,
	XT_ZE_APPEND_WAIT_ON_EVENTS = 30,
	XT_ZE_APPEND_EVENT_RESET = 31,
	XT_ZE_APPEND_WRITE_GLOBAL_TIMESTAMP = 32,
	XT_ZE_APPEND_QUERY_KERNEL_TIMESTAMPS = 33,
	XT_ZE_EVENT_POOL_CREATE = 34,
	XT_ZE_EVENT_POOL_DESTROY = 35,
	XT_ZE_EVENT_CREATE = 36,
	XT_ZE_EVENT_DESTROY = 37,
	XT_ZE_EVENT_HOST_SIGNAL = 38,
	XT_ZE_EVENT_HOST_SYNCHRONIZE = 39,
	XT_ZE_EVENT_QUERY_STATUS = 40,
	XT_ZE_EVENT_HOST_RESET = 41,
	XT_ZE_EVENT_QUERY_KERNEL_TIMESTAMP = 42,
	XT_ZE_EVENT_QUERY_TIMESTAMPS_EXP = 43,
	XT_ZE_FENCE_CREATE = 44,
	XT_ZE_FENCE_DESTROY = 45,
	XT_ZE_FENCE_HOST_SYNCHRONIZE = 46,
	XT_ZE_FENCE_QUERY_STATUS = 47,
	XT_ZE_FENCE_RESET = 48,
	XT_ZE_DEVICE_GET_PROPERTIES = 49, /* for the device's UUID */
	/* Entry points of Level Zero 1.6 and later: probed where the process's loader exports
	 * them, or (driver pointers) in the driver file. */
	XT_ZE_COMMAND_LIST_HOST_SYNCHRONIZE = 50,
	XT_ZE_INIT_DRIVERS = 51,
	XT_ZE_COMMAND_LIST_IMMEDIATE_APPEND_COMMAND_LISTS_EXP = 52, /* as struct xt_ze_execute */
	XT_ZE_EVENT_COUNTER_BASED_CREATE = 53,
	XT_ZE_EX_COUNTER_BASED_EVENT_CREATE2 = 54, /* Intel's, handed out by the driver */
	XT_ZE_APPEND_LAUNCH_MULTIPLE_KERNELS_INDIRECT = 55,
	/* Intel's record-and-replay graphs (ZE_experimental_record_replay_graph), handed out by
	 * the driver: no loader exports them. */
	XT_ZE_GRAPH_CREATE_EXP = 56,
	XT_ZE_COMMAND_LIST_BEGIN_GRAPH_CAPTURE_EXP = 57,
	XT_ZE_COMMAND_LIST_BEGIN_CAPTURE_INTO_GRAPH_EXP = 58,
	XT_ZE_COMMAND_LIST_END_GRAPH_CAPTURE_EXP = 59,
	XT_ZE_COMMAND_LIST_INSTANTIATE_GRAPH_EXP = 60,
	XT_ZE_COMMAND_LIST_APPEND_GRAPH_EXP = 61,
	XT_ZE_GRAPH_DESTROY_EXP = 62,
	XT_ZE_EXECUTABLE_GRAPH_DESTROY_EXP = 63,
	XT_ZE_APPEND_HOST_FUNCTION = 64, /* a driver pointer too */
	XT_ZE_EX_APPEND_HOST_FUNCTION = 65, /* Intel's older name of the same, a driver pointer */
	XT_ZE_FN_COUNT = 66, /* one past the last; the cookie's fn field holds up to 255 */
};

/* What a generic probe copies is described by its uprobe's BPF cookie, so one entry and one
 * return program serve every xt_ze_call function:
 *   bits  0-7   fn (enum xt_ze_fn)
 *   bits  8-11  first stack argument to copy, minus 6 (x86-64 passes six in registers)
 *   bits 12-13  stack arguments to copy (0-2), into arg[6..7]
 *   bits 16-31  read 0, bits 32-47 read 1: at return, copy `size` bytes from arg[arg] + offset
 *               into data (read 0 into bytes 0-31, read 1 into bytes 32-63):
 *                 bits 0-2 arg index, bits 3-6 size / 4 (0: no read, at most 8),
 *                 bits 7-14 offset, bit 15 output (read only if the call succeeded)
 *   bits 48-50  argument index + 1 to take from r10 instead of its own register (0: none):
 *               the probe sits past a stub instruction that saved it there and then
 *               overwrote its register (capture/sources/probe_site.h)
 */
#define XT_ZE_CALL_ARGS 8
#define XT_ZE_CALL_DATA_WORDS 8
#define XT_ZE_READ_MAX 32
#define XT_ZE_COOKIE_FN(c) ((__u32)((c) & 0xff))
#define XT_ZE_COOKIE_STACK_FIRST(c) ((__u32)(((c) >> 8) & 0xf) + 6)
#define XT_ZE_COOKIE_STACK_COUNT(c) ((__u32)(((c) >> 12) & 0x3))
#define XT_ZE_COOKIE_READ(c, i) ((__u32)(((c) >> (16 + 16 * (i))) & 0xffff))
#define XT_ZE_COOKIE_R10_ARG(c) ((__u32)(((c) >> 48) & 0x7))
#define XT_ZE_COOKIE_WITH_R10_ARG(arg) ((__u64)((arg) + 1) << 48)
#define XT_ZE_READ_ARG(r) ((r) & 0x7)
#define XT_ZE_READ_SIZE(r) ((((r) >> 3) & 0xf) * 4)
#define XT_ZE_READ_OFFSET(r) (((r) >> 7) & 0xff)
#define XT_ZE_READ_OUTPUT(r) (((r) >> 15) & 0x1)

/* One Level Zero call: its raw integer/pointer arguments and what the cookie's reads copied
 * (descriptor fields at return, output handles and values when it succeeded). User space
 * gives the words their meaning per fn. */
struct xt_ze_call {
	struct xt_record_header hdr;
	__u32 fn;      /* enum xt_ze_fn */
	__s32 result;  /* ze_result_t */
	__u64 arg[XT_ZE_CALL_ARGS];
	__u64 data[XT_ZE_CALL_DATA_WORDS];
};

/* Which call a thread's pending slot holds (struct xt_call_slot.fn): an enum xt_ze_fn for the
 * generic calls, or one of these for the calls with programs (and records) of their own. */
enum xt_ze_pairing_fn {
	XT_ZE_PAIR_KERNEL_CREATE = 256,
	XT_ZE_PAIR_APPEND_LAUNCH_KERNEL = 257, /* and its cooperative and indirect variants */
};

/* A thread exited while inside a recorded call, which therefore never returned: pthread_exit
 * or a raw exit from a handler, the process killed by a signal, or exit from another thread.
 * hdr.start_ns is the call's entry, hdr.end_ns the thread's exit. Emitted by the exit
 * tracepoint from the thread's pending call slot. */
struct xt_call_unfinished {
	struct xt_record_header hdr;
	__u32 fn;        /* enum xt_ze_fn or enum xt_ze_pairing_fn */
	__s32 exit_code; /* the thread's, as wait(2) reports it: the signal in bits 0-6 if killed */
};

/* A thread of a process attached mid-run stopped at the entry of a Level Zero call that uses
 * objects made before the attach (hold.h, XT_HOLD_QUERY); flagged XT_FLAG_HELD. hdr.start_ns
 * is when it was stopped; the handles to ask about are in `asked_handles`. */
struct xt_ze_query_hold {
	struct xt_record_header hdr;
	__u64 ip; /* the probed instruction it stopped at (it is there or just past it) */
};

/* Command lists copied per zeCommandQueueExecuteCommandLists; more are counted, not copied
 * (XT_FLAG_TRUNCATED). */
#define XT_MAX_EXEC_LISTS 64

/* zeCommandQueueExecuteCommandLists(hCommandQueue, numCommandLists, phCommandLists, hFence).
 * Followed by min(num_lists, XT_MAX_EXEC_LISTS) command list handles (__u64). */
struct xt_ze_execute {
	struct xt_record_header hdr;
	__u64 queue;      /* or the immediate list (zeCommandListImmediateAppendCommandListsExp) */
	__u64 fence;      /* or its signal event */
	__u32 num_lists;
	__s32 result;
	__u32 fn;         /* enum xt_ze_fn: which of the two */
	__u32 num_wait_events; /* zeCommandListImmediateAppendCommandListsExp's */
	/* __u64 lists[]; */
};

/* A thread's name as the kernel has it when the thread makes a traced call. Emitted by BPF,
 * not read from /proc later, because short-lived threads are gone by the time user space
 * would look. start_ns = end_ns = the time the name was seen. */
struct xt_thread_name {
	struct xt_record_header hdr;
	char comm[XT_COMM_LEN];
	char process_comm[XT_COMM_LEN]; /* the thread group leader's */
};

/* Longest command line an exec record carries (arguments separated by NUL bytes). */
#define XT_MAX_ARGS 1024

/* A process appeared: hdr.pid is the process (tgid), hdr.tid the thread that exec'd or was
 * created; start_ns = end_ns = when. An exec record is followed by args_len bytes of its
 * command line. */
struct xt_process_event {
	struct xt_record_header hdr;
	__u32 parent_pid;  /* 0 when the parent lies outside the collector's pid namespace */
	__u32 ns_pid;      /* the process's pid in its own (innermost) pid namespace */
	__u64 cgroup_id;   /* its cgroup v2 id (the directory's inode number) */
	char comm[XT_COMM_LEN];
	__u32 args_len;
	__u32 reserved;
	/* char args[args_len]; exec only: argv joined by NUL bytes, cut at XT_MAX_ARGS */
};

struct xt_process_exit {
	struct xt_record_header hdr;
	__s32 exit_code; /* as wait(2) reports it */
	__u32 reserved;
};

/* Counters kept by BPF in a per-CPU array, indexed by this enum. */
enum xt_counter {
	XT_CNT_DROPPED = 0,      /* bpf_ringbuf_output failed: the ring was full */
	XT_CNT_INFLIGHT_FULL = 1, /* entry could not be remembered: no per-thread storage */
	XT_CNT_ORPHAN_RETURN = 2, /* return seen without its entry (probe attached mid-call) */
	XT_CNT_PAUSED = 5,        /* a probe fired in a process whose collection was paused */
	XT_CNT_DRM_UNPAIRED_EXIT = 6, /* a DRM ioctl returned that began before capture (or whose
				       * entry was evicted): not recorded */
	XT_CNT_DRM_FENCE_UNWATCHED = 7, /* a fence from a traced DRM ioctl could not be remembered */
	XT_CNT_TRACED_FULL = 8,   /* a new process could not join traced_pids: the map was full */
	XT_CNT_HOLD_MISSED = 9,   /* a process that should have been held was not: `held` was
				   * full, or the stop could not be sent */
	/* XT_CNT_DROPPED by the source of the lost record (its type's range above) */
	XT_CNT_DROPPED_ZE = 10,   /* Level Zero (and kernel create/launch) records */
	XT_CNT_DROPPED_ITT = 11,  /* ITT records of calls (not handle texts: "other") */
	XT_CNT_DROPPED_DRM = 12,  /* DRM ioctl and fence records */
	XT_CNT_DROPPED_OTHER = 13, /* thread names, process lifecycle, ITT handle texts */
	XT_CNT_PARENT_CONTINUED = 14, /* a parent that stopped itself only because its child was
				       * held (nsenter, sudo) was continued with it */
	XT_CNT_QUERY_MISSED = 15, /* a handle made before the attach could not be asked about: a
				   * query map was full, or the stop could not be sent */
	/* Of XT_CNT_DROPPED_ITT, counted by xtrace only: calls the ITT fast path lost in the
	 * program's own rings (full, or still holding records at its end), which --buffer-size
	 * does not size */
	XT_CNT_DROPPED_ITT_RINGS = 16,
	XT_CNT_HOLD_TERMINAL_JOB = 17, /* a hold not taken: the process runs as a job of a
					* terminal's shell (hold.bpf.h, xt_terminal_job) */
	XT_CNT_MAX = 18,
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

/* Layouts the decoder reads as BPF writes them (layout_check.h). */
XT_LAYOUT(XT_SIZE(xt_record_header) == 32);
XT_LAYOUT(XT_OFFSET(xt_record_header, flags) == 4);
XT_LAYOUT(XT_OFFSET(xt_record_header, pid) == 8);
XT_LAYOUT(XT_OFFSET(xt_record_header, start_ns) == 16);
XT_LAYOUT(XT_OFFSET(xt_record_header, end_ns) == 24);
XT_LAYOUT(XT_SIZE(xt_kernel_create) == 56);
XT_LAYOUT(XT_OFFSET(xt_kernel_create, result) == 48);
XT_LAYOUT(XT_OFFSET(xt_kernel_create, name_len) == 52);
XT_LAYOUT(XT_SIZE(xt_launch_kernel) == 80);
XT_LAYOUT(XT_OFFSET(xt_launch_kernel, group_count) == 56);
XT_LAYOUT(XT_OFFSET(xt_launch_kernel, num_wait_events) == 68);
XT_LAYOUT(XT_OFFSET(xt_launch_kernel, kind) == 76);
XT_LAYOUT(XT_SIZE(xt_ze_call) == 168);
XT_LAYOUT(XT_OFFSET(xt_ze_call, arg) == 40);
XT_LAYOUT(XT_OFFSET(xt_ze_call, data) == 104);
XT_LAYOUT(XT_SIZE(xt_call_unfinished) == 40);
XT_LAYOUT(XT_OFFSET(xt_call_unfinished, exit_code) == 36);
XT_LAYOUT(XT_SIZE(xt_ze_query_hold) == 40);
XT_LAYOUT(XT_SIZE(xt_ze_execute) == 64);
XT_LAYOUT(XT_OFFSET(xt_ze_execute, num_lists) == 48);
XT_LAYOUT(XT_OFFSET(xt_ze_execute, num_wait_events) == 60);
XT_LAYOUT(XT_SIZE(xt_thread_name) == 64);
XT_LAYOUT(XT_OFFSET(xt_thread_name, process_comm) == 48);
XT_LAYOUT(XT_SIZE(xt_process_event) == 72);
XT_LAYOUT(XT_OFFSET(xt_process_event, cgroup_id) == 40);
XT_LAYOUT(XT_OFFSET(xt_process_event, comm) == 48);
XT_LAYOUT(XT_OFFSET(xt_process_event, args_len) == 64);
XT_LAYOUT(XT_SIZE(xt_process_exit) == 40);
XT_LAYOUT(XT_SIZE(xt_itt_name) == 48);
XT_LAYOUT(XT_OFFSET(xt_itt_name, name_len) == 44);
XT_LAYOUT(XT_SIZE(xt_itt_event) == 80);
XT_LAYOUT(XT_OFFSET(xt_itt_event, id) == 48);
XT_LAYOUT(XT_OFFSET(xt_itt_event, op) == 72);
XT_LAYOUT(XT_OFFSET(xt_itt_event, name_len) == 76);
XT_LAYOUT(XT_SIZE(xt_itt_state) == 40);

#endif /* XTRACE_RECORDS_H */

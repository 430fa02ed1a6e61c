/* The maps every xtrace BPF object shares, and the layouts of their values. maps.bpf.c owns
 * them; every probe object declares the same maps and user space hands it ours by fd
 * (CaptureMaps::Share), so all sources write one ordered stream and follow one filter.
 * Processes are keyed by their id in the collector's pid namespace (records.h). BPF-only. */
#ifndef XTRACE_MAPS_BPF_H
#define XTRACE_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "xtrace/capture_config.h"
#include "xtrace/hold.h"
#include "xtrace/itt_ring.h"
#include "xtrace/python.h"
#include "xtrace/records.h"
#include "xtrace/thread_state.h"

/* Records to user space. Its size is set by user space (--buffer-size) between open and load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/* enum xt_counter; per-CPU so counting needs no atomics on the hot path. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XT_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Records lost in the ring per process, for the per-process summary. Written only when a
 * record is dropped. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_DROP_PROCS);
	__type(key, __u32);
	__type(value, __u64);
} drops_by_pid SEC(".maps");

/* Processes to record when filter_by_pid is set: uprobes attached to one library inode fire
 * in every process that maps it, so system-wide or multi-target captures filter here. A
 * uprobe attached for one pid needs no filter: the kernel installs it only there. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_TRACED_PROCS);
	__type(key, __u32);
	__type(value, __u8);
} traced_pids SEC(".maps");

/* Collection state per process (enum xt_collection_state): paused by --start-paused or
 * __itt_pause, resumed by __itt_resume, ended for good by __itt_detach. Absent means
 * collecting. Checked by every program through xt_traced, so pause applies to every source. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_TRACED_PROCS);
	__type(key, __u32);
	__type(value, __u32);
} collection_state SEC(".maps");

/* Which processes the capture records (one struct xt_capture_config, see capture_config.h).
 * A map, not rodata, so every probe object follows it without setting anything itself, and
 * user space can set it once for all of them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xt_capture_config);
} capture_config SEC(".maps");

/* XT_SCOPE_CGROUP: the cgroup (v2) at index 0, set from a directory fd by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} scope_cgroup SEC(".maps");

/* Changes to traced_pids, collection_state and capture_config, counted, so a thread may keep
 * its last xt_traced answer until something changes (xt_traced_by_thread): [0] is bumped by
 * user space (CaptureMaps, its only writer), [1] by BPF programs (xt_filter_changed,
 * atomically). Whoever changes one of those maps must bump one of these after the change. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} filter_epoch SEC(".maps");

/* Processes held until the capture has probed their new files (hold.h): added by the
 * lifecycle programs as they stop a process, deleted by whoever continues it (the capture, or
 * its guardian) and when the process exits. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_HELD);
	__type(key, __u32);
	__type(value, struct xt_hold);
} held SEC(".maps");

/* Parents that mirror their child's stops. Some programs stop themselves when their child
 * stops and continue the child when they are continued: nsenter and unshare waiting for the
 * child they forked into a namespace, sudo, su. A hold is a stop like any other to them: the
 * parent stops itself, and the capture's SIGCONT to the child continues the child only, so
 * the parent would stay stopped, its child unreaped. Each hold notes the holder's parent
 * here (kernel pids: the parent may lie outside the collector's pid namespace, where the
 * capture cannot even name it), and xt_signal_generate continues a parent whose stop only
 * mirrored a hold, whichever comes first: the parent's stop or the child's release. */
/* The entries' layout, struct xt_hold_parent, is in xtrace/hold.h: the capture reads them
 * too, to let a parent's echo land before it lets a held thread go. */

/* How long after a hold a parent's stop can still be the echo of it: a parent in waitpid()
 * stops itself within microseconds of being woken; a loaded machine can delay that. */
#define XT_PARENT_ECHO_NS 2000000000ull

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XT_MAX_HELD);
	__type(key, __u32);
	__type(value, struct xt_hold_parent);
} hold_parents SEC(".maps");

/* Processes on the ITT fast path (itt_ring.h): added by user space as a process's fast path
 * attaches, their rings' counters added up by the lifecycle programs at each thread's exit
 * and at exec, deleted by user space once the process's end is accounted for. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_TRACED_PROCS);
	__type(key, __u32);
	__type(value, struct xt_itt_rings_seen);
} itt_rings SEC(".maps");

/* Objects made before the attach (hold.h): the processes attached mid-run whose unknown
 * handles are asked about, the handles known in them, and those waiting to be asked. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_TRACED_PROCS);
	__type(key, __u32);
	__type(value, __u32);
} query_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_QUERY_HANDLES);
	__type(key, struct xt_query_key);
	__type(value, __u8);
} known_handles SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_QUERY_ASKED);
	__type(key, struct xt_query_key);
	__type(value, __u8);
} asked_handles SEC(".maps");

/* CPython interpreters whose frames the probes read (python.h), per process: set by user
 * space once it has checked the interpreter, deleted when the process goes or execs. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XT_MAX_TRACED_PROCS);
	__type(key, __u32);
	__type(value, struct xt_py_layout);
} python_procs SEC(".maps");

/* What a thread remembers between its traced calls (python_frames.bpf.h): its search for its
 * Python thread state, and the frames of the last stack it wrote to the ring, so that the
 * next writes only the inner frames that differ (xt_py_stack.shared). Shared by every
 * object, as the ring is: a thread's stacks from all sources form one chain, in ring order. */
struct xt_py_thread {
	__u64 tstate;     /* 0: none found */
	__u64 fsbase;     /* the thread's fs base when it was searched */
	__u64 checked_ns; /* when it was searched */
	__u32 generation; /* xt_py_layout.generation it was searched with */
	__u32 sent;       /* frames of the last stack written; 0 after a lost one */
	struct xt_py_frame last[XT_PY_MAX_FRAMES]; /* its frames, outermost first */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct xt_py_thread);
} py_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct xt_thread_state);
} thread_state SEC(".maps");

/* Scratch space for records with a string tail: too large for the 512-byte BPF stack. Not
 * shared by CaptureMaps: each object has its own. */
struct xt_scratch {
	__u8 data[XT_MAX_RECORD];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xt_scratch);
} scratch SEC(".maps");

#endif /* XTRACE_MAPS_BPF_H */

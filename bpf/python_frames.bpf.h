/* Python frames of the calling thread, read the way eBPF profilers read a running CPython:
 * the thread's PyThreadState (found in the main interpreter's thread list by its thread id,
 * which is the thread's fs base, then cached per thread), its current frame, and the chain of
 * frames through `previous`, one probe read per frame that yields the code object, the
 * last instruction and the frame's owner (the interpreter's own entry frames are blanked). Names and lines are resolved in user space (userspace/python/), which
 * also checked the layout against the interpreter before setting it (python.h). A call hook
 * in a probe program: xt_py_stack, just before the call's own record. BPF-only. */
#ifndef XTRACE_PYTHON_FRAMES_BPF_H
#define XTRACE_PYTHON_FRAMES_BPF_H

#include "output.bpf.h"

/* How long a thread found without a Python thread state is believed to have none before the
 * thread list is searched again: a C thread (an OpenMP worker) makes many calls and never
 * gets one, but a thread may enter Python later (PyGILState_Ensure). */
#define XT_PY_NONE_RECHECK_NS 100000000ull

/* What a thread remembers of its search (task-local, so it goes with the thread). */
struct xt_py_thread {
	__u64 tstate;     /* 0: none found */
	__u64 fsbase;     /* the thread's fs base when it was searched */
	__u64 checked_ns; /* when it was searched */
	__u32 generation; /* xt_py_layout.generation it was searched with */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct xt_py_thread);
} py_threads SEC(".maps");

/* The record as it is built, and the bytes of the frame being read (too large for the stack;
 * in a map value a field at a variable offset is a bounded access). */
struct xt_py_scratch {
	struct xt_py_stack rec;
	/* Twice the frames ever written, so that a size masked for the verifier stays inside. */
	struct xt_py_frame frame[2 * XT_PY_MAX_FRAMES];
	/* XT_PY_FRAME_READ bytes are read; the rest is room for a byte field at an offset masked
	 * with 127 for the verifier. */
	__u8 raw[128];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xt_py_scratch);
} py_scratch SEC(".maps");

static __always_inline __u64 xt_py_read_ptr(__u64 addr)
{
	__u64 value = 0;

	if (bpf_probe_read_user(&value, sizeof(value), (const void *)addr))
		return 0;
	return value;
}

/* The pointer at `offset` (< XT_PY_FRAME_READ - 8, masked so the verifier sees it) in the
 * frame bytes just read. */
static __always_inline __u64 xt_py_field(const struct xt_py_scratch *buf, __u32 offset)
{
	__u64 value;

	__builtin_memcpy(&value, buf->raw + (offset & 63), sizeof(value));
	return value;
}

/* The thread state of the thread whose fs base is `fsbase`, or 0. */
static __always_inline __u64 xt_py_find_tstate(const struct xt_py_layout *l, __u64 fsbase)
{
	__u64 interp = xt_py_read_ptr(l->interp_ptr), t;
	int i;

	if (!interp)
		return 0;
	t = xt_py_read_ptr(interp + l->tstate_head);
	for (i = 0; i < XT_PY_MAX_THREADS && t; i++) {
		if (xt_py_read_ptr(t + l->tstate_thread_id) == fsbase)
			return t;
		t = xt_py_read_ptr(t + l->tstate_next);
	}
	return 0;
}

/* The calling thread's state: the cached one if it still names this thread, else searched
 * (at most every XT_PY_NONE_RECHECK_NS for a thread that had none). */
static __always_inline __u64 xt_py_thread_state(const struct xt_py_layout *l, __u64 now)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 fsbase = task->thread.fsbase;
	struct xt_py_thread *pt;

	pt = bpf_task_storage_get(&py_threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!pt)
		return 0;
	if (pt->generation == l->generation && pt->fsbase == fsbase && pt->checked_ns) {
		/* A freed thread state may be reused for another thread: check it names us. */
		if (pt->tstate && xt_py_read_ptr(pt->tstate + l->tstate_thread_id) == fsbase)
			return pt->tstate;
		if (!pt->tstate && now - pt->checked_ns < XT_PY_NONE_RECHECK_NS)
			return 0;
	}
	pt->tstate = xt_py_find_tstate(l, fsbase);
	pt->fsbase = fsbase;
	pt->generation = l->generation;
	pt->checked_ns = now;
	return pt->tstate;
}

/* Writes the Python frames of the calling thread of process `tgid` (as the collector numbers
 * it) as an xt_py_stack record stamped [start_ns, end_ns], if the process is a checked
 * Python process and the thread is running Python code. */
static __always_inline void xt_py_stack(__u32 tgid, __u64 start_ns, __u64 end_ns)
{
	const struct xt_py_layout *l = bpf_map_lookup_elem(&python_procs, &tgid);
	struct xt_py_scratch *buf;
	__u64 tstate, frame, differs, keep;
	__u32 zero = 0, n = 0, max, flags = 0;
	int i;

	if (!l)
		return;
	tstate = xt_py_thread_state(l, start_ns);
	if (!tstate)
		return;
	frame = xt_py_read_ptr(tstate + l->tstate_frame);
	if (frame && l->cframe_frame != XT_PY_NO_OFFSET)
		frame = xt_py_read_ptr(frame + l->cframe_frame);
	if (!frame)
		return; /* a Python thread outside any Python code */
	buf = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!buf)
		return;
	max = l->max_frames < XT_PY_MAX_FRAMES ? l->max_frames : XT_PY_MAX_FRAMES;
	for (i = 0; i < XT_PY_MAX_FRAMES; i++) {
		if (!frame)
			break;
		if (n >= max) {
			flags |= XT_FLAG_TRUNCATED;
			break;
		}
		if (bpf_probe_read_user(buf->raw, XT_PY_FRAME_READ, (const void *)frame)) {
			flags |= XT_FLAG_ARG_UNREADABLE;
			break;
		}
		/* The interpreter's own entry frame (3.12 on) holds no code of the user's: its code
		 * is written as 0, which user space skips. Without a branch (a branch per frame
		 * multiplies the verifier's states past its limit): `differs` is nonzero unless
		 * the owner byte equals owner_cstack, which user space sets to 0x100 (no byte)
		 * where frames have no such owner; `keep` is all ones or zero. */
		differs = (__u64)buf->raw[l->frame_owner & 127] ^ l->owner_cstack;
		keep = 0 - ((differs | (0 - differs)) >> 63);
		buf->frame[n & (XT_PY_MAX_FRAMES - 1)].code = xt_py_field(buf, l->frame_code) & keep;
		buf->frame[n & (XT_PY_MAX_FRAMES - 1)].instr = xt_py_field(buf, l->frame_instr);
		frame = xt_py_field(buf, l->frame_previous);
		n++;
	}
	/* The mask changes nothing (n <= XT_PY_MAX_FRAMES) but bounds the size for the verifier. */
	n &= 2 * XT_PY_MAX_FRAMES - 1;
	buf->rec.frames = n;
	buf->rec.reserved = 0;
	xt_fill_header(&buf->rec.hdr, XT_REC_PY_STACK,
		       sizeof(buf->rec) + n * sizeof(struct xt_py_frame), flags, start_ns, end_ns);
	xt_output(&buf->rec, sizeof(buf->rec) + n * sizeof(struct xt_py_frame));
}

/* xt_py_stack for the current process. */
static __always_inline void xt_py_stack_here(__u64 start_ns, __u64 end_ns)
{
	xt_py_stack(xt_current_tgid(xt_config()), start_ns, end_ns);
}

/* Whether a Level Zero call (enum xt_ze_fn) carries Python frames: the calls a user asks
 * "which line made this" of (appends of copies and the like, submissions, synchronizations),
 * not the setup and queries around them. Launches carry them too (their own program). */
static __always_inline int xt_py_wants_ze(__u32 fn)
{
	return (fn >= XT_ZE_APPEND_MEMORY_COPY && fn <= XT_ZE_APPEND_QUERY_KERNEL_TIMESTAMPS) ||
	       fn == XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS ||
	       fn == XT_ZE_COMMAND_QUEUE_SYNCHRONIZE || fn == XT_ZE_EVENT_HOST_SYNCHRONIZE ||
	       fn == XT_ZE_FENCE_HOST_SYNCHRONIZE;
}

#endif /* XTRACE_PYTHON_FRAMES_BPF_H */

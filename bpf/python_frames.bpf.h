/* Python frames of the calling thread, read the way eBPF profilers read a running CPython:
 * the thread's PyThreadState (found in the main interpreter's thread list by its thread id,
 * which is the thread's fs base, then cached per thread), its current frame, and the chain of
 * frames through `previous`, each yielding its code object, its last instruction and its
 * owner (the interpreter's own entry frames are skipped and take no slot). Frames are read
 * many at a time, not one probe read each (see XT_PY_WINDOW), in a bpf_loop whose step the
 * verifier checks once. Names and lines are resolved in user space (userspace/python/), which
 * also checked the layout against the interpreter before setting it (python.h). A call hook
 * in a probe program: xt_py_stage just before the call's own record, which then goes out
 * with the frames in one ring write (xt_py_output_with); xt_py_stack where the record is
 * of variable size. BPF-only. */
#ifndef XTRACE_PYTHON_FRAMES_BPF_H
#define XTRACE_PYTHON_FRAMES_BPF_H

#include "output.bpf.h"

/* How long a thread found without a Python thread state is believed to have none before the
 * thread list is searched again: a C thread (an OpenMP worker) makes many calls and never
 * gets one, but a thread may enter Python later (PyGILState_Ensure). */
#define XT_PY_NONE_RECHECK_NS 100000000ull


/* A thread's frames lie in its data stack (CPython 3.11 on: chunks of XT_PY_MIN_CHUNK bytes
 * or more, each frame just above its caller's), so one probe read of the bytes below the
 * innermost frame holds its callers too, as many as fit (a frame is its 72-byte header plus
 * 8 bytes per local and stack slot: 130 to 230 bytes for PyTorch's modules). A probe read
 * costs about 100 ns here whatever its size up to a few pages, far more than the copy, so the
 * walk reads as few times as it can: a frame in the thread's current chunk (its start known
 * from the thread state) is read with everything below it down to the chunk's start, up to
 * XT_PY_WINDOW bytes, which is the whole stack of most calls. Elsewhere (an older chunk) the
 * read never goes below the frame's own page: memory below a chunk may be unmapped or not
 * present, and a probe read that faults costs more than ten that do not. */
#define XT_PAGE_SIZE 4096ull
#define XT_PY_WINDOW 8192ull

/* The record as it is built, and frames' bytes as read (too large for the stack; in a map
 * value a field at a variable offset is a bounded access). */
struct xt_py_scratch {
	struct xt_py_stack rec;
	/* Twice the frames ever written, so that a size masked for the verifier stays inside;
	 * the call's record is built after the last frame (xt_py_output_with). */
	struct xt_py_frame frame[2 * XT_PY_MAX_FRAMES];
	/* The window: bytes [window_base, window_base + window_len) of the thread's frames. The
	 * rest is room for a field at an offset masked with 127 past the last frame's start. It
	 * holds the thread state's bytes before the walk. */
	__u8 window[XT_PY_WINDOW + 128] __attribute__((aligned(8)));
	/* A frame read alone (one far from the window: the interpreter's entry frame on the C
	 * stack, a generator's frame); XT_PY_FRAME_READ bytes, the rest room as above. */
	__u8 single[128] __attribute__((aligned(8)));
	/* Which staging the buffer holds (1..XT_PY_TOKEN_MASK, one more each time): a program
	 * preempted between its stage and its write by another thread's probe on this CPU finds
	 * another token here, and writes its call without frames rather than the other's. */
	__u32 token;
};

/* xt_py_stage's result: the record's size in the low bits (at most 40 + 64 * 16), the
 * staging's token above them; 0 for no frames. */
#define XT_PY_STAGED_SIZE_BITS 16
#define XT_PY_TOKEN_MASK 0x7fffu

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xt_py_scratch);
} py_scratch SEC(".maps");


/* A walk of the frame chain (bpf_loop's context: one step per frame). The layout's offsets
 * are copied in, so that the step needs no pointer of the caller's but the scratch. */
struct xt_py_walk {
	struct xt_py_scratch *buf;
	__u64 frame;       /* the next frame to read; 0 at the end of the chain */
	__u64 last;        /* the frame read before it (its callee); 0 before the first */
	__u64 window_base; /* the window's bytes in the target, window_len 0 when empty */
	__u64 window_len;
	__u64 chunk;       /* the thread's current data-stack chunk; 0 if unknown or unreadable */
	__u32 code, previous, instr, owner, owner_cstack; /* xt_py_layout's */
	__u32 max;         /* frames written at most (their count: the record's `frames`) */
	__u32 flags;
};

static __always_inline __u64 xt_py_read_ptr(__u64 addr)
{
	__u64 value = 0;

	if (bpf_probe_read_user(&value, sizeof(value), (const void *)addr))
		return 0;
	return value;
}

/* Whether the kernel has bpf_loop (Linux 5.17 on). Its BTF says; libbpf turns the test into
 * a constant, and the verifier never looks at the branch not taken. Without it there are no
 * Python frames (xt_py_stage): the hook's loops, checked by the verifier once per iteration,
 * would not fit in the Level Zero programs (user space says so, PythonSource). */
#define XT_PY_HAVE_BPF_LOOP bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop)

/* bpf_loop(nr, callback, ctx, 0), where the kernel has it. The test costs nothing (it is a
 * constant) and is also the verifier's gain: its branch is a point where the states reaching
 * the call from the caller's paths can be pruned. Without it the verifier walked each of the
 * hook's loops again for more of those states, 10k instructions more in each program. */
#define XT_PY_BPF_LOOP(nr, callback, ctx)                         \
	do {                                                      \
		if (XT_PY_HAVE_BPF_LOOP)                          \
			bpf_loop((nr), (callback), (ctx), 0);     \
	} while (0)

/* The pointer at `offset` (< XT_PY_FRAME_READ - 8, a multiple of 8: both checked by user
 * space, masked so the verifier sees it) in a frame's bytes, which start 8-byte aligned: one
 * load, where a copy of unknown alignment compiles into eight. */
static __always_inline __u64 xt_py_field(const __u8 *bytes, __u32 offset)
{
	return *(const __u64 *)(bytes + (offset & 56));
}

/* Whether a frame outside the window is worth a page's window of its own: the first frame,
 * or one below its callee or below the window in the same page or the one before (a caller
 * in the same data-stack chunk). Others (an entry frame on the C stack, a generator's frame
 * on the heap, a frame in another chunk) are read alone and keep the window for the frames
 * after them. */
static __always_inline int xt_py_window_fits(const struct xt_py_walk *w, __u64 frame)
{
	return !w->window_len || (frame < w->last && w->last - frame <= XT_PAGE_SIZE) ||
	       (frame < w->window_base && w->window_base - frame <= XT_PAGE_SIZE);
}

/* Reads the bytes [start, end) (end the end of the frame at end - XT_PY_FRAME_READ) as the
 * window; 0 when read. */
static __always_inline int xt_py_read_window(struct xt_py_walk *w, struct xt_py_scratch *buf,
					     __u64 start, __u64 end)
{
	__u64 size = end - start;

	if (size > XT_PY_WINDOW || bpf_probe_read_user(buf->window, size, (const void *)start))
		return -1;
	w->window_base = start;
	w->window_len = size;
	return 0;
}

/* The bytes of the frame at `frame` (not in the window): a new window that ends with it,
 * down to its chunk's start (at most XT_PY_WINDOW bytes) where it lies in the thread's
 * current chunk, else from the start of its page; or it alone. NULL if unreadable. */
static __always_inline const __u8 *xt_py_read_frame(struct xt_py_walk *w,
						    struct xt_py_scratch *buf, __u64 frame)
{
	__u64 end = frame + XT_PY_FRAME_READ, chunk = w->chunk;

	if (chunk && frame >= chunk && end <= chunk + XT_PY_MIN_CHUNK) {
		if (!xt_py_read_window(w, buf, end > chunk + XT_PY_WINDOW ? end - XT_PY_WINDOW : chunk,
				       end))
			return buf->window + ((frame - w->window_base) & (XT_PY_WINDOW - 8));
		w->chunk = 0; /* not the chunk it was said to be: pages from here on */
	}
	if (xt_py_window_fits(w, frame)) {
		if (xt_py_read_window(w, buf, frame & ~(XT_PAGE_SIZE - 1), end))
			return NULL;
		return buf->window + ((frame - w->window_base) & (XT_PY_WINDOW - 8));
	}
	if (bpf_probe_read_user(buf->single, XT_PY_FRAME_READ, (const void *)frame))
		return NULL;
	return buf->single;
}

/* Frames a step of the walk takes at most: its first, read if it must be, and then those
 * after it while they lie in the window, with the walk's state in registers (a step taken
 * per frame cost more than the frame's loads). */
#define XT_PY_STEP_FRAMES 8

/* A step of the walk (a bpf_loop callback, verified once whatever the depth): 0 to go on, 1
 * at the end of the chain, at the depth limit or at an unreadable frame. */
static long xt_py_walk_step(__u32 index, void *ctx)
{
	struct xt_py_walk *w = ctx;
	struct xt_py_scratch *buf = w->buf;
	const __u8 *bytes;
	__u64 frame = w->frame, base = w->window_base, len = w->window_len, next, last = 0, end;
	__u32 n, max = w->max, cstack = w->owner_cstack;
	__u32 code = w->code & 56, previous = w->previous & 56, instr = w->instr & 56;
	__u32 owner = w->owner & 127;
	int k;

	if (!frame)
		return 1;
	if (frame & 7) { /* no frame of CPython's: its frames are pointer-aligned */
		w->flags |= XT_FLAG_ARG_UNREADABLE;
		return 1;
	}
	if (frame >= base && frame - base + XT_PY_FRAME_READ <= len) {
		bytes = buf->window + ((frame - base) & (XT_PY_WINDOW - 8));
	} else {
		bytes = xt_py_read_frame(w, buf, frame);
		if (!bytes) {
			w->flags |= XT_FLAG_ARG_UNREADABLE;
			return 1;
		}
		base = w->window_base;
		len = w->window_len;
	}
	/* A frame at `offset` from base lies in the window if offset < end (an address below
	 * base wraps past it); base is 8-aligned, so offset is as aligned as the frame. */
	end = len >= XT_PY_FRAME_READ ? len - XT_PY_FRAME_READ + 1 : 0;
#pragma unroll
	for (k = 0; k < XT_PY_STEP_FRAMES; k++) {
		next = *(const __u64 *)(bytes + previous);
		/* The interpreter's own entry frame (3.12 on) holds no code of the user's and takes
		 * no slot. owner_cstack is 0x100, which no byte equals, where frames have no owner. */
		if (bytes[owner] != cstack) {
			/* The count lives in the record, not in a register: loaded from a map
			 * value it is a number the verifier does not follow, so the steps' states
			 * converge whatever the frames. */
			n = buf->rec.frames;
			if (n >= max) {
				w->flags |= XT_FLAG_TRUNCATED;
				return 1;
			}
			buf->frame[n & (XT_PY_MAX_FRAMES - 1)].code = *(const __u64 *)(bytes + code);
			buf->frame[n & (XT_PY_MAX_FRAMES - 1)].instr = *(const __u64 *)(bytes + instr);
			buf->rec.frames = n + 1;
		}
		last = frame;
		frame = next;
		/* The end (0 wraps too), a frame outside the window or a misaligned one: the next
		 * step's first frame, which it judges. */
		if (frame - base >= end || ((frame - base) & 7))
			break;
		bytes = buf->window + ((frame - base) & (XT_PY_WINDOW - 8));
	}
	w->last = last;
	w->frame = frame;
	return 0;
}

/* A search of the interpreter's thread list (bpf_loop's context). The hook's loops are all
 * bpf_loop callbacks, which the verifier checks once: a bounded loop is checked once per
 * iteration with every state its body can end in, and in the seven programs that inlined the
 * hook then (five now) these loops were three fifths of the verifier's work at a capture's
 * start. */
struct xt_py_tstate_search {
	__u64 tstate;    /* the thread state to look at next; 0 at the list's end */
	__u64 fsbase;    /* the thread id looked for */
	__u64 found;
	__u32 thread_id; /* xt_py_layout's tstate_thread_id and tstate_next */
	__u32 next;
};

/* One thread state of the search (a bpf_loop callback): 1 once found or at the list's end. */
static long xt_py_tstate_step(__u32 index, void *ctx)
{
	struct xt_py_tstate_search *s = ctx;

	if (!s->tstate)
		return 1;
	if (xt_py_read_ptr(s->tstate + s->thread_id) == s->fsbase) {
		s->found = s->tstate;
		return 1;
	}
	s->tstate = xt_py_read_ptr(s->tstate + s->next);
	return 0;
}

/* The thread state of the thread whose fs base is `fsbase`, or 0. */
static __always_inline __u64 xt_py_find_tstate(const struct xt_py_layout *l, __u64 fsbase)
{
	__u64 interp = xt_py_read_ptr(l->interp_ptr);
	struct xt_py_tstate_search s = {
		.fsbase = fsbase, .thread_id = l->tstate_thread_id, .next = l->tstate_next};

	if (!interp)
		return 0;
	s.tstate = xt_py_read_ptr(interp + l->tstate_head);
	XT_PY_BPF_LOOP(XT_PY_MAX_THREADS, xt_py_tstate_step, &s);
	return s.found;
}

/* The pointer at `offset` (< XT_PY_TSTATE_READ - 8, a multiple of 8) in a thread state's
 * bytes, as xt_py_field. */
static __always_inline __u64 xt_py_tstate_field(const __u8 *bytes, __u32 offset)
{
	return *(const __u64 *)(bytes + (offset & 504));
}

/* The calling thread's PyThreadState field tstate_frame (its _PyCFrame, or its current frame
 * in 3.13), from its thread state: the cached one if it still names this thread, else
 * searched (at most every XT_PY_NONE_RECHECK_NS for a thread that had none). 0 if it has
 * none. The state's bytes are read once, into the window (free until the walk); its data
 * stack's current chunk goes to *chunk (0 where the layout has none). */
static __always_inline __u64 xt_py_thread_frame(const struct xt_py_layout *l,
						struct xt_py_scratch *buf,
						struct xt_py_thread *pt, __u64 fsbase,
						__u64 now, __u64 *chunk)
{
	__u64 tstate = pt->tstate;

	if (pt->generation != l->generation || pt->fsbase != fsbase || !pt->checked_ns ||
	    (!tstate && now - pt->checked_ns >= XT_PY_NONE_RECHECK_NS))
		goto search;
	if (!tstate)
		return 0;
	/* A freed thread state may be reused for another thread: check it names us. */
	if (!bpf_probe_read_user(buf->window, XT_PY_TSTATE_READ, (const void *)tstate) &&
	    xt_py_tstate_field(buf->window, l->tstate_thread_id) == fsbase)
		goto found;
search:
	tstate = xt_py_find_tstate(l, fsbase);
	pt->tstate = tstate;
	pt->fsbase = fsbase;
	pt->generation = l->generation;
	pt->checked_ns = now;
	if (!tstate || bpf_probe_read_user(buf->window, XT_PY_TSTATE_READ, (const void *)tstate))
		return 0;
found:
	*chunk = l->tstate_chunk == XT_PY_NO_OFFSET ? 0 : xt_py_tstate_field(buf->window, l->tstate_chunk);
	return xt_py_tstate_field(buf->window, l->tstate_frame);
}

/* The stack just walked (`n` frames in buf->frame, innermost first) against the thread's
 * last stack (pt->last, outermost first): bpf_loop's context in xt_py_shared and
 * xt_py_sent. */
struct xt_py_last_stack {
	const struct xt_py_scratch *buf;
	struct xt_py_thread *pt;
	__u32 n;
	__u32 bound; /* xt_py_shared: pt->sent; xt_py_sent: the frames shared, kept as they are */
	__u32 shared;
};

/* Frame `j` from the outermost (a bpf_loop callback): 1 to stop at the first that differs. */
static long xt_py_shared_step(__u32 j, void *ctx)
{
	struct xt_py_last_stack *c = ctx;
	__u32 i = (c->n - 1 - j) & (XT_PY_MAX_FRAMES - 1);
	const struct xt_py_frame *last = &c->pt->last[j & (XT_PY_MAX_FRAMES - 1)];

	if (j >= c->n || j >= c->bound)
		return 1;
	if (c->buf->frame[i].code != last->code || c->buf->frame[i].instr != last->instr)
		return 1;
	c->shared = j + 1;
	return 0;
}

/* Outer frames of the stack just walked (`n` frames in buf->frame, innermost first) that equal
 * those of the last stack the thread wrote (pt->last, outermost first): counted from the
 * outermost while (code, instruction) pairs are equal. */
static __always_inline __u32 xt_py_shared(const struct xt_py_scratch *buf,
					  struct xt_py_thread *pt, __u32 n)
{
	struct xt_py_last_stack c = {.buf = buf, .pt = pt, .n = n, .bound = pt->sent};

	XT_PY_BPF_LOOP(XT_PY_MAX_FRAMES, xt_py_shared_step, &c);
	return c.shared;
}

/* Frame `bound + index` from the outermost becomes the thread's last stack's; 1 past the
 * stack's end (a bpf_loop callback). The loop starts at the first frame not shared: the
 * shared ones are there already, and a callback's call costs more than the test that skipped
 * them in a plain loop did. */
static long xt_py_sent_step(__u32 index, void *ctx)
{
	struct xt_py_last_stack *c = ctx;
	__u32 j = c->bound + index;

	if (j >= c->n)
		return 1;
	c->pt->last[j & (XT_PY_MAX_FRAMES - 1)] = c->buf->frame[(c->n - 1 - j) & (XT_PY_MAX_FRAMES - 1)];
	return 0;
}

/* After the stack staged in `buf` went to the ring (`failed` 0) or was lost: the thread's
 * last stack becomes it, or none, so that the next stack is written whole (user space
 * takes shared frames from the last stack it received of the thread, which a lost one
 * is not). */
static __always_inline void xt_py_sent(const struct xt_py_scratch *buf, int failed)
{
	struct xt_py_thread *pt =
		bpf_task_storage_get(&py_threads, bpf_get_current_task_btf(), 0, 0);
	struct xt_py_last_stack c = {.buf = buf, .n = buf->rec.frames, .bound = buf->rec.shared};

	if (!pt)
		return;
	if (failed || c.n > XT_PY_MAX_FRAMES) {
		pt->sent = 0;
		return;
	}
	c.pt = pt;
	XT_PY_BPF_LOOP(XT_PY_MAX_FRAMES, xt_py_sent_step, &c);
	pt->sent = c.n;
}

/* Builds the Python frames of the calling thread of process `tgid` (as the collector numbers
 * it) as an xt_py_stack record stamped [start_ns, end_ns] in py_scratch, if the process is a
 * checked Python process and the thread is running Python code; returns the record's size,
 * 0 when there is none. Nothing is written to the ring yet: xt_py_output_with (or
 * xt_py_stack) does. */
static __always_inline __u32 xt_py_stage(__u32 tgid, __u64 start_ns, __u64 end_ns)
{
	const struct xt_py_layout *l = bpf_map_lookup_elem(&python_procs, &tgid);
	struct task_struct *task = bpf_get_current_task_btf();
	struct xt_py_walk w = {};
	struct xt_py_scratch *buf;
	struct xt_py_thread *pt;
	__u64 frame, chunk = 0;
	__u32 zero = 0, n, k, size;

	if (!XT_PY_HAVE_BPF_LOOP || !l)
		return 0;
	buf = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!buf)
		return 0;
	pt = bpf_task_storage_get(&py_threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!pt)
		return 0;
	frame = xt_py_thread_frame(l, buf, pt, task->thread.fsbase, start_ns, &chunk);
	if (frame && l->cframe_frame != XT_PY_NO_OFFSET)
		frame = xt_py_read_ptr(frame + l->cframe_frame);
	if (!frame)
		return 0; /* a Python thread outside any Python code */
	w.buf = buf;
	w.frame = frame;
	w.chunk = chunk & ~7ull;
	w.code = l->frame_code;
	w.previous = l->frame_previous;
	w.instr = l->frame_instr;
	w.owner = l->frame_owner;
	w.owner_cstack = l->owner_cstack;
	w.max = l->max_frames < XT_PY_MAX_FRAMES ? l->max_frames : XT_PY_MAX_FRAMES;
	buf->rec.frames = 0;
	/* Entry frames take no slot, and at most one lies between two frames of code. */
	XT_PY_BPF_LOOP(2 * XT_PY_MAX_FRAMES + 1, xt_py_walk_step, &w);
	/* The masks change nothing (k <= n <= XT_PY_MAX_FRAMES) but bound the size for the
	 * verifier. Only the frames that differ from the thread's last stack are written. */
	n = buf->rec.frames & (2 * XT_PY_MAX_FRAMES - 1);
	k = xt_py_shared(buf, pt, n);
	size = sizeof(buf->rec) + ((n - k) & (2 * XT_PY_MAX_FRAMES - 1)) * sizeof(struct xt_py_frame);
	buf->rec.frames = n;
	buf->rec.shared = k;
	xt_fill_header(&buf->rec.hdr, XT_REC_PY_STACK, size, w.flags, start_ns, end_ns);
	buf->token = (buf->token & XT_PY_TOKEN_MASK) + 1;
	if (buf->token > XT_PY_TOKEN_MASK)
		buf->token = 1;
	return size | (buf->token << XT_PY_STAGED_SIZE_BITS);
}

/* py_scratch if it still holds the staging `staged` names; else null, and the stack counts
 * as lost (its thread's next stack is written whole). */
static __always_inline struct xt_py_scratch *xt_py_staged_buffer(__u32 staged)
{
	struct xt_py_scratch *buf;
	__u32 zero = 0;

	buf = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!buf)
		return 0; /* never: xt_py_stage found it */
	if (buf->token != staged >> XT_PY_STAGED_SIZE_BITS) {
		xt_count_drop(XT_REC_PY_STACK);
		xt_py_sent(buf, 1);
		return 0;
	}
	return buf;
}

/* Writes the frames xt_py_stage built (`staged` bytes, 0 for none) alone. */
static __always_inline void xt_py_output_staged(__u32 staged)
{
	struct xt_py_scratch *buf;

	if (!staged)
		return;
	buf = xt_py_staged_buffer(staged);
	if (buf)
		xt_py_sent(buf, xt_output(&buf->rec, staged & (2 * XT_PY_MAX_FRAMES *
								 sizeof(struct xt_py_frame) - 1)));
}

/* Writes a call's record `rec` of `size` bytes (a constant, at most XT_PY_MAX_FRAMES * 16)
 * to the ring, after the frames xt_py_stage built for it (`staged` bytes, 0 for none) in the
 * same ring write: a ring write costs more than the bytes of either (see output.bpf.h), and
 * user space splits the two (SplitRingSample). A full ring loses both, each counted with
 * its source. */
static __always_inline int xt_py_output_with(__u32 staged, void *rec, __u32 size)
{
	struct xt_py_scratch *buf;
	__u8 *at;

	if (!staged)
		return xt_output(rec, size);
	buf = xt_py_staged_buffer(staged);
	if (!buf)
		return xt_output(rec, size);
	/* The mask changes nothing (staged <= 40 + 64 * 16) but bounds the offset: the record
	 * lands inside the frames' array, twice as long as any stack. */
	staged &= 2 * XT_PY_MAX_FRAMES * sizeof(struct xt_py_frame) - 1;
	at = (__u8 *)&buf->rec + staged;
	__builtin_memcpy(at, rec, size);
	if (bpf_ringbuf_output(&events, &buf->rec, staged + size, xt_wakeup_flags())) {
		xt_count_drop(XT_REC_PY_STACK);
		xt_count_drop(((struct xt_record_header *)rec)->type);
		xt_py_sent(buf, 1);
		return -1;
	}
	xt_py_sent(buf, 0);
	return 0;
}

/* Writes the Python frames of the calling thread as their own record (for a call whose
 * record is of variable size); see xt_py_stage. */
static __always_inline void xt_py_stack(__u32 tgid, __u64 start_ns, __u64 end_ns)
{
	xt_py_output_staged(xt_py_stage(tgid, start_ns, end_ns));
}

/* xt_py_stack and xt_py_stage for the current process. */
static __always_inline void xt_py_stack_here(__u64 start_ns, __u64 end_ns)
{
	xt_py_stack(xt_current_tgid(xt_config()), start_ns, end_ns);
}

static __always_inline __u32 xt_py_stage_here(__u64 start_ns, __u64 end_ns)
{
	return xt_py_stage(xt_current_tgid(xt_config()), start_ns, end_ns);
}

/* Whether a Level Zero call (enum xt_ze_fn) carries Python frames: the calls a user asks
 * "which line made this" of (appends of copies and the like, submissions, synchronizations),
 * not the setup and queries around them. Launches carry them too (their own program). */
static __always_inline int xt_py_wants_ze(__u32 fn)
{
	/* The tests are made on a copy the verifier does not tie to `fn` (the AND gives it an
	 * identity of its own; barrier_var keeps the compiler from dropping it). On `fn` itself
	 * they narrowed what the verifier knows of it along each path, the caller's later
	 * branches on it kept those paths apart, and the frames hook after this test was
	 * checked once per path: twice the instructions in ze_call_return. */
	__u32 f = fn;

	barrier_var(f);
	f &= 0xffff;
	return (f >= XT_ZE_APPEND_MEMORY_COPY && f <= XT_ZE_APPEND_QUERY_KERNEL_TIMESTAMPS) ||
	       f == XT_ZE_COMMAND_QUEUE_EXECUTE_COMMAND_LISTS ||
	       f == XT_ZE_COMMAND_QUEUE_SYNCHRONIZE || f == XT_ZE_EVENT_HOST_SYNCHRONIZE ||
	       f == XT_ZE_FENCE_HOST_SYNCHRONIZE;
}

#endif /* XTRACE_PYTHON_FRAMES_BPF_H */

/* Python frames of a traced call: what user space tells BPF about a CPython interpreter it
 * checked (struct xt_py_layout, per process in the `python_procs` map), and the record BPF
 * writes with the frames of the calling thread (struct xt_py_stack). Shared by BPF
 * (bpf/python_frames.bpf.h) and user space (userspace/python/).
 *
 * Plain C with __u32/__u64 only: compiled by clang -target bpf and by C++.
 */
#ifndef XTRACE_PYTHON_H
#define XTRACE_PYTHON_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "xtrace/layout_check.h"

#include "xtrace/records.h"

/* Most frames read per call, innermost first. Deep enough for a model's forward several
 * nn.Module levels down inside a training loop inside a framework's trainer (each module
 * level is two frames: _call_impl and forward); the loop stops at the outermost frame, so a
 * shallow stack costs only its own depth. A deeper stack keeps its innermost frames and is
 * flagged XT_FLAG_TRUNCATED. */
#define XT_PY_MAX_FRAMES 64

/* Thread states searched for the calling thread's when it has none cached. */
#define XT_PY_MAX_THREADS 64

/* Bytes read per frame in one probe read, from the frame's start: every field used lies
 * below it in CPython 3.11 to 3.13 (_PyInterpreterFrame: code, previous, instruction, owner).
 * User space refuses a layout whose pointer fields do not lie within the first
 * XT_PY_FRAME_READ - 8 bytes or whose owner byte lies past it. */
#define XT_PY_FRAME_READ 72

/* Bytes read of a thread state at each traced call, from its start: its thread id (checked
 * to still name the calling thread), its frame pointer and its data stack's current chunk
 * come out of one probe read. User space refuses a layout whose fields do not lie within the
 * first XT_PY_TSTATE_READ - 8 bytes (the chunk lies at 296 in CPython 3.11, below 240 in 3.12
 * and 3.13; the others below 160). */
#define XT_PY_TSTATE_READ 320

/* The smallest chunk of a thread's data stack (CPython 3.11 to 3.13's DATA_STACK_CHUNK_SIZE;
 * a chunk that must hold a larger frame doubles it): [chunk, chunk + XT_PY_MIN_CHUNK) is the
 * interpreter's memory wherever the thread's current chunk lies. */
#define XT_PY_MIN_CHUNK 16384

/* An offset that does not apply (xt_py_layout.cframe_frame, frame_owner). */
#define XT_PY_NO_OFFSET 0xffffffffu

/* Where BPF finds the calling thread's Python frames in one process, all checked by user
 * space against the running interpreter before it is set (userspace/python/). */
struct xt_py_layout {
	__u64 interp_ptr;       /* address of _PyRuntime.interpreters.main in the target: the main
				 * interpreter, whose threads are searched (subinterpreters' threads
				 * get no frames) */
	__u32 tstate_head;      /* PyInterpreterState.threads.head */
	__u32 tstate_next;      /* PyThreadState.next */
	__u32 tstate_thread_id; /* PyThreadState.thread_id: pthread_self(), which on x86-64 is the
				 * thread's fs base, so BPF matches it without knowing the
				 * thread's id in the target's pid namespace */
	__u32 tstate_frame;     /* PyThreadState.cframe (3.11, 3.12) or current_frame (3.13) */
	__u32 cframe_frame;     /* _PyCFrame.current_frame; XT_PY_NO_OFFSET when tstate_frame
				 * points at the current frame itself (3.13) */
	__u32 frame_code;       /* _PyInterpreterFrame.f_code (f_executable in 3.13) */
	__u32 frame_previous;   /* _PyInterpreterFrame.previous */
	__u32 frame_instr;      /* prev_instr (3.11, 3.12) or instr_ptr (3.13) */
	__u32 frame_owner;      /* _PyInterpreterFrame.owner (a char), or XT_PY_NO_OFFSET (3.11):
				 * frames whose owner is owner_cstack are the interpreter's own
				 * entry frames (3.12 on), not code the user wrote: BPF writes them
				 * with code 0 and user space skips them */
	__u32 owner_cstack;     /* FRAME_OWNED_BY_CSTACK; 0x100 (equal to no byte) where
				 * frame_owner is XT_PY_NO_OFFSET */
	__u32 max_frames;       /* at most XT_PY_MAX_FRAMES */
	__u32 generation;       /* changes whenever the process's layout is set: cached thread
				 * states of an earlier image are not trusted */
	__u32 tstate_chunk;     /* PyThreadState.datastack_chunk, the chunk of the data stack its
				 * frames are pushed onto, or XT_PY_NO_OFFSET: frames in it are read
				 * from its start, not only from their own page */
	__u32 reserved;
};

/* One frame as BPF reads it: user space turns the code object into file, function and first
 * line, and the instruction pointer into the current line. */
struct xt_py_frame {
	__u64 code;  /* PyCodeObject*; 0 for the interpreter's own entry frames (skipped) */
	__u64 instr; /* the frame's last instruction (prev_instr / instr_ptr) */
};

/* The Python frames of the thread making a traced call, written just before the call's own
 * record with the call's start_ns and end_ns (ITT events: their time). Only threads with a
 * Python thread state get one. The stack has `frames` frames, innermost first; its outermost
 * `shared` are those of the thread's previous stack record (equal code and instruction,
 * outermost first) and are not repeated: the record is followed by its `frames - shared`
 * inner struct xt_py_frame. A stack after a lost one has shared 0. XT_FLAG_TRUNCATED when
 * the stack went deeper than max_frames. */
struct xt_py_stack {
	struct xt_record_header hdr;
	__u32 frames;
	__u32 shared;
	/* struct xt_py_frame frame[frames - shared]; */
};

/* Set by user space, read by BPF; frames written by BPF, read by the decoder (layout_check.h). */
XT_LAYOUT(XT_SIZE(xt_py_layout) == 64);
XT_LAYOUT(XT_OFFSET(xt_py_layout, tstate_head) == 8);
XT_LAYOUT(XT_OFFSET(xt_py_layout, generation) == 52);
XT_LAYOUT(XT_OFFSET(xt_py_layout, tstate_chunk) == 56);
XT_LAYOUT(XT_SIZE(xt_py_frame) == 16);
XT_LAYOUT(XT_SIZE(xt_py_stack) == 40);
XT_LAYOUT(XT_OFFSET(xt_py_stack, frames) == 32);
XT_LAYOUT(XT_OFFSET(xt_py_stack, shared) == 36);

#endif /* XTRACE_PYTHON_H */

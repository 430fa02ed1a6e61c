/* The ITT fast path: the memory layout that libxtrace_itt.so keeps in the traced process and
 * that xtrace reads and writes with process_vm_readv/process_vm_writev. Shared by the
 * collector and xtrace's reader only (no BPF), plain C with __u32/__u64.
 *
 * The collector exports one control block, XT_ITT_CONTROL_SYMBOL. While its `generation` is
 * 0 every ITT call goes to the probe site exactly as without a fast path. xtrace attaches by
 * writing the heartbeat, the lease and the clock, then a nonzero generation; from then on each
 * thread appends records to a ring of its own (allocated at its first call, listed in
 * `rings`) instead of calling the probe site. xtrace drains the rings on its timer, writes
 * each ring's `read_pos` back, and refreshes the heartbeat; a collector that sees the
 * heartbeat older than the lease sets the generation back to 0 itself.
 *
 * Nothing here is trusted by xtrace: every field and record is validated as it is read.
 *
 * The one part BPF reads (bpf/process_lifecycle.bpf.c): the rings' `records` and `dropped`
 * counters, as each thread of a process on the fast path exits and as it execs, into
 * struct xt_itt_rings_seen. Records still in a ring when its process ends go with the
 * process; those counters say how many, so they are counted dropped, never lost unseen.
 */
#ifndef XTRACE_ITT_RING_H
#define XTRACE_ITT_RING_H

#ifndef __VMLINUX_H__ /* BPF gets the types from vmlinux.h */
#include <linux/types.h>
#endif

#include "xtrace/layout_check.h"

#define XT_ITT_CONTROL_SYMBOL "xtrace_itt_control"
#define XT_ITT_CONTROL_MAGIC 0x314c5254435449ull /* "ITCTRL1" little-endian */
#define XT_ITT_RING_MAGIC 0x31474e4952544958ull  /* "XITRING1" */
#define XT_ITT_LAYOUT_VERSION 2 /* 2: xt_itt_ring.records */

/* Rings a process may register (threads that made an ITT call while attached; rings of
 * exited threads are reused once drained). Calls of threads beyond it are counted in
 * no_ring_dropped. */
#define XT_ITT_MAX_RINGS 1024

/* Data bytes per ring: 4 MiB holds ~75k begin/end pairs, 36 ms of a thread making 2M pairs/s.
 * xtrace drains every 1-5 ms, but its drain thread shares a core with its capture loop when
 * the capture runs on one: it can wait out a tick or two of the loop's work (4 ms each at
 * HZ=250) and a stall of the VM (~10 ms seen). 1 MiB (9 ms at that rate) lost records to
 * such waits; 4 MiB lost none in the bench's runs. Pages are touched only as the ring fills:
 * a thread pays 4 MiB only once it has made that many bytes of calls. */
#define XT_ITT_RING_BYTES (1u << 22)
/* What a capture may ask for instead (xt_itt_control.ring_bytes_wanted, xtrace's
 * --itt-ring-size): a power of two between these. */
#define XT_ITT_RING_MIN_BYTES (1u << 16)
#define XT_ITT_RING_MAX_BYTES (1u << 26)

/* enum for xt_itt_control.clock: what the records' `time` counts. xtrace converts either to
 * CLOCK_MONOTONIC ns (the BPF records' clock). */
enum xt_itt_clock {
	XT_ITT_CLOCK_TSC = 0,       /* rdtsc: ~2x cheaper than the vDSO on this machine kind */
	XT_ITT_CLOCK_MONOTONIC = 1, /* clock_gettime(CLOCK_MONOTONIC), when the TSC is not usable */
};

struct xt_itt_control {
	__u64 magic;          /* XT_ITT_CONTROL_MAGIC */
	__u64 self;           /* this block's own address in the process: checks the symbol math */
	__u32 version;        /* XT_ITT_LAYOUT_VERSION */
	__u32 max_rings;      /* XT_ITT_MAX_RINGS */
	__u32 ring_bytes;     /* XT_ITT_RING_BYTES */
	__u32 refused;        /* nonzero: the process opted out (XTRACE_ITT_FAST_PATH=0) */
	/* Written by xtrace (the collector only ever clears generation). */
	__u64 generation;     /* 0: not attached */
	__u64 heartbeat;      /* xtrace's last drain, in `clock` units */
	__u64 lease;          /* the collector stops once now - heartbeat exceeds this */
	__u32 clock;          /* enum xt_itt_clock */
	__u32 ring_bytes_wanted; /* data bytes of the rings made from now on; 0 (or not a power
				  * of two in [XT_ITT_RING_MIN_BYTES, XT_ITT_RING_MAX_BYTES]):
				  * XT_ITT_RING_BYTES. A thread keeps the ring it has. */
	/* Written by the collector. */
	__u64 lapses;         /* times the collector found the heartbeat stale and stopped */
	__u64 no_ring_dropped; /* records lost because a thread could get no ring */
	__u32 ring_count;     /* entries of rings[] handed out (may exceed max_rings: clamp) */
	__u32 reserved2;
	__u64 rings[XT_ITT_MAX_RINGS]; /* struct xt_itt_ring addresses; 0 while being set up */
};

/* A single-producer ring: the owning thread writes records at write_pos and publishes the
 * new write_pos; xtrace reads [read_pos, write_pos) and writes read_pos. Positions count
 * bytes ever written; a record is at (pos % data_bytes) and may wrap around the end. The
 * producer never writes past read_pos + data_bytes: a record that does not fit is counted
 * in `dropped` instead. */
struct xt_itt_ring {
	__u64 magic;      /* XT_ITT_RING_MAGIC */
	__u32 data_bytes; /* a power of two */
	__u32 owner_tid;  /* the thread using it now (its own pid namespace); 0: free for reuse */
	__u64 write_pos;
	__u64 dropped;
	__u64 records;    /* records written (dropped ones not included), ever */
	__u64 pad0[3];    /* read_pos on its own cache line */
	__u64 read_pos;
	__u64 pad1[7];
	/* __u8 data[data_bytes]; */
};

/* The counters BPF reads of a ring, in this order from offsetof(xt_itt_ring, dropped). */
#define XT_ITT_RING_COUNTERS_OFFSET 24

/* Offsets in struct xt_itt_control that BPF reads (checked at the end of this header). */
#define XT_ITT_CONTROL_NO_RING_DROPPED_OFFSET 72
#define XT_ITT_CONTROL_RING_COUNT_OFFSET 80
#define XT_ITT_CONTROL_RINGS_OFFSET 88

/* The collector's ITT domains, exported as XT_ITT_DOMAINS_SYMBOL, so that a domain costs its
 * clients nothing while nobody traces the process. Every ITT client checks a domain's
 * `flags` before it calls the collector (a domain whose flags are 0 is skipped inline), so
 * the collector keeps its domains' flags at 0 while the process is not traced: it creates a
 * domain switched off unless a capture traces the process then, and a call that reaches it
 * untraced switches its domain off. A capture that attaches walks this list (newest first,
 * through each domain's `next`) and sets the flags of each domain to 1; it does so again
 * every few hundred ms, which also covers a domain switched off by a call that raced the
 * attach. In a process that opted out (XTRACE_ITT_FAST_PATH=0, `always_on` below), domains
 * stay on and nothing is written. */
#define XT_ITT_DOMAINS_SYMBOL "xtrace_itt_domains"
#define XT_ITT_DOMAINS_MAGIC 0x31534e4d4f445458ull /* "XTDOMNS1" little-endian */
#define XT_ITT_DOMAIN_FLAGS_OFFSET 0 /* __itt_domain.flags (int) */
#define XT_ITT_DOMAIN_NEXT_OFFSET 40 /* __itt_domain.next */
#define XT_ITT_DOMAIN_SIZE 48

/* Clients' own domains the collector adopted (below) */
#define XT_ITT_MAX_ADOPTED 64

struct xt_itt_domains {
	__u64 magic;     /* XT_ITT_DOMAINS_MAGIC */
	__u64 self;      /* this block's own address in the process */
	__u64 head;      /* the newest __itt_domain*, published after it is complete; 0: none */
	__u64 count;     /* domains in the list */
	__u32 always_on; /* nonzero: the process opted out, its domains are never switched off */
	__u32 adopted_count; /* entries of adopted[] in use (at most XT_ITT_MAX_ADOPTED) */
	/* Domains a client made itself: a client's static part makes its own domain when
	 * __itt_domain_create is its first ITT call, before it has loaded the collector
	 * (oneDNN does). The collector adopts them from the client's domain list when the client
	 * initialises, and treats them as its own. */
	__u64 adopted[XT_ITT_MAX_ADOPTED];
};

/* Value of the `itt_rings` map (bpf/maps.bpf.h), keyed by the process's id as the capture
 * numbers it: xtrace adds a process as its fast path attaches; BPF adds up its rings'
 * counters as its threads exit and as it execs (the last look at a process's memory that
 * anyone gets), keeping the largest totals seen. */
struct xt_itt_rings_seen {
	__u64 control;    /* the control block's address in the process (set by xtrace) */
	__u64 records;    /* sum of every ring's `records` at the fullest look */
	__u64 dropped;    /* sum of every ring's `dropped`, plus no_ring_dropped */
	__u32 looks;      /* looks that read everything */
	__u32 unreadable; /* looks that could not read the block or a ring */
};

/* Which optional words follow a record's fixed part, in this order. */
enum xt_itt_ring_fields {
	XT_ITT_RF_DOMAIN = 1u << 0, /* __itt_domain* */
	XT_ITT_RF_NAME = 1u << 1,   /* __itt_string_handle* */
	XT_ITT_RF_ID = 1u << 2,     /* two words: __itt_id d1, d2 */
	XT_ITT_RF_EXTRA = 1u << 3,  /* op-specific (enum xt_itt_op) */
	XT_ITT_RF_TEXT = 1u << 4,   /* a word holding the text length, then the text (padded to 8) */
	XT_ITT_RF_ALL = 0x1f,
};

/* A record in a ring: 8-byte aligned, `size` bytes in all (a multiple of 8). */
struct xt_itt_ring_record {
	__u16 size;
	__u8 op;      /* enum xt_itt_op (records.h) */
	__u8 fields;  /* enum xt_itt_ring_fields */
	__u32 tid;    /* the calling thread, as its own pid namespace numbers it */
	__u64 time;   /* in the control block's clock */
	/* __u64 words[]; */
};

/* Largest record: fixed part, five words, the text length word and a thread name. */
#define XT_ITT_RING_MAX_TEXT 512
#define XT_ITT_RING_MAX_RECORD (16 + 6 * 8 + XT_ITT_RING_MAX_TEXT)

/* The collector writes these, BPF and xtrace read them (layout_check.h): the offsets BPF
 * reads by number among them. */
XT_LAYOUT(XT_SIZE(xt_itt_control) == 88 + 8 * XT_ITT_MAX_RINGS);
XT_LAYOUT(XT_OFFSET(xt_itt_control, generation) == 32);
XT_LAYOUT(XT_OFFSET(xt_itt_control, clock) == 56);
XT_LAYOUT(XT_OFFSET(xt_itt_control, no_ring_dropped) == XT_ITT_CONTROL_NO_RING_DROPPED_OFFSET);
XT_LAYOUT(XT_OFFSET(xt_itt_control, ring_count) == XT_ITT_CONTROL_RING_COUNT_OFFSET);
XT_LAYOUT(XT_OFFSET(xt_itt_control, rings) == XT_ITT_CONTROL_RINGS_OFFSET);
XT_LAYOUT(XT_SIZE(xt_itt_ring) == 128);
XT_LAYOUT(XT_OFFSET(xt_itt_ring, write_pos) == 16);
XT_LAYOUT(XT_OFFSET(xt_itt_ring, dropped) == XT_ITT_RING_COUNTERS_OFFSET);
XT_LAYOUT(XT_OFFSET(xt_itt_ring, records) == XT_ITT_RING_COUNTERS_OFFSET + 8);
XT_LAYOUT(XT_OFFSET(xt_itt_ring, read_pos) == 64);
XT_LAYOUT(XT_SIZE(xt_itt_rings_seen) == 32);
XT_LAYOUT(XT_OFFSET(xt_itt_rings_seen, looks) == 24);
XT_LAYOUT(XT_SIZE(xt_itt_ring_record) == 16);
XT_LAYOUT(XT_OFFSET(xt_itt_ring_record, tid) == 4);
XT_LAYOUT(XT_OFFSET(xt_itt_ring_record, time) == 8);

#endif /* XTRACE_ITT_RING_H */

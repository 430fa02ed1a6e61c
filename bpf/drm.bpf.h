/* State the DRM programs share: the ioctl each thread is inside, from syscall entry to exit.
 * The ioctl object owns the map; the fence object reuses it by fd to tell whether a fence is
 * being made inside a traced DRM ioctl. BPF-only. */
#ifndef XTRACE_DRM_BPF_H
#define XTRACE_DRM_BPF_H

#include "maps.bpf.h"
#include "xtrace/drm_records.h"

/* Threads inside a DRM ioctl at once (across all traced processes). */
#define XT_MAX_DRM_PENDING 4096

/* An ioctl between its entry and exit. */
struct xt_drm_pending {
	__u64 start_ns;
	__u64 arg;
	__u32 fd;
	__u32 cmd;
	__u32 flags;  /* enum xt_record_flags */
	__u32 rdev;
	__u32 mode;
	__u32 in_len;
	__u8 in[XT_DRM_MAX_ARG];
};

/* Keyed by pid_tgid: a thread is in at most one syscall. LRU: a thread killed inside an
 * ioctl must not hold its slot forever. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XT_MAX_DRM_PENDING);
	__type(key, __u64);
	__type(value, struct xt_drm_pending);
} drm_pending SEC(".maps");

#endif /* XTRACE_DRM_BPF_H */

/* Record layouts of the kernel-driver (DRM) view, shared by the BPF programs and the decoder.
 * Plain C, __u32/__u64 only, like records.h (whose header and type numbers they use). */
#ifndef XTRACE_DRM_RECORDS_H
#define XTRACE_DRM_RECORDS_H

#include "xtrace/layout_check.h"
#include "xtrace/records.h"

/* Bytes of an ioctl argument struct copied at entry and again at exit. The largest struct
 * decoded, xe's drm_xe_vm_bind, has 136; larger structs are cut here (their leading fields,
 * which are the ones decoded, still arrive). A power of two: the BPF side bounds variable
 * copies with it. */
#define XT_DRM_MAX_ARG 256

/* Fields of an ioctl command number (asm-generic/ioctl.h): nr 0-7, type 8-15, size 16-29,
 * direction 30-31. */
#define XT_IOC_NR(cmd) ((cmd) & 0xffu)
#define XT_IOC_TYPE(cmd) (((cmd) >> 8) & 0xffu)
#define XT_IOC_SIZE(cmd) (((cmd) >> 16) & 0x3fffu)
#define XT_IOC_DIR(cmd) ((cmd) >> 30)
#define XT_IOC_WRITE 1u /* user space passes the struct in */
#define XT_IOC_READ 2u  /* the kernel writes the struct back */

/* Every DRM ioctl, core or driver-specific, has type 'd' (DRM_IOCTL_BASE). */
#define XT_DRM_IOCTL_TYPE 0x64u

/* One ioctl(2) with a DRM command, paired entry and exit on one thread: hdr.start_ns/end_ns
 * are syscall entry and exit. XT_FLAG_ARG_UNREADABLE: the argument struct could not be read
 * (NULL or unmapped pointer), at entry or at exit; the record is still complete otherwise.
 * Followed by in_len bytes of the struct as passed in (read at entry, for commands that pass
 * one) and out_len bytes of it as written back (read at exit, for commands the kernel writes
 * back, when the call succeeded). */
struct xt_drm_ioctl {
	struct xt_record_header hdr;
	__s64 ret;     /* what the syscall returned: >= 0, or -errno */
	__u64 arg;     /* the argument pointer as passed */
	__u32 fd;
	__u32 cmd;     /* the command number as passed, size bits included */
	/* The file behind fd at entry, read from the task's fd table so that a process that has
	 * exited or closed the fd by the time user space looks is still identified: */
	__u32 rdev;    /* device number, kernel encoding (major << 20 | minor) */
	__u16 mode;    /* inode mode (file type and permissions); 0: fd not found */
	__u16 in_len;  /* <= XT_DRM_MAX_ARG */
	__u16 out_len; /* <= XT_DRM_MAX_ARG */
	__u16 reserved[3];
	/* __u8 in[in_len]; __u8 out[out_len]; */
};

/* Kernel encoding of a device number (include/linux/kdev_t.h, MINORBITS). */
#define XT_KDEV_MAJOR(rdev) ((rdev) >> 20)
#define XT_KDEV_MINOR(rdev) ((rdev) & 0xfffffu)

/* Which probe saw a fence signal first. */
enum xt_fence_source {
	XT_FENCE_SRC_DMA_FENCE = 1,    /* dma_fence:dma_fence_signaled (every driver) */
	XT_FENCE_SRC_I915_RETIRE = 2,  /* i915:i915_request_retire */
	XT_FENCE_SRC_XE_HW_FENCE = 3,  /* xe:xe_hw_fence_signal */
};

/* A fence created while a traced thread was inside a DRM ioctl (the GPU work that ioctl
 * submitted, or a step of it), reported when it signals. hdr.pid/tid are the submitting
 * thread's (the signal itself usually runs in an interrupt or a kernel worker);
 * hdr.start_ns: fence created, hdr.end_ns: fence signaled. */
struct xt_drm_fence {
	struct xt_record_header hdr;
	__u64 ioctl_start_ns; /* hdr.start_ns of the xt_drm_ioctl that created it */
	__u64 context;        /* dma_fence context: the timeline (ring, queue) */
	__u64 seqno;          /* position on that timeline */
	__u32 source;         /* enum xt_fence_source */
	__u32 reserved;
};

/* Written by BPF, read by the decoder (layout_check.h). */
XT_LAYOUT(XT_SIZE(xt_drm_ioctl) == 72);
XT_LAYOUT(XT_OFFSET(xt_drm_ioctl, ret) == 32);
XT_LAYOUT(XT_OFFSET(xt_drm_ioctl, fd) == 48);
XT_LAYOUT(XT_OFFSET(xt_drm_ioctl, rdev) == 56);
XT_LAYOUT(XT_OFFSET(xt_drm_ioctl, mode) == 60);
XT_LAYOUT(XT_OFFSET(xt_drm_ioctl, in_len) == 62);
XT_LAYOUT(XT_OFFSET(xt_drm_ioctl, out_len) == 64);
XT_LAYOUT(XT_SIZE(xt_drm_fence) == 64);
XT_LAYOUT(XT_OFFSET(xt_drm_fence, seqno) == 48);
XT_LAYOUT(XT_OFFSET(xt_drm_fence, source) == 56);

#endif /* XTRACE_DRM_RECORDS_H */

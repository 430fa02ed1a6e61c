# Schema of the xtrace event log (run.capnp): what a capture recorded, read by `convert` and
# `report`. See the comment on LogFrame for the file layout.
@0xb7b1dcab7f17f2ee;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("xtrace::log_schema");

# Rules for changing this file (the log outlives the binary that wrote it):
# - ordinals are append-only; never renumber, never reuse. A field that is no longer written
#   stays in place, renamed `obsoleteXxx` with a comment saying since when and why;
# - a new field's default must mean "not recorded", because old logs read as the default;
# - a change old readers cannot read correctly bumps `formatVersion`.
#
# File layout: a sequence of standard stream-framed Cap'n Proto messages in packed encoding,
# each a LogFrame:
#   header            exactly one, first
#   batch*            events in capture order, each batch written with one write(2), so a
#                     capture killed at any moment leaves every batch before it readable;
#                     a batch of spans only may be preceded by its spanBatch (same write)
#   batchIndex        where the runs of span batches lie (Header.batchIndexAt points to it),
#                     only when the capture ended cleanly
#   summary           last, only when the capture ended cleanly
# Inspect with:
#   capnp decode --packed userspace/log/xtrace_log.capnp LogFrame < run.capnp

const logMagic :UInt64 = 0x676c656361727478;
# Header.magic: the bytes "xtracelg" read as a little-endian UInt64. Tells an xtrace log from
# any other Cap'n Proto stream, whose first message would read as a header of zeros.

const formatVersion :UInt32 = 2;
# Header.formatVersion written by this schema. History:
#   1  first version.
#   2  launch handles by reference to Batch.handles (kernelRef, commandListRef,
#      signalEventRef); readers of version 1 would see those handles as 0. Version 1 logs
#      read unchanged (their refs are all 0).

struct LogFrame {
  union {
    header @0 :Header;
    batch @1 :Batch;
    summary @2 :Summary;
    spanBatch @3 :SpanBatch;
    batchIndex @4 :BatchIndex;
  }
}

# Where the batches of spans lie, so that a reader looking at a time window finds what it must
# read without reading the rest, the spanBatch heads included. Written once, at a clean finish,
# just before the summary; Header.batchIndexAt says where. Readers that do not know this frame
# skip it (an unknown LogFrame kind), so it needs no format version.
struct BatchIndex {
  spanRuns @0 :List(SpanRun);
  # In file order. Everything between two runs (batches with strings or with events other than
  # spans) is read by every reader, as it is wanted whatever the window.
}

# Consecutive batches of spans only, each with its spanBatch head: a windowed reader whose
# window misses [baseNs, endNs] steps over the run with one seek; one that reaches into it
# reads its heads as usual.
struct SpanRun {
  offset @0 :UInt64;   # where its first spanBatch head begins in the file
  bytes @1 :UInt64;    # its length in the file, heads and batches
  baseNs @2 :UInt64;   # the earliest baseNs of its batches
  endNs @3 :UInt64;    # the latest endNs of its batches
  batches @4 :UInt32;
  events @5 :UInt64;
}

# Written just before a batch whose events are all spans and instants (the kinds Batch.endNs
# bounds) and which brings no strings, so that a reader looking at a time window can step over
# the batch without unpacking it: packed frames carry no length of their own. Readers that do
# not know this frame skip it (an unknown LogFrame kind) and read the batch as before, so it
# needs no format version.
struct SpanBatch {
  packedBytes @0 :UInt64;
  # The length in the file of the batch frame that follows.
  baseNs @1 :UInt64;
  endNs @2 :UInt64;
  # The batch's Batch.baseNs and Batch.endNs: its spans lie within [baseNs, endNs].
  events @3 :UInt32;
  # How many events the batch holds.
}

# Three host clocks read back to back, to map times between them (BPF stamps
# CLOCK_MONOTONIC, Level Zero reports CLOCK_MONOTONIC_RAW, people think in CLOCK_REALTIME).
struct ClockAnchor {
  monotonicNs @0 :UInt64;
  monotonicRawNs @1 :UInt64;
  realtimeNs @2 :UInt64;
}

struct Header {
  magic @0 :UInt64;            # always logMagic
  formatVersion @1 :UInt32;    # see the formatVersion constant
  xtraceVersion @2 :Text;      # version of the xtrace that wrote the log
  host @3 :Text;               # hostname of the traced machine
  kernelRelease @4 :Text;      # uname -r
  bootId @5 :Text;             # /proc/sys/kernel/random/boot_id: CLOCK_MONOTONIC is per boot
  commandLine @6 :Text;        # xtrace's own command line
  startClock @7 :ClockAnchor;  # taken when the capture started
  batchIndexAt @8 :UInt64 = 0;
  # Where the LogFrame.batchIndex frame begins, written over the header in place when the
  # capture ends cleanly. So that the packed header keeps its length, the value is stored 7 bits
  # a byte with each byte's high bit set (no byte is zero): byte i holds bits 7i..7i+6. All
  # bytes 0x80 (0 stored) or 0 (logs before this field): no index; read the log as before.
}

# A group of events plus the strings they introduced. Batches are self-contained apart from
# the string table, which every batch extends, so a reader needs only one batch in memory.
struct Batch {
  firstStringId @0 :UInt32;
  # Id of strings[0]. Ids are dense: strings[i] has id firstStringId + i, and firstStringId
  # equals the number of strings in all earlier batches (id 0, "", is implicit and never
  # written, so the first batch starts at 1).

  strings @1 :List(Text);
  # Strings interned since the previous batch. Events of this and later batches refer to
  # them by id.

  baseNs @2 :UInt64;
  # CLOCK_MONOTONIC ns that event times in this batch are relative to (the earliest start),
  # so that a time costs 2-4 bytes instead of 8 in packed encoding.

  events @3 :List(Event);

  handles @4 :List(UInt64);
  # Since format 2: the distinct handles (kernels, command lists, events) this batch's events
  # refer to by ref. A ref counts from 1: ref r is handles[r - 1]; ref 0 means the handle is
  # in the event's own field (and 0 there means no handle; a handle whose ref would not fit
  # 16 bits is written there too). A ref takes a byte or two in packed encoding where a
  # 64-bit handle took seven; the table is per batch, so a batch still reads on its own.
  endNs @5 :UInt64;
  # The latest time (start or end) of this batch's spans and instants (kernel launches and
  # creates, API calls, device operations, ITT tasks and markers, DRM ioctls and fences), so
  # that a reader looking at a time window can leave out the batches whose spans all lie
  # outside it without decoding them; [baseNs, endNs] bounds them. 0: not recorded (logs
  # written before this field, or a batch without spans): read the batch whole.
}

# One event of the model (userspace/model/event.h). Each kind is a group inside one union, so
# every event is one fixed-size list element with no pointer of its own; packed encoding
# squeezes out the zeros left by the shorter kinds. The most frequent kind comes first so its
# discriminant is 0, which packing stores for free. Times: start = Batch.baseNs +
# startOffsetNs, end = start + durationNs (both modulo 2^64, so any value round-trips).
# Strings are ids into the table built from Batch.strings.
struct Event {
  union {
    kernelLaunch :group {
      # zeCommandListAppendLaunchKernel.
      pid @0 :UInt32;
      tid @1 :UInt32;
      startOffsetNs @2 :UInt64;
      durationNs @3 :UInt64;
      kernel @4 :UInt64;            # ze_kernel_handle_t (format 1; 0 when kernelRef is set)
      commandList @5 :UInt64;       # ze_command_list_handle_t (likewise, commandListRef)
      signalEvent @6 :UInt64;       # ze_event_handle_t, 0 if none (likewise, signalEventRef)
      groupCountX @7 :UInt32;
      groupCountY @8 :UInt32;
      groupCountZ @9 :UInt32;
      kernelName @10 :UInt32;       # string id; "kernel@0x<handle>" when not nameKnown
      numWaitEvents @11 :UInt32;
      result @12 :Int32;            # ze_result_t of the call
      nameKnown @13 :Bool = true;   # its zeKernelCreate was seen (default true: the
                                    # usual case then costs no byte in packed encoding)
      groupCountUnreadable @14 :Bool;  # the target's group-count struct could not be read
      launchKind @82 :UInt8;        # 0 plain, 1 cooperative, 2 indirect (no group counts),
                                    # 3 with arguments, 4 with parameters
      kernelRef @159 :UInt16;        # the kernel as a ref into Batch.handles (format 2)
      commandListRef @160 :UInt16;   # the command list, likewise
      signalEventRef @161 :UInt16;   # the signal event, likewise; 0 with signalEvent 0: none
    }
    kernelCreate :group {
      # zeKernelCreate.
      pid @15 :UInt32;
      tid @16 :UInt32;
      startOffsetNs @17 :UInt64;
      durationNs @18 :UInt64;
      module @19 :UInt64;           # ze_module_handle_t
      kernel @20 :UInt64;           # the created handle, 0 if the call failed
      name @21 :UInt32;             # string id of the kernel name
      result @22 :Int32;            # ze_result_t of the call
      nameTruncated @23 :Bool;      # the name was longer than the probe copies
      learned @181 :Bool;           # made before the attach: not a call the process made but
                                    # what xtrace asked it (zeKernelGetName) while it held the
                                    # thread; start and duration are that hold, module is 0
    }
    processInfo :group {
      # A traced process, when first seen and again at each exec (in order).
      pid @24 :UInt32;              # in the init pid namespace
      nsPid @25 :UInt32;            # in the process's own pid namespace
      comm @26 :UInt32;             # string id
      commandLine @27 :UInt32;      # string id; arguments joined with spaces
      cgroup @157 :UInt32;          # string id; cgroup v2 path ("" if unknown)
      containerId @158 :UInt32;     # string id; 64 hex digits, "" outside containers
      rank @162 :Int32 = -1;        # its distributed rank, from RANK, PMI_RANK, ... in its
                                    # environment when first seen; -1: none or not read
      exec @163 :Bool;              # the process exec'd into this identity at
      execOffsetNs @164 :UInt64;    # this time; the processInfo before it for the same pid
                                    # is who it was until then. False: as first seen
      worldSize @165 :Int32 = -1;   # its job's number of ranks, from WORLD_SIZE, PMI_SIZE,
                                    # ... likewise; -1: none or not read
    }
    threadInfo :group {
      # A thread's name, when the thread is first seen.
      pid @28 :UInt32;
      tid @29 :UInt32;
      name @30 :UInt32;             # string id
    }
    ittTask :group {
      # An ITT task, overlapped task, region or frame, or a PyTorch range: a begin paired
      # with its end by the correlator (userspace/model/itt_event.h).
      pid @31 :UInt32;
      tid @32 :UInt32;              # the thread that began it
      startOffsetNs @33 :UInt64;
      durationNs @34 :UInt64;
      domain @35 :UInt32;           # string id: the ITT domain ("PyTorch" for its ranges)
      name @36 :UInt32;             # string id; empty when beginMissing
      kind @37 :IttTaskKind;
      id @38 :UInt64;               # __itt_id.d1 of id-paired kinds
      endTid @39 :UInt32;           # the thread that ended it
      unfinished @40 :Bool;         # no end seen: it ends where the capture, collection or
                                    # process ended
      beginMissing @41 :Bool;       # an end that matched no begin (at startOffsetNs)
      closedByOuter @42 :Bool;      # never ended itself; closed with an enclosing task
      nameTruncated @166 :Bool;     # the probe cut the name at XT_MAX_ITT_NAME bytes (the
                                    # name ends in U+2026 "…")
    }
    ittMarker :group {
      # __itt_marker or a PyTorch itt_mark: a point in time.
      pid @43 :UInt32;
      tid @44 :UInt32;
      startOffsetNs @45 :UInt64;
      domain @46 :UInt32;           # string id
      name @47 :UInt32;             # string id
      scope @48 :IttMarkerScope;
      nameTruncated @167 :Bool;     # as ittTask.nameTruncated
    }
    collectionChange :group {
      # A process's collection paused, resumed or ended (every source obeys it).
      pid @49 :UInt32;
      tid @50 :UInt32;              # the thread that called __itt_pause etc. (0 if none)
      startOffsetNs @51 :UInt64;
      state @52 :CollectionState;   # the state from this time on
      cause @53 :CollectionCause;
    }
    drmFile :group {
      # What an fd of a traced process is, written before its first DRM ioctl.
      pid @54 :UInt32;
      fd @55 :UInt32;
      kind @56 :DrmNodeKind;
      path @57 :UInt32;             # string id; what /proc/PID/fd/FD linked to
      major @58 :UInt32;            # device numbers, 0 for what is not a device
      minor @59 :UInt32;
      driver @60 :UInt32;           # string id; kernel driver of a DRM node (i915, xe, ...)
    }
    drmIoctl :group {
      # ioctl(2) with a DRM command, syscall entry to exit.
      pid @61 :UInt32;
      tid @62 :UInt32;
      startOffsetNs @63 :UInt64;
      durationNs @64 :UInt64;
      fd @65 :UInt32;
      cmd @66 :UInt32;              # command number as passed, size bits included
      result @67 :Int64;            # syscall return: >= 0, or -errno
      name @68 :UInt32;             # string id, e.g. DRM_IOCTL_I915_GEM_EXECBUFFER2
      arg @69 :UInt64;              # argument pointer
      argUnreadable @70 :Bool;      # the argument struct could not be read (NULL, unmapped)
      cause @71 :UInt32;            # string id of the host API call (same thread) it ran
                                    # inside, e.g. zeCommandListAppendLaunchKernel; 0: none
      causeLeadNs @72 :UInt64;      # how long before this ioctl that call started
      args @73 :DrmIoctlArgs;       # decoded argument struct; null: not decoded
    }
    drmFenceSignal :group {
      # A fence created inside a traced DRM ioctl signaled: that GPU work completed.
      pid @74 :UInt32;
      tid @75 :UInt32;              # the thread whose ioctl created the fence
      startOffsetNs @76 :UInt64;    # fence created
      durationNs @77 :UInt64;       # created to signaled
      ioctlLeadNs @78 :UInt64;      # how long before its creation that ioctl started
      context @79 :UInt64;          # dma_fence timeline
      seqno @80 :UInt64;
      source @81 :UInt32;           # string id of the tracepoint that saw the signal
    }
    apiCall :group {
      # Any other recorded Level Zero call. `function` is an enum xt_ze_fn id
      # (include/xtrace/records.h); userspace/model/ze_api.cc names the function and says
      # what arg0..arg5 hold for it (handles, sizes, counts, output handles, timestamps).
      pid @83 :UInt32;
      tid @84 :UInt32;
      startOffsetNs @85 :UInt64;
      durationNs @86 :UInt64;
      function @87 :UInt16;
      result @88 :Int32;            # ze_result_t of the call
      arg0 @89 :UInt64;
      arg1 @90 :UInt64;
      arg2 @91 :UInt64;
      arg3 @92 :UInt64;
      arg4 @93 :UInt64;
      arg5 @94 :UInt64;
      argsUnreadable @95 :Bool;     # a pointer argument could not be read
      truncated @96 :Bool;          # a list argument was longer than the probe copies
      learned @189 :Bool;           # not a call the process made: what xtrace asked the process
                                    # about an object it made before the attach, written as the
                                    # creation it stands for; start and duration are the hold
    }
    deviceOp :group {
      # One kernel or memory operation run on a device, once per execution of its command
      # list. All times are CLOCK_MONOTONIC offsets from Batch.baseNs.
      pid @97 :UInt32;
      device @98 :UInt32;           # device index; 0xffffffff unknown
      queue @99 :UInt64;            # command queue, or immediate command list
      commandList @100 :UInt64;
      id @101 :UInt64;               # unique in the capture
      kind @102 :UInt8;              # 0 kernel, 1 copy, 2 fill, 3 host function
      name @103 :UInt32;             # string id: kernel name or append function
      startOffsetNs @104 :UInt64;
      durationNs @105 :UInt64;
      measured @106 :Bool;           # from kernel timestamps; else host-side bounds
      completionUnseen @107 :Bool;   # no host call saw it complete: the end is a guess
      startTicks @108 :UInt64;       # measured: device ticks, unwrapped
      endTicks @109 :UInt64;
      appendTid @110 :UInt32;
      appendOffsetNs @111 :UInt64;   # the append call's start
      submitTid @112 :UInt32;
      submitOffsetNs @113 :UInt64;   # the submitting call's start
      syncTid @114 :UInt32;
      syncOffsetNs @115 :UInt64;     # end of the call that saw completion (see hasSync)
      hasSync @116 :Bool;
      execution @117 :UInt64;        # regular lists: the n-th execution (from 1)
      kernel @118 :UInt64;
      groupCountX @119 :UInt32;
      groupCountY @120 :UInt32;
      groupCountZ @121 :UInt32;
      bytes @122 :UInt64;
      signalEvent @123 :UInt64;
      track @155 :UInt32;           # the DeviceQueue's track
    }
    deviceQueue :group {
      # A device engine a process submits to, before its first operation.
      pid @124 :UInt32;
      device @125 :UInt32;
      handle @126 :UInt64;
      immediate @127 :Bool;          # an immediate command list
      ordinal @128 :UInt32;
      index @129 :UInt32;
      track @130 :UInt32;            # engines of one device are numbered from 1
      engineUnknown @191 :Bool;      # made before the attach, never described: no ordinal, index
    }
    deviceInfo :group {
      # A device as xtrace's own Level Zero enumerates it.
      device @131 :UInt32;
      name @132 :UInt32;             # string id
      timerHz @133 :UInt64;
      kernelTimestampBits @134 :UInt32;
      queueGroupFlags @188 :List(UInt32);  # per command queue group (ordinal): its
                                           # ze_command_queue_group_property_flags_t
    }
    clockSample :group {
      # zeDeviceGetGlobalTimestamps, by xtrace (pid 0) or a traced process.
      device @135 :UInt32;
      pid @136 :UInt32;
      deviceTicks @137 :UInt64;
      monotonicRawNs @138 :UInt64;   # as Level Zero reports it
      monotonicNs @139 :UInt64;      # the same instant on CLOCK_MONOTONIC
      realtimeNs @156 :UInt64;      # xtrace's readings: and on CLOCK_REALTIME (else 0)
    }
    clockFit :group {
      # The device-to-host mapping: host = refNs + (ticks - refTicks) * 1e9 / hz.
      device @140 :UInt32;
      timeNs @141 :UInt64;           # CLOCK_MONOTONIC when fitted (absolute)
      hz @142 :Float64;
      nominalHz @143 :UInt64;
      refTicks @144 :UInt64;
      refNs @145 :UInt64;            # absolute CLOCK_MONOTONIC
      residualRmsNs @146 :Float64;   # of the samples it was fitted to
      residualMaxNs @147 :Float64;
      samples @148 :UInt32;
    }
    memoryUsage :group {
      # Level Zero memory in use after a change: per device (pid 0) or host memory per process.
      timeOffsetNs @149 :UInt64;
      pid @150 :UInt32;
      device @151 :UInt32;          # 0xffffffff: host memory of `pid`
      deviceBytes @152 :UInt64;
      sharedBytes @153 :UInt64;
      hostBytes @154 :UInt64;
    }
    recordsDropped :group {
      # Records lost between two looks at the capture's counters (model/event.h
      # RecordsDropped): start is the earlier look, end the one that found them.
      startOffsetNs @168 :UInt64;
      durationNs @169 :UInt64;
      levelZero @170 :UInt64;
      itt @171 :UInt64;
      drm @172 :UInt64;
      other @173 :UInt64;           # thread names, process lifecycle
      ittRings @190 :UInt64;        # of `itt`: lost in the traced programs' own ITT rings
                                    # (--itt-ring-size), not the BPF ring buffer; 0 in logs
                                    # written before it was counted
    }
    unfinishedCall :group {
      # A recorded call its thread never returned from (model/ze_events.h UnfinishedCall):
      # the thread exited inside it; the duration runs to that exit.
      pid @174 :UInt32;
      tid @175 :UInt32;
      startOffsetNs @176 :UInt64;
      durationNs @177 :UInt64;
      function @178 :UInt32;        # string id: "zeEventHostSynchronize"
      signal @179 :Int32;           # the signal that killed the thread; 0: it exited
      captureEnded @180 :Bool;      # the thread was still inside the call when the capture
                                    # stopped (end: the stop; signal: 0)
    }
    pythonStack :group {
      # The Python frames of a thread during one of its traced calls (a launch, copy,
      # submission or synchronization: the call of that thread with these times) or at an ITT
      # event (duration 0). model/python_event.h.
      pid @182 :UInt32;
      tid @183 :UInt32;
      startOffsetNs @184 :UInt64;
      durationNs @185 :UInt64;
      frames @186 :List(PythonFrame);  # innermost first
      truncated @187 :Bool;         # deeper than the frames read: the outermost are missing
    }
    xtraceHold :group {
      # A hold xtrace took and released (model/event.h XtraceHold), whatever it learned: the
      # time it stopped thread `tid`, not the program's. The records of what a query hold
      # learned (kernelCreate, apiCall with `learned`) come before it, with its span.
      pid @192 :UInt32;
      tid @193 :UInt32;             # the thread held; for a whole-process hold, the thread
                                    # whose call (exec, dlopen, a table getter) made xtrace hold
      startOffsetNs @194 :UInt64;
      durationNs @195 :UInt64;
      processDurationNs @196 :UInt64;  # every thread of the process was stopped this long from
                                    # the start: durationNs for a whole-process hold; for a
                                    # query hold, until the held thread was seized and the
                                    # rest of the process continued
      cause @197 :HoldCause;
      learned @198 :UInt32;         # objects made before the attach it learned
      failed @199 :UInt32;          # objects it asked about without an answer
    }
  }
}

# One Python frame (Event.pythonStack).
struct PythonFrame {
  file @0 :UInt32;       # string id: co_filename
  function @1 :UInt32;   # string id: co_qualname ("Model.forward")
  line @2 :UInt32;       # the line executing; 0: unknown
}

# Why xtrace held a process or thread (Event.xtraceHold).
enum HoldCause {
  unknown @0;
  attachQueries @1;   # a thread asked about objects made before the attach
  exec @2;            # the process exec'd: held until its new files were probed
  libraryLoad @3;     # its dynamic linker mapped new objects: likewise
  tableGetter @4;     # it took a Level Zero function table (zeGet*ProcAddrTable)
  levelZeroInit @5;   # its zeInit filled the loader's dispatch with the driver's functions
}

enum IttTaskKind {
  task @0;            # __itt_task_begin/end or a PyTorch range: nests on its thread
  overlappedTask @1;  # __itt_task_begin/end_overlapped, paired by id
  region @2;          # __itt_region_begin/end, paired by id
  frame @3;           # __itt_frame_begin_v3/end_v3, paired by id
}

enum IttMarkerScope {
  unknown @0;
  global @1;
  process @2;
  thread @3;
  task @4;
}

enum CollectionState {
  collecting @0;
  paused @1;
  detached @2;        # __itt_detach: nothing more is recorded for the process
}

enum CollectionCause {
  ittCall @0;         # the process called __itt_pause/__itt_resume/__itt_detach
  startPaused @1;     # the capture was started with --start-paused
}

# Decoded argument struct of a DRM ioctl (Event.drmIoctl.args). A struct of its own, not a
# union inside the group: this Cap'n Proto version cannot lay out a union nested in a group of
# a union. Fields the kernel writes back are 0 when the call failed.
struct DrmIoctlArgs {
  union {
    none @0 :Void;
    i915Execbuffer :group {
      flags @1 :UInt64;
      contextId @2 :UInt32;
      engine @3 :UInt32;       # flags & I915_EXEC_RING_MASK
      bufferCount @4 :UInt32;
      batchStartOffset @5 :UInt32;
      batchLen @6 :UInt32;
    }
    i915GemCreate :group {
      size @7 :UInt64;
      handle @8 :UInt32;
      flags @9 :UInt32;
      extended @10 :Bool;       # GEM_CREATE_EXT
    }
    i915MmapOffset :group {
      offset @11 :UInt64;
      flags @12 :UInt64;
      handle @13 :UInt32;
    }
    i915GemWait :group {
      timeoutNs @14 :Int64;
      handle @15 :UInt32;
      flags @16 :UInt32;
    }
    i915ContextCreate :group {
      contextId @17 :UInt32;
      flags @18 :UInt32;
    }
    xeExec :group {
      address @19 :UInt64;
      execQueueId @20 :UInt32;
      numSyncs @21 :UInt32;
      numBatchBuffer @22 :UInt32;
    }
    xeVmBind :group {
      objOffset @23 :UInt64;
      range @24 :UInt64;
      addr @25 :UInt64;
      vmId @26 :UInt32;
      execQueueId @27 :UInt32;
      numBinds @28 :UInt32;
      numSyncs @29 :UInt32;
      op @30 :UInt32;           # the bind below, when numBinds is 1
      obj @31 :UInt32;
      bindFlags @32 :UInt32;
    }
    xeGemCreate :group {
      size @33 :UInt64;
      placement @34 :UInt32;
      flags @35 :UInt32;
      vmId @36 :UInt32;
      handle @37 :UInt32;
      cpuCaching @38 :UInt32;
    }
    xeExecQueueCreate :group {
      width @39 :UInt32;
      numPlacements @40 :UInt32;
      vmId @41 :UInt32;
      flags @42 :UInt32;
      execQueueId @43 :UInt32;
    }
    xeWaitUserFence :group {
      addr @44 :UInt64;
      value @45 :UInt64;
      mask @46 :UInt64;
      timeoutNs @47 :Int64;
      op @48 :UInt32;
      flags @49 :UInt32;
      execQueueId @50 :UInt32;
    }
  }
}

# What a file descriptor was found to be (model/drm_event.h DrmNodeKind).
enum DrmNodeKind {
  unknown @0;    # could not be looked at (closed, or the process was gone)
  notDrm @1;     # not a DRM device
  primary @2;    # /dev/dri/cardN
  render @3;     # /dev/dri/renderDN
  otherDrm @4;   # another DRM minor
}

# Written when the capture ended cleanly; a log without it was cut short.
struct Summary {
  endClock @0 :ClockAnchor;
  events @1 :UInt64;      # events the capture produced (all batches together)
  dropped @2 :UInt64;     # records lost (in the BPF ring buffer or the programs' ITT rings)
  processes @3 :UInt32;   # processes seen
  processStats @4 :List(ProcessStats);
  # Per process that produced events or lost some: what each probe source recorded.
  droppedBySource @5 :List(SourceCount);
  # `dropped` by probe source ("Level Zero", "ITT", "DRM", "other"), those with drops only.
  notes @6 :List(Text);
  # What the capture said once about what it could not trace, as its own summary says it
  # (e.g. "<loader> does not export <entry points> ..."), so that `xtrace report` says it too.
}

# One process's share of a capture, for the summary.
struct ProcessStats {
  pid @0 :UInt32;
  comm @1 :Text;
  eventsBySource @2 :List(SourceCount);  # records per probe source ("Level Zero", ...)
  dropped @3 :UInt64;                    # its records lost (BPF ring or its ITT rings)
}

struct SourceCount {
  source @0 :Text;
  records @1 :UInt64;
}

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
#                     capture killed at any moment leaves every batch before it readable
#   summary           last, only when the capture ended cleanly
# Inspect with:
#   capnp decode --packed userspace/log/xtrace_log.capnp LogFrame < run.capnp

const logMagic :UInt64 = 0x676c656361727478;
# Header.magic: the bytes "xtracelg" read as a little-endian UInt64. Tells an xtrace log from
# any other Cap'n Proto stream, whose first message would read as a header of zeros.

const formatVersion :UInt32 = 1;
# Header.formatVersion written by this schema. History:
#   1  first version.

struct LogFrame {
  union {
    header @0 :Header;
    batch @1 :Batch;
    summary @2 :Summary;
  }
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
      kernel @4 :UInt64;            # ze_kernel_handle_t
      commandList @5 :UInt64;       # ze_command_list_handle_t
      signalEvent @6 :UInt64;       # ze_event_handle_t, 0 if none
      groupCountX @7 :UInt32;
      groupCountY @8 :UInt32;
      groupCountZ @9 :UInt32;
      kernelName @10 :UInt32;       # string id; "kernel@0x<handle>" when not nameKnown
      numWaitEvents @11 :UInt32;
      result @12 :Int32;            # ze_result_t of the call
      nameKnown @13 :Bool = true;   # its zeKernelCreate was seen (default true: the
                                    # usual case then costs no byte in packed encoding)
      groupCountUnreadable @14 :Bool;  # the target's group-count struct could not be read
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
    }
    processInfo :group {
      # A traced process, when first seen and again if its name changes.
      pid @24 :UInt32;              # in the init pid namespace
      nsPid @25 :UInt32;            # in the process's own pid namespace
      comm @26 :UInt32;             # string id
      commandLine @27 :UInt32;      # string id; arguments joined with spaces
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
    }
    ittMarker :group {
      # __itt_marker or a PyTorch itt_mark: a point in time.
      pid @43 :UInt32;
      tid @44 :UInt32;
      startOffsetNs @45 :UInt64;
      domain @46 :UInt32;           # string id
      name @47 :UInt32;             # string id
      scope @48 :IttMarkerScope;
    }
    collectionChange :group {
      # A process's collection paused, resumed or ended (every source obeys it).
      pid @49 :UInt32;
      tid @50 :UInt32;              # the thread that called __itt_pause etc. (0 if none)
      startOffsetNs @51 :UInt64;
      state @52 :CollectionState;   # the state from this time on
      cause @53 :CollectionCause;
    }
  }
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

# Written when the capture ended cleanly; a log without it was cut short.
struct Summary {
  endClock @0 :ClockAnchor;
  events @1 :UInt64;      # events the capture produced (all batches together)
  dropped @2 :UInt64;     # records lost in the BPF ring buffer
  processes @3 :UInt32;   # processes seen
}

# The control protocol of `xtrace daemon`, spoken over its Unix socket with Cap'n Proto RPC
# (two-party, the daemon is the server): `xtrace ctl` calls these methods on the bootstrap
# capability. Ordinals are append-only, as in the log schema.
@0xbe986c41760c2a14;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("xtrace::control_schema");

# What to capture; the fields mean what the capture options of `xtrace attach` mean (every
# CaptureOptions field the CLI's capture option table sets has a field here). Zero values are
# the capture's defaults.
struct CaptureRequest {
  system @0 :Bool;
  pids @1 :List(UInt32);
  comm @2 :Text;
  cgroup @3 :Text;
  container @4 :Text;
  followChildren @5 :FollowChildren;
  durationNs @6 :UInt64;     # 0: until stopped
  bufferBytes @7 :UInt64;    # BPF ring buffer; 0: the default
  detachAfterNs @8 :UInt64;  # probe grace period on unused libraries; 0: the default
  probesPerProcess @9 :Bool; # --probes-per-process: the default, asked for by name
  startPaused @10 :Bool;     # nothing recorded until a process calls __itt_resume
  drm @11 :DrmCapture;
  singleUprobes @12 :Bool;   # never uprobe_multi
  drmSyscallTracepoints @13 :Bool;  # drmHook = syscallTracepoints, as first spelled; still read
  verbose @14 :Bool;         # more detail on the daemon's stderr
  noHold @15 :Bool;          # never hold a process at its start or a library load
  holdMaxNs @16 :UInt64;     # the longest a process is held; 0: the default
  outputDir @17 :Text;       # absolute; written as the requesting user. "": the daemon's own
  user @18 :Text;            # only this user's processes; the daemon sets it for other users
  slurmJob @19 :Text;        # the processes of this Slurm job on the daemon's node
  noQuery @20 :Bool;         # never ask a process about objects made before the attach
  pythonFrames @21 :PythonFrames;  # --python-frames, --no-python-frames
  slurmNode @22 :Text;       # ... started by slurmd as this node (several slurmd on one host)
  driverTables @23 :Bool;    # also probe the driver functions the loader's exports lead to
  slurmCluster @24 :Text;    # ... of this cluster (SLURM_CLUSTER_NAME): job ids repeat across clusters
  queryMaxNs @25 :UInt64;    # the longest one query hold asks; 0: the default
  probesPerFile @26 :Bool;   # uprobes once per library file, for every process that maps it
  ittRingBytes @27 :UInt32;  # --itt-ring-size; 0: the default
  drmHook @28 :DrmHook;      # --drm-hook
  niceGiven @29 :Bool;       # --nice was given: the capture threads take `nice`
  nice @30 :Int8;
  holdTerminalJobs @31 :Bool;  # also hold programs a terminal's shell runs as jobs

  enum DrmHook {
    auto @0;
    fentry @1;
    ioctlTracepoints @2;
    syscallTracepoints @3;
  }

  enum PythonFrames {
    default @0;    # off
    yes @1;
    no @2;
  }

  enum FollowChildren {
    default @0;
    yes @1;
    no @2;
  }

  enum DrmCapture {
    alongside @0;  # with every other source
    off @1;        # --no-drm
    only @2;       # --drm-only
  }
}

struct SourceCount {
  source @0 :Text;
  records @1 :UInt64;
}

struct ProcessStats {
  pid @0 :UInt32;
  comm @1 :Text;
  recordsBySource @2 :List(SourceCount);
  dropped @3 :UInt64;
}

struct CaptureStatus {
  capturing @0 :Bool;
  request @1 :CaptureRequest;         # of the running (or last) capture
  describe @2 :Text;                  # "every process in cgroup /x", as the capture says it
  startedRealtimeNs @3 :UInt64;
  currentFile @4 :Text;               # being written (ends in .part), or the last one
  filesFinished @5 :UInt32;
  events @6 :UInt64;
  dropped @7 :UInt64;
  processesTracked @8 :UInt32;        # followed now
  processesTraced @9 :UInt32;         # with probes or records so far
  links @10 :UInt64;                  # BPF links held now
  filterEntries @11 :UInt32;          # entries in the BPF process filter now
  perProcess @12 :List(ProcessStats);
  lastResult @13 :Text;               # how the last capture ended: its summary, or the error
  outputDir @14 :Text;
  ownerUid @15 :UInt32;               # who asked for the running (or last) capture
}

struct CaptureFile {
  name @0 :Text;
  bytes @1 :UInt64;
  complete @2 :Bool;                  # false for the file being written (*.capnp.part)
  modifiedRealtimeNs @3 :UInt64;
}

interface Control {
  start @0 (request :CaptureRequest) -> (status :CaptureStatus);
  # Starts a capture; fails if one is running or the request is invalid.
  stop @1 () -> (status :CaptureStatus);
  # Stops the running capture and waits until its last file is finished.
  status @2 () -> (status :CaptureStatus);
  list @3 () -> (files :List(CaptureFile));
  # Capture files in the output directory, oldest first.
}

// Control protocol <-> capture types.
#include "daemon/control_codec.h"

namespace xtrace::control_codec {
namespace {

// A field is read as the C string it stands for (names, paths, ids: none holds a NUL byte),
// so a NUL smuggled into a message cuts the text there, as encoding it back would.
std::string ToString(capnp::Text::Reader text) { return std::string(text.cStr()); }

}  // namespace

void EncodeRequest(const CaptureOptions& r, control_schema::CaptureRequest::Builder out) {
  out.setSystem(r.system);
  auto pids = out.initPids(static_cast<unsigned>(r.pids.size()));
  for (unsigned i = 0; i < pids.size(); ++i) pids.set(i, r.pids[i]);
  out.setComm(r.comm);
  out.setCgroup(r.cgroup);
  out.setContainer(r.container);
  using Follow = control_schema::CaptureRequest::FollowChildren;
  out.setFollowChildren(!r.follow_children ? Follow::DEFAULT
                                           : *r.follow_children ? Follow::YES : Follow::NO);
  out.setDurationNs(r.duration_ns.value_or(0));
  out.setBufferBytes(r.ring_bytes);
  out.setIttRingBytes(r.itt_ring_bytes);
  out.setDetachAfterNs(r.library_grace_ns);
  out.setProbesPerProcess(r.probes_per_process);
  out.setProbesPerFile(r.probes_per_file);
  out.setStartPaused(r.start_paused);
  using Drm = control_schema::CaptureRequest::DrmCapture;
  out.setDrm(r.drm == DrmCapture::kOff ? Drm::OFF
             : r.drm == DrmCapture::kOnly ? Drm::ONLY : Drm::ALONGSIDE);
  out.setSingleUprobes(r.single_uprobes);
  using Hook = control_schema::CaptureRequest::DrmHook;
  out.setDrmHook(r.drm_hook == DrmHook::kFentry               ? Hook::FENTRY
                 : r.drm_hook == DrmHook::kIoctlTracepoints   ? Hook::IOCTL_TRACEPOINTS
                 : r.drm_hook == DrmHook::kSyscallTracepoints ? Hook::SYSCALL_TRACEPOINTS
                                                              : Hook::AUTO);
  out.setDrmSyscallTracepoints(r.drm_hook == DrmHook::kSyscallTracepoints);
  out.setNiceGiven(r.nice.has_value());
  out.setNice(static_cast<int8_t>(r.nice.value_or(0)));
  out.setVerbose(r.verbose);
  out.setNoHold(!r.hold);
  out.setHoldTerminalJobs(r.hold_terminal_jobs);
  out.setHoldMaxNs(r.hold_max_ns);
  out.setQueryMaxNs(r.query_max_ns);
  out.setOutputDir(r.output_dir);
  out.setUser(r.user);
  out.setSlurmJob(r.slurm_job);
  out.setNoQuery(!r.query);
  using Python = control_schema::CaptureRequest::PythonFrames;
  out.setPythonFrames(!r.python_frames ? Python::DEFAULT
                                       : *r.python_frames ? Python::YES : Python::NO);
  out.setSlurmNode(r.slurm_node);
  out.setDriverTables(r.driver_tables);
  out.setSlurmCluster(r.slurm_cluster);
}

CaptureOptions DecodeRequest(control_schema::CaptureRequest::Reader in) {
  CaptureOptions r;
  r.system = in.getSystem();
  for (uint32_t pid : in.getPids()) r.pids.push_back(pid);
  r.comm = ToString(in.getComm());
  r.cgroup = ToString(in.getCgroup());
  r.container = ToString(in.getContainer());
  using Follow = control_schema::CaptureRequest::FollowChildren;
  if (in.getFollowChildren() == Follow::YES) r.follow_children = true;
  if (in.getFollowChildren() == Follow::NO) r.follow_children = false;
  if (in.getDurationNs()) r.duration_ns = in.getDurationNs();
  if (in.getBufferBytes()) r.ring_bytes = in.getBufferBytes();
  if (in.getIttRingBytes()) r.itt_ring_bytes = in.getIttRingBytes();
  if (in.getDetachAfterNs()) r.library_grace_ns = in.getDetachAfterNs();
  r.probes_per_process = in.getProbesPerProcess();
  r.probes_per_file = in.getProbesPerFile();
  r.start_paused = in.getStartPaused();
  using Drm = control_schema::CaptureRequest::DrmCapture;
  if (in.getDrm() == Drm::OFF) r.drm = DrmCapture::kOff;
  if (in.getDrm() == Drm::ONLY) r.drm = DrmCapture::kOnly;
  r.single_uprobes = in.getSingleUprobes();
  using Hook = control_schema::CaptureRequest::DrmHook;
  switch (in.getDrmHook()) {
    case Hook::FENTRY: r.drm_hook = DrmHook::kFentry; break;
    case Hook::IOCTL_TRACEPOINTS: r.drm_hook = DrmHook::kIoctlTracepoints; break;
    case Hook::SYSCALL_TRACEPOINTS: r.drm_hook = DrmHook::kSyscallTracepoints; break;
    default:  // auto, or a hook this build does not know
      if (in.getDrmSyscallTracepoints()) r.drm_hook = DrmHook::kSyscallTracepoints;
  }
  if (in.getNiceGiven()) r.nice = in.getNice();
  r.verbose = in.getVerbose();
  r.hold = !in.getNoHold();
  r.hold_terminal_jobs = in.getHoldTerminalJobs();
  if (in.getHoldMaxNs()) r.hold_max_ns = in.getHoldMaxNs();
  if (in.getQueryMaxNs()) r.query_max_ns = in.getQueryMaxNs();
  r.output_dir = ToString(in.getOutputDir());
  r.user = ToString(in.getUser());
  r.slurm_job = ToString(in.getSlurmJob());
  r.query = !in.getNoQuery();
  r.driver_tables = in.getDriverTables();
  using Python = control_schema::CaptureRequest::PythonFrames;
  if (in.getPythonFrames() == Python::YES) r.python_frames = true;
  if (in.getPythonFrames() == Python::NO) r.python_frames = false;
  r.slurm_node = ToString(in.getSlurmNode());
  r.slurm_cluster = ToString(in.getSlurmCluster());
  return r;
}

void EncodeStatus(const ControllerStatus& s, const std::string& output_dir,
                  control_schema::CaptureStatus::Builder out) {
  out.setCapturing(s.capturing);
  EncodeRequest(s.request, out.initRequest());
  out.setDescribe(s.describe);
  out.setStartedRealtimeNs(s.started_realtime_ns);
  const CaptureProgress& p = s.progress;
  out.setCurrentFile(p.current_file);
  out.setFilesFinished(p.files_finished);
  out.setEvents(p.events);
  out.setDropped(p.dropped);
  out.setProcessesTracked(p.processes_tracked);
  out.setProcessesTraced(p.processes_traced);
  out.setLinks(p.links);
  out.setFilterEntries(p.traced_pid_entries);
  auto procs = out.initPerProcess(static_cast<unsigned>(p.per_process.size()));
  for (unsigned i = 0; i < procs.size(); ++i) {
    const ProcessCaptureStats& ps = p.per_process[i];
    procs[i].setPid(ps.pid);
    procs[i].setComm(ps.comm);
    procs[i].setDropped(ps.dropped);
    auto by = procs[i].initRecordsBySource(static_cast<unsigned>(ps.records_by_source.size()));
    for (unsigned j = 0; j < by.size(); ++j) {
      by[j].setSource(ps.records_by_source[j].first);
      by[j].setRecords(ps.records_by_source[j].second);
    }
  }
  out.setLastResult(s.last_result);
  out.setOutputDir(s.request.output_dir.empty() ? output_dir : s.request.output_dir);
  out.setOwnerUid(s.owner_uid);
}

void EncodeFiles(const std::vector<CaptureFileInfo>& files,
                 capnp::List<control_schema::CaptureFile>::Builder out) {
  for (unsigned i = 0; i < out.size(); ++i) {
    out[i].setName(files[i].name);
    out[i].setBytes(files[i].bytes);
    out[i].setComplete(files[i].complete);
    out[i].setModifiedRealtimeNs(files[i].modified_realtime_ns);
  }
}

}  // namespace xtrace::control_codec

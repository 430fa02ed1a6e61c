// Loading the Level Zero BPF programs and attaching them to loader libraries.
#include "capture/sources/ze_source.h"

#include "capture/discovery/library_resolver.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <map>
#include <set>
#include <string_view>

#include "base/read_file.h"
#include "capture/capture_options.h"
#include "capture/sources/dispatch_targets.h"
#include "capture/sources/driver_functions.h"
#include "capture/discovery/elf_function_offsets.h"
#include "capture/discovery/elf_symbols.h"
#include "capture/holds/hold_guardian.h"
#include "capture/holds/process_holds.h"
#include "capture/sources/probe_site.h"
#include "capture/sources/ze_probe_specs.h"
#include "capture/sources/ze_query.h"
#include "correlate/correlator.h"
#include "capture/bpf/uprobe_multi.h"
#include "model/ze_api.h"
#include "xtrace/hold.h"
#include "xtrace/ze_tables.h"
#include "ze_probes.skel.h"

namespace xtrace {
namespace {

constexpr std::string_view kLoaderPrefix = "libze_loader.so";
// Level Zero drivers the loader loads: Intel's GPU and NPU drivers (libze_intel_gpu.so.1,
// libze_intel_vpu.so.1), the loader's null driver (libze_null.so) all start "libze_" (as do
// the loader's layers, which are no drivers); xtrace's simulated GPU is libxtrace_simze.so.
constexpr std::string_view kDriverPrefix = "libze_";
constexpr std::string_view kSimulatedDriverPrefix = "libxtrace_simze.so";
constexpr std::string_view kLayerPrefixes[] = {"libze_tracing_layer.so", "libze_validation_layer.so"};
constexpr const char* kLoaderSoname = "libze_loader.so.1";
// Bytes of a function read to recognise a dispatch stub (they are 24-30 bytes to the `je`).
constexpr size_t kStubBytes = 48;
// Bytes of a stub followed to its dispatch target (trixie's loader's reach their `je` at 42,
// or at 78 where they first save registers and load stack arguments).
constexpr size_t kDispatchStubBytes = 128;

// Where each probed function of `path` gets its probes: its file offset, and how far into it
// (past a stub's single-stepped instructions, see probe_site.h).
struct ProbeSite {
  uint64_t file_offset = 0;
  uint32_t into_function = 0;
  uint64_t cookie = 0;  // the spec's cookie, plus where the site needs an argument read from
};

using ProbeSites = std::map<std::string, ProbeSite, std::less<>>;

std::string_view BaseName(const std::string& path) {
  return std::string_view(path).substr(path.rfind('/') + 1);
}

bool IsLoader(const MappedLibrary& lib) { return ZeSource::IsLoaderPath(lib.path); }

bool IsDriver(const MappedLibrary& lib) { return ZeSource::IsDriverPath(lib.path); }

// Whether `spec` is probed in `lib` (a loader or a driver file).
bool ProbedIn(const ProbeSpec& spec, const MappedLibrary& lib) {
  return IsLoader(lib) ? spec.in_loader : spec.in_driver;
}

// `handed_out`: where the driver file at `path` keeps the functions it hands out by pointer
// (driver_functions.h), which are probed there rather than at the exports of those names.
Result<ProbeSites> FindProbeSites(const std::string& path,
                                  const DriverFunctions::Offsets* handed_out = nullptr) {
  std::vector<std::string_view> symbols;
  for (const ProbeSpec& spec : ZeProbeSpecs()) symbols.push_back(spec.symbol);
  auto offsets = FindFunctionOffsets(path, symbols);
  if (!offsets.ok()) return offsets.status();
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ProbeSites sites;
  for (const ProbeSpec& spec : ZeProbeSpecs()) {
    auto it = offsets->find(spec.symbol);
    if (it == offsets->end()) continue;
    ProbeSite site{it->second, 0, spec.cookie};
    uint8_t code[kStubBytes];
    const ssize_t n =
        fd.valid() ? ::pread(fd.get(), code, sizeof(code), static_cast<off_t>(site.file_offset)) : -1;
    const std::span<const uint8_t> bytes(code, n > 0 ? static_cast<size_t>(n) : 0);
    if (auto at = FindEmulatedProbeSite(bytes, spec.needed, spec.readable_from_r10)) {
      site.into_function = at->offset;
      if (at->argument_in_r10 >= 0)
        site.cookie |= XT_ZE_COOKIE_WITH_R10_ARG(static_cast<uint64_t>(at->argument_in_r10));
    }
    sites.emplace(spec.symbol, site);
  }
  if (handed_out)
    for (const ProbeSpec& spec : ZeProbeSpecs())
      if (auto it = handed_out->find(spec.symbol); spec.in_driver && it != handed_out->end())
        sites.insert_or_assign(spec.symbol, ProbeSite{it->second, 0, spec.cookie});
  return sites;
}

// Where the table getters of the loader or driver file at `path` are probed (their entries)
// and each one's cookie: a loader's code around it, a driver's none (xtrace/ze_tables.h).
Result<std::map<uint64_t, uint64_t>> FindTableGetterSites(const std::string& path, bool loader) {
  auto offsets = FindFunctionOffsets(path, ZeTableGetters());
  if (!offsets.ok()) return offsets.status();
  auto segments = ExecutableSegments(path);
  if (!segments.ok()) return segments.status();
  std::map<uint64_t, uint64_t> sites;
  for (const auto& [name, offset] : *offsets)
    for (const FileRange& code : *segments)
      if (code.Holds(offset))
        sites.emplace(offset, loader ? XT_ZE_TABLE_COOKIE(offset - code.offset,
                                                          code.offset + code.size - offset)
                                     : XT_ZE_TABLE_COOKIE(0, 0));
  return sites;
}

// How a message names where probes go: one process, or every process that maps the file.
std::string Who(int pid) { return pid < 0 ? "every process" : "pid " + std::to_string(pid); }

// With --verbose: how many probes sit on emulated instructions.
void ReportSites(const SourceContext& ctx, int pid, const MappedLibrary& lib,
                 const ProbeSites& sites) {
  if (!ctx.options.verbose) return;
  size_t emulated = 0;
  for (const auto& [symbol, site] : sites) emulated += site.into_function ? 1 : 0;
  ctx.say(Who(pid) + ": " + lib.path + ": " + std::to_string(emulated) +
          " of " + std::to_string(sites.size()) +
          " functions probed past their single-stepped first instructions");
}

}  // namespace

bool ZeSource::IsLoaderPath(std::string_view path) {
  return BaseName(std::string(path)).starts_with(kLoaderPrefix);
}

bool ZeSource::IsLevelZerosOwnPath(std::string_view path) {
  const std::string_view base = path.substr(path.rfind('/') + 1);
  if (base.starts_with(kLoaderPrefix)) return true;
  for (std::string_view layer : kLayerPrefixes)
    if (base.starts_with(layer)) return true;
  return false;
}

bool ZeSource::IsDriverPath(std::string_view path) {
  const std::string_view base = path.substr(path.rfind('/') + 1);
  if (base.starts_with(kSimulatedDriverPrefix)) return true;
  if (!base.starts_with(kDriverPrefix) || base.starts_with(kLoaderPrefix)) return false;
  for (std::string_view layer : kLayerPrefixes)
    if (base.starts_with(layer)) return false;
  return true;
}

void ZeSource::SkeletonDeleter::operator()(::ze_probes* skel) const { ze_probes__destroy(skel); }

// The capture destroys every link it got from AttachToLibrary before it destroys sources.
ZeSource::~ZeSource() = default;

Status ZeSource::LoadPrograms(bool multi) {
  skel_.reset(ze_probes__open());
  if (!skel_) return Status::Error("opening Level Zero BPF object: " + BpfErrorText(errno));
  auto* skel = skel_.get();
  // Probes attached to a loader file fire in every process that maps it: the filter (and the
  // capture scope) decides whose calls are recorded.
  skel->rodata->filter_by_pid = 1;
  skel->rodata->wakeup_bytes = ctx_.maps.wakeup_bytes();
  if (Status st = ctx_.maps.Share(skel->obj); !st.ok()) return st;
  if (multi) {
    bpf_program* prog;
    bpf_object__for_each_program(prog, skel->obj) PrepareUprobeMulti(prog);
  }
  if (int err = ze_probes__load(skel)) {
    skel_.reset();
    return Status::Error("loading Level Zero BPF programs: " + BpfErrorText(err));
  }
  multi_ = multi;
  return Status::Ok();
}

Result<std::unique_ptr<ProbeSource>> ZeSource::Load(const SourceContext& ctx) {
  std::unique_ptr<ZeSource> self(new ZeSource(ctx));
  if (ctx.options.single_uprobes) {
    if (Status single = self->LoadPrograms(false); !single.ok()) return single;
  } else if (Status multi = self->LoadPrograms(true); !multi.ok()) {
    // Kernels before 6.6 know no uprobe_multi programs: probe each function on its own.
    if (ctx.options.verbose) ctx.say(multi.message() + " as uprobe_multi; using single uprobes");
    if (Status single = self->LoadPrograms(false); !single.ok()) return single;
  }
  return std::unique_ptr<ProbeSource>(std::move(self));
}

bool ZeSource::ProbesLibrary(const MappedLibrary& lib) { return IsLoader(lib) || IsDriver(lib); }

std::vector<std::string_view> ZeSource::DriverFunctionNames() {
  std::vector<std::string_view> names;
  for (const ProbeSpec& spec : ZeProbeSpecs())
    if (spec.in_driver) names.push_back(spec.symbol);
  return names;
}

const DriverFunctions::Offsets* ZeSource::HandedOutIn(const MappedLibrary& lib) {
  if (IsLoader(lib) || !begun_) return nullptr;
  auto id = ElfBuildId(lib.host_path);
  const DriverFunctions::Offsets* found = id.ok() ? driver_functions_.Of(*id) : nullptr;
  // Without them the driver's exports of those names are probed, which a call through the
  // pointer passes only where the driver hands out its exports themselves: said once a file.
  if (!found && said_by_name_.insert({lib.dev_major, lib.dev_minor, lib.inode}).second) {
    const std::vector<std::string_view> names = DriverFunctionNames();
    auto exported = ElfExports(lib.host_path, names);
    const std::string why =
        driver_functions_.empty()
            ? "xtrace's own Level Zero has no driver to ask where it keeps"
            : "not the driver build xtrace's own Level Zero loaded" +
                  (id.ok() && !id->empty() ? " (build id " + *id + ")" : std::string()) +
                  ", so nothing says where it keeps";
    if (exported.ok() && std::find(exported->begin(), exported->end(), true) != exported->end())
      ctx_.say(lib.path + ": " + why +
               " the functions it hands out by pointer; they are probed at its exports of the "
               "same names, and a call through such a pointer that does not pass them is not "
               "traced");
  }
  return found;
}

bool ZeSource::NamesAttachment(const MappedLibrary& lib) const { return IsLoader(lib); }

std::vector<MappedLibrary> ZeSource::LibrariesBeforeExec(uint32_t) {
  auto lib = ResolveLibraryForExec(kLoaderSoname);
  if (!lib) {
    ctx_.say(std::string("no ") + kLoaderSoname +
             " found on the library path; watching the command for one it loads itself");
    return {};
  }
  return {*lib};
}

std::string_view ZeSource::host_soname() const { return kLoaderSoname; }

Result<std::vector<ProbeLink>> ZeSource::AttachToLibrary(const MappedLibrary& lib, int pid) {
  std::vector<ProbeLink> links;
  std::string first_error;
  const size_t attached = multi_ ? AttachMulti(pid, lib, &first_error, &links)
                                 : AttachEach(pid, lib, &first_error, &links);
  // A driver's getters are probed with --driver-tables too: an application that initialises
  // the driver through them passes no loader dispatch, which that option follows.
  if (IsLoader(lib) ? attached > 0 && !ctx_.options.driver_tables : true)
    AttachTableGetters(pid, lib, &links);
  // A driver that exports none of the functions handed out by pointer has nothing to probe.
  if (attached == 0 && !IsLoader(lib) && first_error.empty()) return links;
  if (attached == 0)
    return Status::Error("no Level Zero probe could be attached to " + lib.path + " (" +
                         first_error + ")");
  return links;
}

void ZeSource::AttachTableGetters(int pid, const MappedLibrary& lib,
                                  std::vector<ProbeLink>* links) {
  auto sites = FindTableGetterSites(lib.host_path, IsLoader(lib));
  std::string error = sites.ok() ? "" : sites.status().message();
  if (sites.ok() && multi_) {
    std::vector<uint64_t> offsets, cookies;
    for (const auto& [offset, cookie] : *sites) {
      offsets.push_back(offset);
      cookies.push_back(cookie);
    }
    if (!offsets.empty()) {
      auto link = AttachUprobeMulti(skel_->progs.ze_table_getter_entry, pid < 0 ? 0 : pid,
                                    lib.host_path, offsets, cookies, false);
      if (link.ok()) links->emplace_back(std::move(*link));
      else error = link.status().message();
    }
  } else if (sites.ok()) {
    for (const auto& [offset, cookie] : *sites) {
      auto link = AttachUprobeAt(skel_->progs.ze_table_getter_entry, pid, lib.host_path, offset,
                                 false, cookie);
      if (link.ok()) links->emplace_back(std::move(*link));
      else if (error.empty()) error = link.status().message();
    }
  }
  if (!error.empty())
    ctx_.say(Who(pid) + ": " + lib.path + ": cannot probe zeGet*ProcAddrTable (" + error +
             "); calls through function tables an application takes are not traced (" +
             "--driver-tables traces them)");
}

size_t ZeSource::AttachMulti(int pid, const MappedLibrary& lib, std::string* first_error,
                             std::vector<ProbeLink>* links) {
  auto offsets = FindProbeSites(lib.host_path, HandedOutIn(lib));
  if (!offsets.ok()) {
    *first_error = offsets.status().message();
    return 0;
  }
  ReportSites(ctx_, pid, lib, *offsets);
  // One link per program and direction, holding every function that program serves.
  struct Group {
    std::vector<uint64_t> offsets, cookies;
    std::vector<const char*> symbols;
  };
  std::map<std::pair<bpf_program*, bool>, Group> groups;
  std::vector<const ProbeSpec*> missing;
  size_t probed = 0;
  for (const ProbeSpec& spec : ZeProbeSpecs()) {
    if (!ProbedIn(spec, lib)) continue;
    auto it = offsets->find(spec.symbol);
    if (it == offsets->end()) {
      missing.push_back(&spec);
      continue;
    }
    ++probed;
    for (bool ret : {false, true}) {
      Group& g = groups[{ret ? spec.ret(skel_.get()) : spec.entry(skel_.get()), ret}];
      g.offsets.push_back(it->second.file_offset + it->second.into_function);
      g.cookies.push_back(it->second.cookie);
      g.symbols.push_back(spec.symbol);
    }
  }
  SayMissing(lib, missing);
  std::set<std::string_view> failed;
  for (auto& [key, g] : groups) {
    // uprobe_multi names "every process" pid 0.
    auto link = AttachUprobeMulti(key.first, pid < 0 ? 0 : pid, lib.host_path, g.offsets,
                                  g.cookies, key.second);
    if (!link.ok()) {
      if (first_error->empty()) *first_error = link.status().message();
      failed.insert(g.symbols.begin(), g.symbols.end());
      continue;
    }
    links->emplace_back(std::move(*link));
  }
  // Each function has an entry and a return program: `failed` names it once.
  if (!failed.empty() && failed.size() < probed)
    ctx_.say(Who(pid) + ": " + lib.path + ": cannot probe " +
             std::to_string(failed.size()) + " functions (" + *first_error + "); not traced");
  return probed - std::min(probed, failed.size());
}

size_t ZeSource::AttachEach(int pid, const MappedLibrary& lib, std::string* first_error,
                            std::vector<ProbeLink>* links) {
  // Without the file's symbols every probe goes at its function's entry (libbpf finds them).
  auto sites = FindProbeSites(lib.host_path, HandedOutIn(lib));
  if (sites.ok()) ReportSites(ctx_, pid, lib, *sites);
  size_t attached = 0;
  std::vector<const ProbeSpec*> missing;
  for (const ProbeSpec& spec : ZeProbeSpecs()) {
    if (!ProbedIn(spec, lib)) continue;
    // Without the file's symbols libbpf finds each function itself (and fails for those it
    // lacks, said below as for any failed probe).
    if (sites.ok() && !sites->count(spec.symbol)) {
      missing.push_back(&spec);
      continue;
    }
    // At the site found (a handed-out function need not be named), else by name.
    const ProbeSite* site = nullptr;
    if (sites.ok())
      if (auto it = sites->find(spec.symbol); it != sites->end()) site = &it->second;
    auto attach = [&](bpf_program* prog, bool ret) {
      return site ? AttachUprobeAt(prog, pid, lib.host_path,
                                   site->file_offset + site->into_function, ret, site->cookie)
                  : AttachUprobe(prog, pid, lib.host_path, spec.symbol, ret, spec.cookie);
    };
    auto entry = attach(spec.entry(skel_.get()), false);
    auto ret = entry.ok() ? attach(spec.ret(skel_.get()), true) : Result<BpfLink>(entry.status());
    if (!entry.ok() || !ret.ok()) {
      const Status& why = entry.ok() ? ret.status() : entry.status();
      if (first_error->empty()) *first_error = why.message();
      ctx_.say(Who(pid) + ": " + lib.path + ": cannot probe " + why.message() +
               "; that call is not traced");
      continue;
    }
    links->emplace_back(std::move(*entry));
    links->emplace_back(std::move(*ret));
    ++attached;
  }
  SayMissing(lib, missing);
  return attached;
}

const std::vector<ZeSource::LoaderStub>& ZeSource::StubsOf(uint32_t pid, const FileKey& key,
                                                           const MappedLibrary& lib) {
  auto it = loader_stubs_.find(key);
  if (it != loader_stubs_.end()) return it->second;
  std::vector<LoaderStub>& stubs = loader_stubs_[key];
  UniqueFd held = OpenMappedFile(pid, lib);
  if (!held.valid()) {
    loader_stubs_.erase(key);  // gone: ask again when another process maps it
    static const std::vector<LoaderStub> kNone;
    return kNone;
  }
  const std::string path = "/proc/self/fd/" + std::to_string(held.get());
  std::vector<std::string_view> symbols;
  for (const ProbeSpec& spec : ZeProbeSpecs())
    if (spec.in_loader) symbols.push_back(spec.symbol);
  auto offsets = FindFunctionOffsets(path, symbols);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!offsets.ok() || !fd.valid()) return stubs;
  const std::vector<ProbeSpec>& probes = ZeProbeSpecs();
  for (size_t i = 0; i < probes.size(); ++i) {
    if (!probes[i].in_loader) continue;
    auto at = offsets->find(probes[i].symbol);
    if (at == offsets->end()) continue;
    LoaderStub stub{i, at->second, std::vector<uint8_t>(kDispatchStubBytes)};
    const ssize_t n = ::pread(fd.get(), stub.code.data(), stub.code.size(),
                              static_cast<off_t>(stub.file_offset));
    if (n <= 0) continue;
    stub.code.resize(static_cast<size_t>(n));
    stubs.push_back(std::move(stub));
  }
  return stubs;
}

bool ZeSource::TookTables(uint32_t pid) const {
  uint8_t took = 0;
  return bpf_map_lookup_elem(bpf_map__fd(skel_->maps.table_takers), &pid, &took) == 0;
}

void ZeSource::ProcessScanned(uint32_t pid, bool per_process) {
  // By default only a process seen taking a table (ze_table_getter_entry) has the functions
  // they hold probed, for itself alone: every other process keeps one trap per call. A
  // process first seen with its dispatch filled may have taken tables before: it is looked
  // at once, in its memory (ze_taken_tables.cc).
  const bool always = ctx_.options.driver_tables;
  const bool marked = TookTables(pid);  // from a loader's getters or a driver's
  bool took = !always && marked;
  const bool first_look = !marked && looked_at_.insert(pid).second;
  if (!always && !took && !first_look) return;
  const auto text = ReadWholeFile("/proc/" + std::to_string(pid) + "/maps");
  if (!text) return;
  const std::vector<MappedSegment> segments = ParseMappedSegments(*text);
  const ReadWord read = ProcessMemoryReader(pid);
  // Per file the targets are in: a segment of it (to open it by) and offset -> spec.
  DispatchTargets targets;
  std::set<FileKey> loaders;
  // Where each loader's stubs load their pointers from: its own dispatch table's slots.
  std::vector<std::vector<std::pair<uint64_t, std::string_view>>> slots;
  for (const MappedSegment& s : segments) {
    if (!s.executable || !BaseName(s.path).starts_with(kLoaderPrefix)) continue;
    const FileKey key{s.dev_major, s.dev_minor, s.inode};
    if (!loaders.insert(key).second) continue;
    const MappedLibrary lib = LibraryOf(s);
    slots.emplace_back();
    for (const LoaderStub& stub : StubsOf(pid, key, lib)) {
      // Where the stub is in the process: the executable mapping of this file that holds it.
      const MappedSegment* in = nullptr;
      for (const MappedSegment& m : segments)
        if (m.executable && m.inode == s.inode && m.dev_major == s.dev_major &&
            m.dev_minor == s.dev_minor && stub.file_offset >= m.file_offset &&
            stub.file_offset < m.file_offset + (m.end - m.start))
          in = &m;
      if (!in) continue;
      uint64_t slot = 0;
      const auto target = FollowDispatchStub(
          stub.code, in->start + (stub.file_offset - in->file_offset), read, &slot);
      if (!target) continue;  // not initialised yet, or nothing there
      const MappedSegment* to = SegmentAt(segments, *target);
      if (!to) continue;
      slots.back().emplace_back(slot, ZeProbeSpecs()[stub.spec].symbol);
      auto& file = targets[FileKey{to->dev_major, to->dev_minor, to->inode}];
      file.first = to;
      file.second.emplace(*target - to->start + to->file_offset, stub.spec);
    }
  }
  if (targets.empty()) {
    ScanDriversWithoutLoader(pid, segments, *text, marked, first_look);
    return;
  }
  // Where the dispatch points into a layer (the tracing layer, the validation layer), the
  // driver's functions behind it are probed in its place, where xtrace's own Level Zero found
  // them: tables taken may hold the driver's functions rather than the layer's (trixie's
  // 1.20.6 hands out the driver's once zelEnableTracingLayer turned the layer on at run time),
  // and a call through either reaches them. Without them, the layer's functions are.
  BehindTheLayers(pid, segments, &targets);
  if (!always && !took) {
    // The loaders', their layers' and the targets' own: trixie's tracing layer keeps a whole
    // copy of the dispatch in its data, which with the loader's own on its heap passed for a
    // table taken in every process.
    std::set<std::string> files;
    for (const MappedSegment& s : segments)
      if (IsLevelZerosOwnPath(s.path)) files.insert(s.path);
    for (const auto& [key, file] : targets) files.insert(file.first->path);
    if (!FoundTakenTables(pid, *text, slots, files)) return;
    took = true;
  }
  for (const auto& [key, file] : targets) {
    MappedLibrary lib;
    lib.path = file.first->path;
    lib.map_range = file.first->range;
    lib.inode = file.first->inode;
    lib.dev_major = file.first->dev_major;
    lib.dev_minor = file.first->dev_minor;
    ProbeDispatchTargets(pid, per_process || took, lib, file.second);
  }
}

void ZeSource::ProbeDispatchTargets(uint32_t pid, bool per_process, const MappedLibrary& mapped,
                                    const std::map<uint64_t, size_t>& targets) {
  UniqueFd held = OpenMappedFile(pid, mapped);
  struct stat st {};
  if (!held.valid() || fstat(held.get(), &st) != 0) return;  // gone
  MappedLibrary lib = mapped;
  lib.host_path = "/proc/self/fd/" + std::to_string(held.get());
  const int scope = per_process ? static_cast<int>(pid) : -1;
  DispatchProbes& probed = dispatch_[{major(st.st_dev), minor(st.st_dev), st.st_ino, scope}];
  probed.users.insert(pid);
  // Functions this file has probed by name already (a driver's extension functions): the
  // same function twice would be recorded once, but trap twice.
  std::set<uint64_t> by_name;
  if (ProbesLibrary(lib)) {
    if (auto sites = FindProbeSites(lib.host_path, HandedOutIn(lib)); sites.ok())
      for (const ProbeSpec& spec : ZeProbeSpecs())
        if (ProbedIn(spec, lib))
          if (auto it = sites->find(spec.symbol); it != sites->end())
            by_name.insert(it->second.file_offset);
  }
  const std::vector<ProbeSpec>& probes = ZeProbeSpecs();
  struct Group {
    std::vector<uint64_t> offsets, cookies;
  };
  std::map<std::pair<bpf_program*, bool>, Group> groups;
  std::vector<uint64_t> added;
  for (const auto& [offset, spec_index] : targets) {
    if (probed.offsets.count(offset) || by_name.count(offset)) continue;
    const ProbeSpec& spec = probes[spec_index];
    added.push_back(offset);
    for (bool ret : {false, true}) {
      Group& g = groups[{ret ? spec.ret(skel_.get()) : spec.entry(skel_.get()), ret}];
      g.offsets.push_back(offset);
      g.cookies.push_back(spec.cookie);
    }
  }
  if (added.empty()) return;
  std::string error;
  for (auto& [key, g] : groups) {
    if (multi_) {
      auto link = AttachUprobeMulti(key.first, scope < 0 ? 0 : scope, lib.host_path, g.offsets,
                                    g.cookies, key.second);
      if (link.ok()) probed.links.emplace_back(std::move(*link));
      else if (error.empty()) error = link.status().message();
      continue;
    }
    for (size_t i = 0; i < g.offsets.size(); ++i) {
      auto link = AttachUprobeAt(key.first, scope, lib.host_path, g.offsets[i], key.second,
                                 g.cookies[i]);
      if (link.ok()) probed.links.emplace_back(std::move(*link));
      else if (error.empty()) error = link.status().message();
    }
  }
  // Tried once: a probe that failed is not tried again at every scan.
  probed.offsets.insert(added.begin(), added.end());
  if (!error.empty())
    ctx_.say(Who(scope) + ": " + lib.path + ": cannot probe the functions the loader dispatches to (" +
             error + "); calls through tables taken with zeGet*ProcAddrTable are not all traced");
  else if (ctx_.options.verbose)
    ctx_.say(Who(scope) + ": " + lib.path + ": " + std::to_string(added.size()) +
             " functions the loader dispatches to probed where they are (calls through the "
             "driver's tables)");
}

void ZeSource::ReleaseDispatchProbes(uint32_t pid) {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const uint64_t now = uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
  for (auto it = dispatch_.begin(); it != dispatch_.end();) {
    auto next = std::next(it);
    DispatchProbes& probed = it->second;
    if (probed.users.erase(pid) && probed.users.empty()) {
      if (std::get<3>(it->first) >= 0) {  // per process: its links go now
        reaper_.Destroy(std::move(probed.links));
        dispatch_.erase(it);
      } else {
        probed.idle_since_ns = now;
      }
    }
    it = next;
  }
}

void ZeSource::Begin(const SourceStart& start) {
  begun_ = true;
  const CaptureOptions& opt = ctx_.options;
  // Asking a process about what it made before the attach stops a thread of it: only with
  // the guardian, which puts the thread back and continues it whatever becomes of xtrace.
  if (opt.query && !start.holds && !opt.pids.empty())
    ctx_.say("kernels made before the attach stay unnamed: asking the process about them needs "
             "holds and their guardian (--no-hold, or the lifecycle programs did not load)");
  if (opt.query && start.holds && start.holds->call_slot()) {
    Correlator& correlator = start.correlator;
    queries_ = std::make_unique<ZeQueries>(
        ctx_.maps, ctx_.maps.held_fd(), start.holds->call_slot(), opt.query_max_ns,
        [&correlator](uint32_t pid, uint32_t tid, uint64_t start_ns, uint64_t end_ns,
                      const LearnedKernel& k) {
          correlator.LearnKernel(pid, tid, start_ns, end_ns, k.kernel, k.name, false);
        },
        [&correlator](const ApiCall& call) { correlator.LearnCall(call); },
        [&correlator](const XtraceHold& hold) { correlator.NoteHold(hold); }, ctx_.say);
  }
  // Every name probed: those probed in drivers, and those a loader may lack, for which
  // whether a driver hands them out decides if that lack matters (SayMissing).
  std::vector<std::string_view> names;
  for (const ProbeSpec& spec : ZeProbeSpecs()) names.push_back(spec.symbol);
  clocks_ = DeviceClocks::Open(start.correlator.ze(), start.strings, names, driver_functions_,
                               ctx_.say, ctx_.note);
  if (clocks_) LearnDriverTables();
}

uint32_t ZeSource::holds_served() const { return queries_ ? XT_HOLD_QUERY : 0; }

bool ZeSource::OnHold(const DecodedHold& hold) {
  if (hold.hdr.type != XT_REC_ZE_QUERY_HOLD) return false;
  if (queries_) queries_->OnHold(hold.hdr.pid, hold.hdr.tid, hold.ip, hold.hdr.start_ns);
  else ContinueHeld(ctx_.maps.held_fd(), hold.hdr.pid);
  return true;
}

void ZeSource::FoundRunning(uint32_t pid) {
  if (queries_) queries_->Watch(pid);
}

void ZeSource::Finish(uint64_t now_ns) {
  if (clocks_) clocks_->Read(now_ns);
}

SourceSummary ZeSource::Summary(const SourceSummaryInputs& in) const {
  if (!queries_) return {};
  QueryStats stats = queries_->stats();
  stats.missed = in.counters[XT_CNT_QUERY_MISSED];
  return SourceSummary{.sentences = "", .lines = "", .hold_sentences = QuerySummary(stats)};
}

void ZeSource::Tick(uint64_t now_ns, uint64_t idle_grace_ns) {
  if (queries_) queries_->Tick();
  if (clocks_) clocks_->ReadIfDue(now_ns);
  for (auto it = dispatch_.begin(); it != dispatch_.end();) {
    auto next = std::next(it);
    if (it->second.users.empty() && now_ns - it->second.idle_since_ns >= idle_grace_ns) {
      reaper_.Destroy(std::move(it->second.links));
      dispatch_.erase(it);
    }
    it = next;
  }
}

void ZeSource::Forget(uint32_t pid) {
  // Everything it uses from now on is made under xtrace's eyes (a new image), or it is gone.
  if (queries_) queries_->Forget(pid);
  ReleaseDispatchProbes(pid);
  bpf_map_delete_elem(bpf_map__fd(skel_->maps.table_takers), &pid);
  looked_at_.erase(pid);
  driver_takers_said_.erase(pid);
}

void ZeSource::OnProcessExit(uint32_t pid) { Forget(pid); }

// A new image maps new files and takes its tables anew; the next scan probes what its loader
// points to if it does.
void ZeSource::OnProcessExec(uint32_t pid, uint64_t) { Forget(pid); }

size_t ZeSource::link_count() const {
  size_t n = reaper_.pending();
  for (const auto& [key, probed] : dispatch_) n += probed.links.size();
  return n;
}

Result<std::optional<uint32_t>> ZeSource::ProbeSiteOf(const std::string& path,
                                                       std::string_view symbol) {
  auto sites = FindProbeSites(path);
  if (!sites.ok()) return sites.status();
  auto it = sites->find(symbol);
  if (it == sites->end()) return std::optional<uint32_t>();
  return std::optional<uint32_t>(it->second.into_function);
}

}  // namespace xtrace

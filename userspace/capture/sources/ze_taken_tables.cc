// Whether a process first seen with its Level Zero dispatch filled took function tables before
// xtrace saw it: a copy of them in its memory (table_copies.h) marks it as if its getter call
// had been seen. With them, what xtrace's own Level Zero learned of its driver's tables
// (LearnDriverTables) and where it serves: a process with no loader, and the driver's
// functions behind a layer the dispatch points into (BehindTheLayers).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "base/human_bytes.h"
#include "base/read_file.h"

#include "capture/capture_options.h"
#include "capture/sources/dispatch_targets.h"
#include "capture/sources/driver_functions.h"
#include "capture/sources/table_copies.h"
#include "capture/sources/ze_probe_specs.h"
#include "capture/sources/ze_source.h"
#include "ze_probes.skel.h"

namespace xtrace {
namespace {

// What a scan may read of one process, and for how long: a runtime's tables are in its data,
// its heap or a small mapping, which come first; the bound stops at the large buffers after
// them (measured: ... ).
constexpr TableScanBounds kScanBounds{.max_bytes = 512ull << 20, .max_ns = 500'000'000};
// The loader's dispatch is a few hundred pointers: a span of slots wider than this is no
// dispatch table.
constexpr uint64_t kMaxDispatchBytes = 64 << 10;
// A dispatch word that is no function of the driver (DriverTables::words).
constexpr uint64_t kNotInTheDriver = ~uint64_t{0};
// Below the stack pointer, the bytes a function may use without moving it (x86-64 SysV).
constexpr uint64_t kRedZone = 128;

std::string Ms(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f ms", static_cast<double>(ns) / 1e6);
  return text;
}

std::string Where(const TableCopy& c) {
  char at[24];
  std::snprintf(at, sizeof(at), "%#llx", static_cast<unsigned long long>(c.address));
  return std::string(at) + " (" + (c.region.empty() ? "anonymous memory" : c.region) + ")";
}

// The functions each table of the dditable structs begins with (ze_ddi.h), of those the
// source probes at the loader's exports.
bool FirstOfItsTable(std::string_view function) {
  for (std::string_view first :
       {"zeDriverGet", "zeDeviceGet", "zeContextCreate", "zeCommandQueueCreate",
        "zeCommandListCreate", "zeEventPoolCreate", "zeEventCreate", "zeFenceCreate",
        "zeModuleCreate", "zeKernelCreate"})
    if (function == first) return true;
  return false;
}

// The dispatch whose slots are `named` (with the function each one is), read from the
// process; empty if it cannot be.
LoaderDispatch ReadDispatch(uint32_t pid,
                            const std::vector<std::pair<uint64_t, std::string_view>>& named) {
  LoaderDispatch d;
  std::vector<uint64_t> slots;
  for (const auto& [slot, function] : named) slots.push_back(slot);
  if (slots.empty()) return d;
  const auto [lo, hi] = std::minmax_element(slots.begin(), slots.end());
  if (*hi - *lo >= kMaxDispatchBytes || (*hi - *lo) % sizeof(uint64_t)) return d;
  std::vector<uint64_t> words((*hi - *lo) / sizeof(uint64_t) + 1);
  iovec local{words.data(), words.size() * sizeof(uint64_t)};
  iovec remote{reinterpret_cast<void*>(*lo), words.size() * sizeof(uint64_t)};
  if (process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0) !=
      static_cast<ssize_t>(local.iov_len))
    return d;
  d.start = *lo;
  d.words = std::move(words);
  for (const auto& [slot, function] : named)
    if (FirstOfItsTable(function)) d.table_starts.push_back((slot - d.start) / sizeof(uint64_t));
  return d;
}

// Leaves out of `regions` the stack each thread of `pid` blocked in the kernel has below its
// stack pointer (and red zone): no live object is there, only what calls that returned left,
// such as the loader's copies of tables made through its stack. The pointer is the second to
// last word of /proc/PID/task/TID/syscall; a running thread's ("running") is not known, and
// its stack is read whole.
void DropDeadStacks(uint32_t pid, std::vector<WritableRegion>* regions) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(tasks.c_str());
  if (!dir) return;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const auto text = ReadWholeFile(tasks + "/" + e->d_name + "/syscall");
    if (!text) continue;
    std::vector<std::string> words;
    for (size_t at = 0; at < text->size();) {
      const size_t end = std::min(text->find_first_of(" \n", at), text->size());
      if (end > at) words.push_back(text->substr(at, end - at));
      at = end + 1;
    }
    if (words.size() < 3 || words.front() == "running") continue;
    const uint64_t sp = std::strtoull(words[words.size() - 2].c_str(), nullptr, 16);
    if (sp < kRedZone) continue;
    for (WritableRegion& r : *regions)
      if (sp > r.start && sp <= r.end) r.start = std::max<uint64_t>(r.start, (sp - kRedZone) & ~uint64_t{7});
  }
  closedir(dir);
}

bool SameFile(const MappedSegment& a, const MappedSegment& b) {
  return a.inode == b.inode && a.dev_major == b.dev_major && a.dev_minor == b.dev_minor;
}

// The address of `offset` of the file `of` maps in the process whose segments are
// `segments`; 0 where none of its executable mappings holds it.
uint64_t AddressOf(std::span<const MappedSegment> segments, const MappedSegment& of,
                   uint64_t offset) {
  for (const MappedSegment& m : segments)
    if (m.executable && SameFile(m, of) && offset >= m.file_offset &&
        offset < m.file_offset + (m.end - m.start))
      return m.start + (offset - m.file_offset);
  return 0;
}

// The probe spec (an index into ZeProbeSpecs) of `function`, or npos.
size_t SpecOf(std::string_view function) {
  const std::vector<ProbeSpec>& specs = ZeProbeSpecs();
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].symbol == function) return i;
  return std::string::npos;
}

// Adds to `functions` (file offset -> spec) the functions of ZeDriverTableSlots it lacks, as
// the driver file `file` (loaded in this process by xtrace's own loader, which called the same
// getters at its zeInit) fills its tables: asked with the highest 1.x version, which a driver
// answers with every slot of its own version (a driver refuses only a caller older than it).
void AddSlotsPastTheLoader(const MappedSegment& file, std::span<const MappedSegment> segments,
                           std::map<uint64_t, size_t>* functions) {
  std::set<size_t> have;
  for (const auto& [offset, spec] : *functions) have.insert(spec);
  void* library = dlopen(file.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!library) return;
  // ze_result_t (*)(ze_api_version_t, table*): both 32-bit values in this ABI.
  using Getter = int32_t (*)(uint32_t, void*);
  constexpr uint32_t kAnyOneDotVersion = (1u << 16) | 0xffffu;
  constexpr size_t kTableWords = 512;  // past the largest table of any version (about 60)
  std::map<std::string_view, std::vector<uint64_t>> tables;  // getter -> what it filled
  for (const DriverTableSlot& slot : ZeDriverTableSlots()) {
    const size_t spec = SpecOf(slot.function);
    if (spec == std::string::npos || have.count(spec)) continue;
    auto [table, fresh] = tables.try_emplace(slot.getter);
    if (fresh) {
      table->second.assign(kTableWords, 0);
      const auto get = reinterpret_cast<Getter>(dlsym(library, std::string(slot.getter).c_str()));
      if (!get || get(kAnyOneDotVersion, table->second.data()) != 0) table->second.clear();
    }
    const uint64_t at = slot.index < table->second.size() ? table->second[slot.index] : 0;
    const MappedSegment* in = at ? SegmentAt(segments, at) : nullptr;
    if (in && in->executable && SameFile(*in, file))
      functions->emplace(at - in->start + in->file_offset, spec);
  }
  dlclose(library);
}

}  // namespace

void ZeSource::LearnDriverTables() {
  const uint32_t self = static_cast<uint32_t>(getpid());
  const auto text = ReadWholeFile("/proc/self/maps");
  if (!text) return;
  const std::vector<MappedSegment> segments = ParseMappedSegments(*text);
  const ReadWord read = ProcessMemoryReader(self);
  std::set<FileKey> loaders;
  for (const MappedSegment& s : segments) {
    if (!s.executable || !IsLoaderPath(s.path)) continue;
    const FileKey key{s.dev_major, s.dev_minor, s.inode};
    if (!loaders.insert(key).second) continue;
    std::vector<std::pair<uint64_t, std::string_view>> slots;
    std::map<FileKey, std::pair<const MappedSegment*, std::map<uint64_t, size_t>>> drivers;
    for (const LoaderStub& stub : StubsOf(self, key, LibraryOf(s))) {
      const uint64_t at = AddressOf(segments, s, stub.file_offset);
      uint64_t slot = 0;
      const auto target = at ? FollowDispatchStub(stub.code, at, read, &slot) : std::nullopt;
      const MappedSegment* to = target ? SegmentAt(segments, *target) : nullptr;
      // Several drivers, or a layer: the loader's own functions, no driver's.
      if (!to || !IsDriverPath(to->path)) continue;
      slots.emplace_back(slot, ZeProbeSpecs()[stub.spec].symbol);
      auto& file = drivers[FileKey{to->dev_major, to->dev_minor, to->inode}];
      file.first = to;
      file.second.emplace(*target - to->start + to->file_offset, stub.spec);
    }
    const LoaderDispatch own = ReadDispatch(self, slots);
    for (const auto& [file_key, file] : drivers) {
      auto id = ElfBuildId(file.first->path);
      if (!id.ok() || id->empty()) continue;
      DriverTables& t = driver_tables_[*id];
      t.functions = file.second;
      // A runtime built against newer Level Zero than xtrace's own loader takes these from
      // the driver's tables too.
      AddSlotsPastTheLoader(*file.first, segments, &t.functions);
      t.table_starts = own.table_starts;
      t.words.clear();
      for (uint64_t w : own.words) {
        const MappedSegment* at = w ? SegmentAt(segments, w) : nullptr;
        t.words.push_back(at && SameFile(*at, *file.first) ? w - at->start + at->file_offset
                                                            : kNotInTheDriver);
      }
    }
  }
}

void ZeSource::BehindTheLayers(uint32_t pid, const std::vector<MappedSegment>& segments,
                               DispatchTargets* targets) {
  bool layered = false;
  for (const auto& [key, file] : *targets)
    layered |= !IsLoaderPath(file.first->path) && IsLevelZerosOwnPath(file.first->path);
  if (!layered) return;
  DispatchTargets drivers;
  std::set<FileKey> seen;
  for (const MappedSegment& s : segments) {
    if (!s.executable || !IsDriverPath(s.path)) continue;
    const FileKey key{s.dev_major, s.dev_minor, s.inode};
    if (!seen.insert(key).second) continue;
    const std::string* id = DriverBuildId(pid, s);
    if (!id) continue;
    auto tables = driver_tables_.find(*id);
    if (tables == driver_tables_.end() || tables->second.functions.empty()) continue;
    drivers[key] = {&s, tables->second.functions};
  }
  if (drivers.empty()) return;
  // A function xtrace's own loader does not dispatch (one newer than it) stays probed in the
  // layer.
  std::set<size_t> covered;
  for (const auto& [key, file] : drivers)
    for (const auto& [offset, spec] : file.second) covered.insert(spec);
  for (auto it = targets->begin(); it != targets->end();) {
    const std::string& path = it->second.first->path;
    if (!IsLoaderPath(path) && IsLevelZerosOwnPath(path))
      std::erase_if(it->second.second, [&](const auto& f) { return covered.count(f.second) > 0; });
    it = it->second.second.empty() ? targets->erase(it) : std::next(it);
  }
  for (auto& [key, file] : drivers) {
    auto& into = (*targets)[key];
    into.first = file.first;
    into.second.insert(file.second.begin(), file.second.end());
  }
}

const std::string* ZeSource::DriverBuildId(uint32_t pid, const MappedSegment& s) {
  const FileKey key{s.dev_major, s.dev_minor, s.inode};
  auto id = build_ids_.find(key);
  if (id == build_ids_.end()) {
    UniqueFd held = OpenMappedFile(pid, LibraryOf(s));
    if (!held.valid()) return nullptr;
    auto read = ElfBuildId("/proc/self/fd/" + std::to_string(held.get()));
    id = build_ids_.emplace(key, read.ok() ? *read : "").first;
  }
  return &id->second;
}

void ZeSource::ScanDriversWithoutLoader(uint32_t pid, const std::vector<MappedSegment>& segments,
                                        const std::string& maps, bool took, bool first_look) {
  if (!took && !first_look) return;
  std::set<FileKey> seen;
  std::set<std::string> own_files;  // the loaders', their layers' and the drivers' own
  std::vector<std::pair<const MappedSegment*, const DriverTables*>> known;
  for (const MappedSegment& s : segments) {
    if (IsLevelZerosOwnPath(s.path) || IsDriverPath(s.path)) own_files.insert(s.path);
    if (!s.executable || !IsDriverPath(s.path)) continue;
    const FileKey key{s.dev_major, s.dev_minor, s.inode};
    if (!seen.insert(key).second) continue;
    const std::string* id = DriverBuildId(pid, s);
    if (!id) continue;
    auto tables = driver_tables_.find(*id);
    if (tables != driver_tables_.end()) {
      known.emplace_back(&s, &tables->second);
      continue;
    }
    if (!said_unknown_tables_.insert(key).second) continue;
    const std::string text =
        "pid " + std::to_string(pid) + " has the Level Zero driver " + s.path +
        " loaded and no loader initialised: calls through the function tables it takes from "
        "the driver itself (zeGetGlobalProcAddrTable, then the table's pfnInit) are not "
        "traced, as this is not the driver build xtrace's own Level Zero loaded, so nothing "
        "says where its functions are";
    ctx_.say(text);
    if (ctx_.note) ctx_.note(text);
  }
  if (known.empty()) return;
  if (!took) {
    std::vector<LoaderDispatch> copies;
    for (const auto& [segment, tables] : known) {
      LoaderDispatch& d = copies.emplace_back();
      d.table_starts = tables->table_starts;
      for (uint64_t offset : tables->words)
        d.words.push_back(offset == kNotInTheDriver ? 0 : AddressOf(segments, *segment, offset));
    }
    if (!FoundTakenCopies(pid, maps, copies, own_files,
                          " from its driver itself, with no loader initialised,"))
      return;
  } else if (driver_takers_said_.insert(pid).second) {
    const std::string text = "pid " + std::to_string(pid) +
                             " takes function tables from its Level Zero driver itself, with "
                             "no loader initialised: the functions they hold are probed for it";
    ctx_.say(text);
    if (ctx_.note) ctx_.note(text);
  }
  for (const auto& [segment, tables] : known)
    ProbeDispatchTargets(pid, true, LibraryOf(*segment), tables->functions);
}

bool ZeSource::FoundTakenTables(uint32_t pid, const std::string& maps,
                                const std::vector<std::vector<std::pair<uint64_t, std::string_view>>>& slots,
                                const std::set<std::string>& own_files) {
  std::vector<LoaderDispatch> dispatches;
  for (const auto& loader : slots) dispatches.push_back(ReadDispatch(pid, loader));
  return FoundTakenCopies(pid, maps, dispatches, own_files, "");
}

bool ZeSource::FoundTakenCopies(uint32_t pid, const std::string& maps,
                                const std::vector<LoaderDispatch>& dispatches,
                                const std::set<std::string>& own_files, std::string_view from) {
  std::vector<WritableRegion> regions = WritableRegions(maps, [&](std::string_view path) {
    return own_files.count(std::string(path)) > 0;
  });
  DropDeadStacks(pid, &regions);
  TableScan all;
  bool taken = false;
  for (const LoaderDispatch& dispatch : dispatches) {
    if (dispatch.words.empty()) continue;
    const TableScan scan = ScanForTableCopies(pid, regions, dispatch, kScanBounds);
    const TableCopyFinder finder(dispatch);
    size_t whole = 0;
    for (const TableCopy& c : scan.copies) {
      if (ctx_.options.verbose)
        ctx_.say("pid " + std::to_string(pid) + ": " + std::to_string(c.functions) + " of " +
                 std::to_string(dispatch.words.size()) +
                 " words of the loader's dispatch, in its order, at " + Where(c) +
                 (finder.Whole(c) ? ": a whole copy" : ""));
      whole += finder.Whole(c);
      // A table taken alone is part of the dispatch; the loader keeps one whole copy of its
      // own per driver besides the dispatch its stubs read.
      if (!finder.Whole(c) || whole > 1) {
        if (!taken) all.copies.push_back(c);
        taken = true;
      }
    }
    all.bytes += scan.bytes;
    all.ns += scan.ns;
    all.regions += scan.regions;
    all.regions_total = std::max(all.regions_total, scan.regions_total);
    all.bounded |= scan.bounded;
  }
  const std::string read = HumanBytes(all.bytes) + " of its writable memory read in " + Ms(all.ns) +
                           (all.bounded ? ", stopped at the scan's bound" : "");
  if (taken) {
    const uint8_t one = 1;
    bpf_map_update_elem(bpf_map__fd(skel_->maps.table_takers), &pid, &one, BPF_ANY);
    const std::string text = "pid " + std::to_string(pid) +
                             " took Level Zero function tables" + std::string(from) +
                             " before xtrace saw it: one is at " +
                             Where(all.copies.front()) + " (" + read +
                             "); the functions they point to are probed for it";
    ctx_.say(text);
    if (ctx_.note) ctx_.note(text);
    return true;
  }
  if (said_taken_before_) return false;
  said_taken_before_ = true;
  const std::string text =
      "pid " + std::to_string(pid) +
      " had initialised Level Zero" + std::string(from) +
      " before xtrace saw it and holds no function table of its " +
      (from.empty() ? "loader's" : "driver's") + " in its memory (" + read +
      "): calls through pointers it took from tables (zeGet*ProcAddrTable) before then and "
      "keeps elsewhere are not traced, nor in other such processes; --driver-tables traces "
      "them (every call through an export then traps twice)";
  ctx_.say(text);
  if (ctx_.note) ctx_.note(text);
  return false;
}

}  // namespace xtrace

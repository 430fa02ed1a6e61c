// Whether a process first seen with its Level Zero dispatch filled took function tables before
// xtrace saw it: a copy of them in its memory (table_copies.h) marks it as if its getter call
// had been seen.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "base/read_file.h"

#include "capture/capture_options.h"
#include "capture/sources/table_copies.h"
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
// Below the stack pointer, the bytes a function may use without moving it (x86-64 SysV).
constexpr uint64_t kRedZone = 128;

std::string Mib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

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

}  // namespace

bool ZeSource::FoundTakenTables(uint32_t pid, const std::string& maps,
                                const std::vector<std::vector<std::pair<uint64_t, std::string_view>>>& slots,
                                const std::set<std::string>& own_files) {
  std::vector<WritableRegion> regions = WritableRegions(maps, [&](std::string_view path) {
    return own_files.count(std::string(path)) > 0;
  });
  DropDeadStacks(pid, &regions);
  TableScan all;
  bool taken = false;
  for (const auto& loader : slots) {
    const LoaderDispatch dispatch = ReadDispatch(pid, loader);
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
  const std::string read = Mib(all.bytes) + " of its writable memory read in " + Ms(all.ns) +
                           (all.bounded ? ", stopped at the scan's bound" : "");
  if (taken) {
    const uint8_t one = 1;
    bpf_map_update_elem(bpf_map__fd(skel_->maps.table_takers), &pid, &one, BPF_ANY);
    const std::string text = "pid " + std::to_string(pid) +
                             " took Level Zero function tables before xtrace saw it: one is at " +
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
      " had initialised Level Zero before xtrace saw it and holds no function table of its "
      "loader's in its memory (" + read +
      "): calls through pointers it took from tables (zeGet*ProcAddrTable) before then and "
      "keeps elsewhere are not traced, nor in other such processes; --driver-tables traces "
      "them (every call through an export then traps twice)";
  ctx_.say(text);
  if (ctx_.note) ctx_.note(text);
  return false;
}

}  // namespace xtrace

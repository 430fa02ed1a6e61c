// Finding copies of the Level Zero loader's dispatch tables in a process's memory; see
// table_copies.h.
#include "capture/sources/table_copies.h"

#include <sys/uio.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace xtrace {
namespace {

// Bytes read per process_vm_readv: a few at a time keep the buffer small and let the time
// bound be looked at often.
constexpr uint64_t kChunkBytes = 1 << 20;

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Reads [address, address + words) of `pid` into `out`; how many words were read (fewer when
// part of it cannot be: the rest is left as it was).
size_t ReadWords(uint32_t pid, uint64_t address, uint64_t* out, size_t words) {
  iovec local{out, words * sizeof(uint64_t)};
  iovec remote{reinterpret_cast<void*>(address), words * sizeof(uint64_t)};
  const ssize_t n = process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0);
  return n > 0 ? static_cast<size_t>(n) / sizeof(uint64_t) : 0;
}

}  // namespace

TableCopyFinder::TableCopyFinder(const LoaderDispatch& dispatch)
    : dispatch_(dispatch), starts_(dispatch.words.size()) {
  for (size_t i : dispatch.table_starts)
    if (i < starts_.size()) starts_[i] = true;
  for (size_t i = 0; i < dispatch.words.size(); ++i)
    if (dispatch.words[i] != 0) index_.emplace_back(dispatch.words[i], static_cast<uint32_t>(i));
  std::sort(index_.begin(), index_.end());
  if (!index_.empty()) {
    lo_ = index_.front().first;
    hi_ = index_.back().first;
  }
}

void TableCopyFinder::Find(std::span<const uint64_t> m, uint64_t base, size_t from, size_t to,
                           std::vector<TableCopy>* out) const {
  if (index_.empty()) return;
  const std::vector<uint64_t>& d = dispatch_.words;
  const uint64_t span = hi_ - lo_;
  to = std::min(to, m.size());
  for (size_t i = from; i < to; ++i) {
    const uint64_t v = m[i];
    if (v - lo_ > span) continue;  // no driver function: almost every word
    auto it = std::lower_bound(index_.begin(), index_.end(), std::make_pair(v, uint32_t{0}));
    for (; it != index_.end() && it->first == v; ++it) {
      const size_t o = it->second;
      // Not where a run begins: the word before continues it.
      if (i > 0 && o > 0 && m[i - 1] == d[o - 1]) continue;
      size_t k = 0, functions = 0;
      for (; i + k < m.size() && o + k < d.size() && m[i + k] == d[o + k]; ++k)
        functions += d[o + k] != 0;
      if (functions < kTableCopyMinFunctions || (!starts_[o] && !(o == 0 && o + k == d.size())))
        continue;
      out->push_back(TableCopy{base + i * sizeof(uint64_t), o, k, functions, {}});
    }
  }
}

std::vector<WritableRegion> WritableRegions(std::string_view text,
                                            const std::function<bool(std::string_view)>& skip) {
  std::vector<WritableRegion> files, heap, anonymous;
  uint64_t skipped_end = 0;  // where the last left-out file mapping ended
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    // start-end perms offset dev inode [path]
    const size_t dash = line.find('-');
    const size_t space = line.find(' ');
    if (dash == std::string_view::npos || space == std::string_view::npos || dash > space) continue;
    WritableRegion r;
    r.start = std::strtoull(std::string(line.substr(0, dash)).c_str(), nullptr, 16);
    r.end = std::strtoull(std::string(line.substr(dash + 1, space - dash - 1)).c_str(), nullptr, 16);
    const std::string_view perms = line.substr(space + 1, 4);
    // The path is the sixth field: after the inode, past the padding.
    std::string_view rest = line.substr(space + 1);
    for (int field = 0; field < 4 && !rest.empty(); ++field) {
      const size_t next = rest.find(' ');
      rest = next == std::string_view::npos ? std::string_view() : rest.substr(next + 1);
    }
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    r.path = std::string(rest);
    const bool writable = perms.size() == 4 && perms[1] == 'w';
    const bool continues_skipped = r.path.empty() && r.start == skipped_end;
    if (!r.path.empty() && r.path.front() != '[' && skip(r.path)) {
      skipped_end = r.end;
      continue;
    }
    if (!writable || continues_skipped || r.end <= r.start) continue;
    if (r.path.empty()) anonymous.push_back(std::move(r));
    else if (r.path.front() == '[') {
      if (r.path == "[heap]" || r.path == "[stack]") heap.push_back(std::move(r));
    } else {
      files.push_back(std::move(r));
    }
  }
  std::stable_sort(anonymous.begin(), anonymous.end(), [](const auto& a, const auto& b) {
    return a.end - a.start < b.end - b.start;
  });
  files.insert(files.end(), heap.begin(), heap.end());
  files.insert(files.end(), anonymous.begin(), anonymous.end());
  return files;
}

TableScan ScanForTableCopies(uint32_t pid, std::span<const WritableRegion> regions,
                             const LoaderDispatch& dispatch, const TableScanBounds& bounds) {
  TableScan scan;
  scan.regions_total = regions.size();
  const uint64_t began = NowNs();
  const TableCopyFinder finder(dispatch);
  if (finder.size() == 0) return scan;
  // Each read holds a chunk, the word before it and a dispatch's length after it: a run that
  // begins in the chunk is seen whole.
  const size_t chunk_words = kChunkBytes / sizeof(uint64_t);
  std::vector<uint64_t> buffer(1 + chunk_words + finder.size());
  for (const WritableRegion& r : regions) {
    if (scan.bytes >= bounds.max_bytes || NowNs() - began >= bounds.max_ns) {
      scan.bounded = true;
      break;
    }
    ++scan.regions;
    for (uint64_t at = r.start; at < r.end; at += kChunkBytes) {
      const uint64_t read_from = at == r.start ? at : at - sizeof(uint64_t);
      const size_t lead = (at - read_from) / sizeof(uint64_t);
      const size_t want = std::min<uint64_t>(buffer.size() - (1 - lead),
                                             (r.end - read_from) / sizeof(uint64_t));
      const size_t got = ReadWords(pid, read_from, buffer.data(), want);
      scan.bytes += got * sizeof(uint64_t);
      if (got <= lead) break;  // unreadable (gone, or a hole): the next region
      const size_t before = scan.copies.size();
      finder.Find(std::span<const uint64_t>(buffer.data(), got), read_from, lead,
                  lead + chunk_words, &scan.copies);
      for (size_t i = before; i < scan.copies.size(); ++i) scan.copies[i].region = r.path;
      if (scan.bytes >= bounds.max_bytes || NowNs() - began >= bounds.max_ns) {
        scan.bounded = at + kChunkBytes < r.end || &r != &regions.back();
        break;
      }
    }
    if (scan.bounded) break;
  }
  // The loader's own dispatch is where its stubs load from.
  std::erase_if(scan.copies, [&](const TableCopy& c) {
    return c.address == dispatch.start && finder.Whole(c);
  });
  scan.ns = NowNs() - began;
  return scan;
}

}  // namespace xtrace

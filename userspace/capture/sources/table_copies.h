// Whether a process xtrace first saw with its Level Zero loader's dispatch already filled (an
// attach, or a child forked after its parent's zeInit) holds a function table it took itself
// (zeGet*ProcAddrTable) before then. The loader records nothing when it hands a table out,
// but with one driver it copies the driver's table, which its own dispatch holds too, into
// the caller's struct: a run of the same function pointers in the same order (the
// ze_*_dditable_t layouts). So the process's writable memory is read (process_vm_readv,
// bounded in bytes and time) for such runs, leaving out the loader's and the driver's own
// files; the loader's own dispatch, which the exports' stubs point at, is known by its
// address.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xtrace {

// The loader's own dispatch as the process holds it: the words from the lowest to the highest
// slot its exports' stubs load from. With one driver they are the driver's functions, in the
// order of the dditable structs that a table handed to an application has too.
struct LoaderDispatch {
  uint64_t start = 0;
  std::vector<uint64_t> words;
  // The words each table begins at (its pfnCreate or pfnGet): a table taken is a copy from
  // there. Stale parts of the loader's own copies, which its zeInit leaves on the stack, begin
  // anywhere.
  std::vector<size_t> table_starts;
};

// A run of memory words equal to a stretch of the loader's dispatch, in its order.
struct TableCopy {
  uint64_t address = 0;  // of its first word
  size_t first = 0;      // the dispatch word it starts at
  size_t words = 0;
  size_t functions = 0;  // non-null words among them
  std::string region;    // the mapping it is in, as /proc/PID/maps names it ("" anonymous)
};

// Fewest non-null words a run has to be taken for a table: random data never holds three
// functions of one driver at its table's spacing, and a table taken alone has more (the
// command list's, the kernel's, the event's ...).
inline constexpr size_t kTableCopyMinFunctions = 3;

// Finds runs of `dispatch`'s words in memory.
class TableCopyFinder {
 public:
  explicit TableCopyFinder(const LoaderDispatch& dispatch);
  // The runs of at least kTableCopyMinFunctions functions that begin in memory[from, to) at
  // a table's start, or are the whole dispatch
  // (words read from `base`; those around them show where a run begins and ends), appended to
  // `out`.
  void Find(std::span<const uint64_t> memory, uint64_t base, size_t from, size_t to,
            std::vector<TableCopy>* out) const;
  // Whether `copy` is all of the dispatch.
  bool Whole(const TableCopy& copy) const {
    return copy.first == 0 && copy.words == dispatch_.words.size();
  }
  size_t size() const { return dispatch_.words.size(); }

 private:
  const LoaderDispatch& dispatch_;
  uint64_t lo_ = 0, hi_ = 0;  // the lowest and highest non-null word
  std::vector<std::pair<uint64_t, uint32_t>> index_;  // (non-null word, its place), sorted
  std::vector<bool> starts_;  // per word, whether a table begins there
};

// A writable mapping of a process.
struct WritableRegion {
  uint64_t start = 0, end = 0;
  std::string path;  // as /proc/PID/maps names it; "" for an anonymous mapping
};

// The writable mappings of a /proc/PID/maps text in the order a scan reads them: files' data,
// then the heap and the main stack, then the other anonymous mappings, smallest first (a
// runtime's tables are small objects; the largest mappings are tensors and buffers). Those of
// a file for which `skip(path)` holds, and an anonymous mapping right after one (its bss),
// are left out.
std::vector<WritableRegion> WritableRegions(std::string_view maps_text,
                                            const std::function<bool(std::string_view)>& skip);

struct TableScanBounds {
  uint64_t max_bytes = 0;
  uint64_t max_ns = 0;
};

struct TableScan {
  std::vector<TableCopy> copies;  // every run found, the loader's own dispatch left out
  uint64_t bytes = 0;             // read
  uint64_t ns = 0;                // spent
  size_t regions = 0;             // read, of
  size_t regions_total = 0;
  bool bounded = false;  // stopped by a bound before the last region
};

// Reads `regions` of process `pid` in order, within `bounds`, for runs of `dispatch`'s words.
TableScan ScanForTableCopies(uint32_t pid, std::span<const WritableRegion> regions,
                             const LoaderDispatch& dispatch, const TableScanBounds& bounds);

}  // namespace xtrace

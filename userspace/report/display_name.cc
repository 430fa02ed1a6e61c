// Demangling and cutting names for the report (display_name.h).
#include "report/display_name.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <numeric>

namespace xtrace::report {
namespace {

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

// A name's code points by their byte offsets, so that a cut never splits one and widths are
// counted in columns; offsets[size()] is the name's length.
class CodePoints {
 public:
  explicit CodePoints(const std::string& text) : text_(text) {
    for (size_t i = 0; i < text.size(); ++i)
      if (!IsContinuationByte(text[i])) offsets_.push_back(i);
    offsets_.push_back(text.size());
  }
  size_t size() const { return offsets_.size() - 1; }
  // The code point holding byte `offset`.
  size_t At(size_t offset) const {
    return size_t(std::upper_bound(offsets_.begin(), offsets_.end(), offset) - offsets_.begin()) - 1;
  }
  std::string Sub(size_t from, size_t to) const {
    return text_.substr(offsets_[from], offsets_[to] - offsets_[from]);
  }

 private:
  const std::string& text_;
  std::vector<size_t> offsets_;
};

size_t CommonPrefix(std::string_view a, std::string_view b) {
  return size_t(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
}

size_t CommonSuffix(std::string_view a, std::string_view b) {
  return size_t(std::mismatch(a.rbegin(), a.rend(), b.rbegin(), b.rend()).first - a.rbegin());
}

// `name` cut to `width` columns. It shares at most `prefix` leading and `suffix` trailing
// bytes with any other name of its table, so what tells it apart lies between them.
std::string Cut(const std::string& name, size_t prefix, size_t suffix, size_t width) {
  const CodePoints cp(name);
  const size_t n = cp.size();
  const std::string mark(kCutMark);
  // The distinguishing part, [first, end) in code points.
  const size_t first = prefix < name.size() ? cp.At(prefix) : n - 1;
  const size_t end = suffix < name.size() ? cp.At(name.size() - 1 - suffix) + 1 : 1;

  // One cut: the start (the function's name) and a third of the width for the end (the
  // parameters, or a lambda's number), enough when the difference is in either (or when
  // nothing tells the name apart: another is the same).
  size_t tail = (width - 1) / 3;
  size_t head = width - 1 - tail;
  if (first < head || end > n - tail || first >= end) return cp.Sub(0, head) + mark + cp.Sub(n - tail, n);

  // The difference is in the middle: a window on it between a shorter start and end, the
  // window starting a little before the difference for context.
  head = (width - 2) * 3 / 10;
  tail = (width - 2) / 5;
  const size_t window = width - 2 - head - tail;
  const size_t start = std::max(head, first - std::min(first, window / 3));
  if (start + window >= n - tail) {
    const size_t keep = width - 1 - head;  // the window runs into the end: one cut before it
    return cp.Sub(0, head) + mark + cp.Sub(n - keep, n);
  }
  return cp.Sub(0, head) + mark + cp.Sub(start, start + window) + mark + cp.Sub(n - tail, n);
}

}  // namespace

std::string DemangledName(std::string_view name) {
  if (!name.starts_with("_Z")) return std::string(name);
  const std::string mangled(name);
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !text) return mangled;
  std::string demangled = text.get();
  // DPC++ names a kernel by its type's typeinfo name: the type is what the user wrote.
  constexpr std::string_view kTypeinfoName = "typeinfo name for ";
  if (name.starts_with("_ZTS") && demangled.starts_with(kTypeinfoName))
    demangled.erase(0, kTypeinfoName.size());
  return demangled;
}

size_t DisplayWidth(std::string_view text) {
  return size_t(std::count_if(text.begin(), text.end(), [](char c) { return !IsContinuationByte(c); }));
}

std::vector<std::string> CutNames(const std::vector<std::string>& names, size_t width) {
  width = std::max(width, kMinCutWidth);
  // The longest prefix and suffix each name shares with another: with the names sorted
  // (forwards, then by their reversed text) a name's closest relatives are its neighbours.
  std::vector<size_t> prefix(names.size(), 0), suffix(names.size(), 0);
  std::vector<size_t> order(names.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return names[a] < names[b]; });
  for (size_t i = 1; i < order.size(); ++i) {
    const size_t shared = CommonPrefix(names[order[i - 1]], names[order[i]]);
    prefix[order[i - 1]] = std::max(prefix[order[i - 1]], shared);
    prefix[order[i]] = std::max(prefix[order[i]], shared);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::lexicographical_compare(names[a].rbegin(), names[a].rend(), names[b].rbegin(),
                                        names[b].rend());
  });
  for (size_t i = 1; i < order.size(); ++i) {
    const size_t shared = CommonSuffix(names[order[i - 1]], names[order[i]]);
    suffix[order[i - 1]] = std::max(suffix[order[i - 1]], shared);
    suffix[order[i]] = std::max(suffix[order[i]], shared);
  }
  std::vector<std::string> out;
  out.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    out.push_back(DisplayWidth(names[i]) <= width ? names[i]
                                                  : Cut(names[i], prefix[i], suffix[i], width));
  }
  return out;
}

std::string CutList(const std::string& list, size_t width) {
  if (DisplayWidth(list) <= width) return list;
  constexpr std::string_view kSeparator = ", ";
  std::vector<std::string> items;
  for (size_t from = 0;;) {
    const size_t at = list.find(kSeparator, from);
    items.push_back(list.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) break;
    from = at + kSeparator.size();
  }
  // The most whole items that fit with the count of the others after them.
  for (size_t kept = items.size() - 1; kept >= 1; --kept) {
    std::string text;
    for (size_t i = 0; i < kept; ++i) text += items[i] + std::string(kSeparator);
    text += "+" + std::to_string(items.size() - kept) + " more";
    if (DisplayWidth(text) <= width) return text;
  }
  // Not even the first item fits (with the count of the others, if any): its name cut, so that
  // its start, its figure (what follows the name's first space) and the count stay
  // ("zeEventHost…262.51 us, +2 more", or "zeEventHost…262.51 us" alone).
  const std::string& first = items[0];
  const size_t space = first.find(' ');
  if (space != std::string::npos) {
    std::string tail = first.substr(space);
    if (items.size() > 1)
      tail += std::string(kSeparator) + "+" + std::to_string(items.size() - 1) + " more";
    const size_t budget = width - std::min(width, DisplayWidth(tail) + DisplayWidth(kCutMark));
    const std::string name = first.substr(0, space);
    // Cut by bytes: API function names are ASCII; a name that is not is cut as a whole below.
    if (budget >= 4 && DisplayWidth(name) == name.size())
      return name.substr(0, std::min(budget, name.size())) + std::string(kCutMark) + tail;
  }
  // Too narrow for any call's name: how many calls there were.
  const std::string count =
      std::to_string(items.size()) + (items.size() == 1 ? " call" : " calls");
  if (DisplayWidth(count) <= width) return count;
  return CutNames({list}, width)[0];
}

}  // namespace xtrace::report

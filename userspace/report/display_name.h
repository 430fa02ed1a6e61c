// Names as the report shows them to a person: C++ and SYCL kernel names demangled the way
// unitrace and the PyTorch profiler show them, and long names cut to a terminal's width
// keeping the part that tells them apart from the other names of their table.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace xtrace::report {

// What marks the place a name was cut: one column wide, and never part of a C++ name (unlike
// "...", which a variadic parameter list holds).
inline constexpr std::string_view kCutMark = "\u2026";

// `name` demangled when it is an Itanium C++ ABI name ("_Z..."): a function as
// abi::__cxa_demangle writes it; a SYCL kernel's typeinfo name ("_ZTS...", what DPC++ names
// a kernel by) as the type alone, without "typeinfo name for". Any other name, and a "_Z"
// name that does not demangle, is returned as it is.
std::string DemangledName(std::string_view name);

// Terminal columns `text` takes: its UTF-8 code points (names are not expected to hold
// double-width characters).
size_t DisplayWidth(std::string_view text);

// Each of `names` cut to at most `width` columns (at least kMinCutWidth), the cut marked with
// kCutMark; names that fit are left whole. A name keeps its start (the function's name) and
// its end, and, when the part that tells it apart from the others of `names` lies between
// them (template names sharing a long prefix and the same parameter list), a window on that
// part too: "void xt::gemm<…tile_shape<256, 128…(float, float)".
std::vector<std::string> CutNames(const std::vector<std::string>& names, size_t width);

// `list` (calls and their times, joined by ", ") cut to at most `width` columns by whole
// items: the first items that fit, then "+N more" for the rest ("zeEventHostSynchronize 5.91
// ms, +2 more"), so that no item is shown cut through its figure. When even the first item and
// the count do not fit, that first item's name is cut, keeping its figure and the count
// ("zeEventHost…5.91 ms, +2 more"); narrower still, the list is counted ("3 calls"). Left whole
// when it fits.
std::string CutList(const std::string& list, size_t width);

// Narrower, a cut name says too little to be worth the columns it saves.
inline constexpr size_t kMinCutWidth = 40;

}  // namespace xtrace::report

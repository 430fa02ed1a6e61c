// Parser for the simulated module format (see module_format.h and README.md). Errors name the
// line, because they surface in the module build log a developer will read.
#include "module_format.h"

#include <charconv>
#include <set>

namespace simze {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (is_blank(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string_view skip_blanks(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  return s;
}

std::string at_line(size_t line, std::string_view what) {
  return "simulated module line " + std::to_string(line) + ": " + std::string(what);
}

}  // namespace

ParsedModule parse_module(const uint8_t* data, size_t size) {
  ParsedModule out;
  std::string_view text(reinterpret_cast<const char*>(data), data == nullptr ? 0 : size);
  if (!text.starts_with(kModuleMagic)) return out;  // opaque blob
  out.simulated = true;
  // Callers often pass sizeof(a string literal): a trailing NUL is not part of the text.
  while (!text.empty() && text.back() == '\0') text.remove_suffix(1);

  size_t line_no = 0;
  std::set<std::string_view> seen;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    line = trim_right(line);

    if (line_no == 1) {
      std::string_view version = skip_blanks(line.substr(kModuleMagic.size()));
      if (line.size() == kModuleMagic.size() || !is_blank(line[kModuleMagic.size()]) ||
          version != "1") {
        out.error = at_line(1, "expected 'XTRACE-SIMGPU-MODULE 1'");
        return out;
      }
      continue;
    }
    line = skip_blanks(line);
    if (line.empty() || line.front() == '#') continue;  // blank lines and comments

    constexpr std::string_view kKeyword = "kernel";
    if (!line.starts_with(kKeyword) || line.size() == kKeyword.size() ||
        !is_blank(line[kKeyword.size()])) {
      out.error = at_line(line_no, "expected 'kernel <duration_ns> <name>'");
      return out;
    }
    line = skip_blanks(line.substr(kKeyword.size()));
    uint64_t duration = 0;
    auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), duration);
    if (ec != std::errc{} || ptr == line.data()) {
      out.error = at_line(line_no, "duration is not a non-negative integer (ns)");
      return out;
    }
    line.remove_prefix(static_cast<size_t>(ptr - line.data()));
    if (line.empty() || !is_blank(line.front())) {
      out.error = at_line(line_no, "expected a blank and a kernel name after the duration");
      return out;
    }
    // The name runs to the end of the line: demangled C++ names carry spaces, commas, <>.
    std::string_view name = skip_blanks(line);
    if (name.empty()) {
      out.error = at_line(line_no, "missing kernel name");
      return out;
    }
    if (!seen.insert(name).second) {
      out.error = at_line(line_no, "duplicate kernel name '" + std::string(name) + "'");
      return out;
    }
    out.kernels.push_back({std::string(name), duration});
  }
  return out;
}

}  // namespace simze

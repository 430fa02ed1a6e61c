// Parsing and matching of category rules (categories.h).
#include "report/categories.h"

#include <fstream>
#include <sstream>

namespace xtrace::report {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Splits off the first blank-separated word of *s.
std::string_view NextWord(std::string_view* s) {
  *s = Trim(*s);
  const size_t end = s->find_first_of(" \t");
  const std::string_view word = s->substr(0, end);
  s->remove_prefix(end == std::string_view::npos ? s->size() : end);
  return word;
}

}  // namespace

Result<Categories> Categories::Parse(std::string_view text, const std::string& origin) {
  Categories out;
  int line_no = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_no;
    line = Trim(line);
    if (line.empty() || line.front() == '#') continue;
    const std::string where = origin + ":" + std::to_string(line_no);
    Rule rule;
    rule.category = std::string(NextWord(&line));
    const std::string_view match = NextWord(&line);
    rule.pattern = std::string(Trim(line));
    if (match == "equals") {
      rule.match = Match::kEquals;
    } else if (match == "starts-with") {
      rule.match = Match::kStartsWith;
    } else if (match == "ends-with") {
      rule.match = Match::kEndsWith;
    } else if (match == "regex") {
      rule.match = Match::kRegex;
    } else {
      return Status::Error(where + ": expected CATEGORY equals|starts-with|ends-with|regex PATTERN, got '" +
                           std::string(match) + "'");
    }
    if (rule.pattern.empty()) return Status::Error(where + ": the rule has no pattern");
    if (rule.match == Match::kRegex) {
      try {
        rule.regex = std::regex(rule.pattern, std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        return Status::Error(where + ": bad regex '" + rule.pattern + "': " + e.what());
      }
    }
    out.rules_.push_back(std::move(rule));
  }
  return out;
}

Result<Categories> Categories::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Error("cannot read the categories file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

std::string_view Categories::Classify(std::string_view name) const {
  for (const Rule& r : rules_) {
    switch (r.match) {
      case Match::kEquals:
        if (name == r.pattern) return r.category;
        break;
      case Match::kStartsWith:
        if (name.starts_with(r.pattern)) return r.category;
        break;
      case Match::kEndsWith:
        if (name.ends_with(r.pattern)) return r.category;
        break;
      case Match::kRegex:
        if (std::regex_search(name.begin(), name.end(), r.regex)) return r.category;
        break;
    }
  }
  return kOtherCategory;
}

}  // namespace xtrace::report

// Kernel categories for `xtrace report --categories FILE`: rules that group names (equals,
// starts with, ends with, regex; the first matching rule wins; unmatched names are "other").
#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace xtrace::report {

inline constexpr std::string_view kOtherCategory = "other";

class Categories {
 public:
  // One rule per line: CATEGORY MATCH PATTERN, where MATCH is equals, starts-with, ends-with
  // or regex and PATTERN is the rest of the line (spaces kept). Blank lines and lines whose
  // first non-blank character is '#' are ignored. Errors name the file and line.
  static Result<Categories> Parse(std::string_view text, const std::string& origin);
  static Result<Categories> Load(const std::string& path);

  // The category of `name`: the first rule that matches, else "other".
  std::string_view Classify(std::string_view name) const;
  bool empty() const { return rules_.empty(); }

 private:
  enum class Match { kEquals, kStartsWith, kEndsWith, kRegex };
  struct Rule {
    std::string category;
    Match match;
    std::string pattern;
    std::regex regex;
  };
  std::vector<Rule> rules_;
};

}  // namespace xtrace::report

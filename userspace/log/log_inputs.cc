// Expanding log arguments (log_inputs.h).
#include "log/log_inputs.h"

#include <algorithm>
#include <filesystem>

namespace xtrace {

Result<std::vector<std::string>> ExpandLogInputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(input, ec)) {
      out.push_back(input);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(input, ec)) {
      if (entry.path().extension() == ".capnp") found.push_back(entry.path().string());
    }
    if (ec) return Status::Error("cannot list the directory " + input + ": " + ec.message());
    if (found.empty()) return Status::Error("no *.capnp logs in the directory " + input);
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace xtrace

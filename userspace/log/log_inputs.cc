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
    // Its subdirectories too: a cluster capture writes a directory per node
    // (xtrace slurm: DIR/NODE/*.capnp).
    std::vector<std::string> found;
    for (auto it = std::filesystem::recursive_directory_iterator(input, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().extension() == ".capnp" && !it->is_directory()) found.push_back(it->path().string());
    }
    if (ec) return Status::Error("cannot list the directory " + input + ": " + ec.message());
    if (found.empty()) return Status::Error("no *.capnp logs in the directory " + input);
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace xtrace

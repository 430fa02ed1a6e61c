// Expanding log arguments (log_inputs.h).
#include "log/log_inputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

namespace xtrace {

Result<std::vector<std::string>> ExpandLogInputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  // A log named twice (a directory and a file in it, overlapping globs) is read once: read
  // twice, every event of it would be counted and drawn twice.
  std::set<std::pair<dev_t, ino_t>> seen;
  auto add = [&](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !seen.insert({st.st_dev, st.st_ino}).second) return;
    out.push_back(path);
  };
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(input, ec)) {
      add(input);
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
    for (const std::string& path : found) add(path);
  }
  return out;
}

}  // namespace xtrace

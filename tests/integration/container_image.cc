#include "container_image.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace xtrace::testing {
namespace fs = std::filesystem;

namespace {

// Podman on this machine kind: cgroups v1 hybrid, no ulimit defaults it can apply as a
// rootful runtime inside the VM, and runc (crun fails there).
constexpr const char* kContainersConf = "[containers]\ndefault_ulimits = []\n";

// Shared libraries `ldd` lists for `file` (absolute paths, the dynamic linker included).
std::vector<std::string> LddPaths(const std::string& file, std::string* error) {
  const RunResult r = RunCommand({"/usr/bin/ldd", file});
  if (r.exit_code() != 0) {
    *error = "ldd " + file + ": " + r.err;
    return {};
  }
  std::vector<std::string> paths;
  static const std::regex kPath(R"((/[^ \t\n()]+))");
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kPath)) paths.push_back(m[1]);
  }
  return paths;
}

bool CopyInto(const fs::path& root, const std::string& host_path, const std::string& path,
              std::string* error) {
  const fs::path dest = root / fs::path(path).relative_path();
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  fs::copy_file(fs::canonical(host_path, ec), dest, fs::copy_options::overwrite_existing, ec);
  if (ec) *error = "copying " + host_path + " into the image: " + ec.message();
  return !ec;
}

}  // namespace

bool ContainerRuntimeAvailable() {
  return access("/usr/bin/podman", X_OK) == 0 &&
         (access("/usr/sbin/runc", X_OK) == 0 || access("/usr/bin/runc", X_OK) == 0);
}

bool BuildRootTree(const std::string& root_dir, const std::vector<std::string>& binaries,
                   const std::vector<std::string>& libraries, const std::vector<RootFile>& extra,
                   std::string* error) {
  const fs::path root(root_dir);
  std::set<std::string> files;
  for (const auto& b : binaries) {
    files.insert(b);
    for (auto& l : LddPaths(b, error)) files.insert(l);
  }
  for (const auto& lib : libraries) {
    files.insert(lib);
    for (auto& l : LddPaths(lib, error)) files.insert(l);
  }
  if (!error->empty()) return false;
  for (const auto& f : files)
    if (!CopyInto(root, f, f, error)) return false;
  for (const auto& f : extra)
    if (!CopyInto(root, f.host_path, f.path, error)) return false;
  std::error_code ec;
  fs::create_directories(root / "tmp", ec);
  fs::permissions(root / "tmp", fs::perms::all | fs::perms::sticky_bit, ec);
  return true;
}

ContainerImage::ContainerImage(const std::string& scratch, const std::vector<std::string>& binaries,
                               const std::vector<std::string>& libraries,
                               const std::vector<File>& extra)
    : scratch_(scratch) {
  static std::atomic<int> serial{0};
  const fs::path root = fs::path(scratch) / "rootfs";
  if (!BuildRootTree(root.string(), binaries, libraries, extra, &error_)) return;
  // Podman stores identical layers once: two images made from the same files in the same
  // second (tar keeps whole-second times) would share every file, inodes included. A file
  // naming the image keeps each image's files its own, as images built apart are.
  const std::string tag = "localhost/xtrace-test-" + std::to_string(getpid()) + "-" +
                          std::to_string(serial++) + ":latest";
  { std::ofstream(root / "xtrace-image") << tag << "\n"; }
  { std::ofstream(fs::path(scratch) / "containers.conf") << kContainersConf; }

  const std::string tar = (fs::path(scratch) / "rootfs.tar").string();
  if (RunCommand({"/bin/tar", "-C", root.string(), "-cf", tar, "."}).exit_code() != 0) {
    error_ = "tar of the image's root file system failed";
    return;
  }
  const RunResult imported = RunCommand({"/usr/bin/podman", "import", "-q", tar, tag}, PodmanEnv(),
                                        std::chrono::seconds(120));
  if (imported.exit_code() != 0) {
    error_ = "podman import: " + imported.err;
    return;
  }
  tag_ = tag;
}

ContainerImage::~ContainerImage() {
  if (!tag_.empty()) (void)RunCommand({"/usr/bin/podman", "rmi", "-f", tag_}, PodmanEnv());
}

std::vector<std::string> ContainerImage::PodmanEnv() const {
  return {"CONTAINERS_CONF=" + (fs::path(scratch_) / "containers.conf").string()};
}

std::vector<std::string> ContainerImage::RunArgv(const std::string& name,
                                                 const std::vector<std::string>& env,
                                                 const std::vector<std::string>& volumes,
                                                 const std::vector<std::string>& command,
                                                 const std::vector<std::string>& options) const {
  std::vector<std::string> argv = {"/usr/bin/podman", "--runtime", "runc", "run", "--rm",
                                   "--cgroup-manager=cgroupfs", "--network=none", "--name", name};
  for (const auto& e : env) {
    argv.push_back("-e");
    argv.push_back(e);
  }
  for (const auto& v : volumes) {
    argv.push_back("-v");
    argv.push_back(v);
  }
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(tag_);
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

namespace {
std::string Inspect(const ContainerImage& image, const std::string& name, const char* format) {
  const RunResult r = RunCommand({"/usr/bin/podman", "inspect", "--format", format, name}, image.PodmanEnv());
  if (r.exit_code() != 0) return "";
  std::string value = r.out;
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
  return value;
}
}  // namespace

std::string ContainerId(const ContainerImage& image, const std::string& name) {
  return Inspect(image, name, "{{.Id}}");
}

uint32_t ContainerPid(const ContainerImage& image, const std::string& name) {
  return static_cast<uint32_t>(std::strtoul(Inspect(image, name, "{{.State.Pid}}").c_str(), nullptr, 10));
}

}  // namespace xtrace::testing

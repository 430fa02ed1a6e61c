// Real containers for integration tests: Debian's podman with runc. No registry is reachable,
// so an image is a root file system made of the test's own binaries, the libraries `ldd`
// lists for them and the dynamic linker, imported with `podman import`. Every file in it is
// a copy, so the container's libraries are files xtrace has never seen (other inodes), as
// on a real node where each image brings its own loader and its own ld.so.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "subprocess.h"

namespace xtrace::testing {

// Whether podman and runc are installed (scripts/install-deps.sh installs them).
bool ContainerRuntimeAvailable();

// A file copied into a root file system made for a test.
struct RootFile {
  std::string host_path;  // copied from here (symlinks followed)
  std::string path;       // to here inside the tree
};

// Fills `root` with copies of `binaries` (at the same paths as on the host), the shared
// libraries they and `libraries` need (`ldd`, the dynamic linker included) and `extra`
// files, plus an empty /tmp: a tree to run the binaries in (an image, or a chroot). On
// failure returns false and says why in `error`.
bool BuildRootTree(const std::string& root, const std::vector<std::string>& binaries,
                   const std::vector<std::string>& libraries, const std::vector<RootFile>& extra,
                   std::string* error);

class ContainerImage {
 public:
  using File = RootFile;
  // Builds and imports an image holding `binaries` (at the same paths as on the host), the
  // shared libraries they and `libraries` need, and `extra` files. `scratch` is a directory
  // the test owns. On failure, error() says why and tag() is empty.
  ContainerImage(const std::string& scratch, const std::vector<std::string>& binaries,
                 const std::vector<std::string>& libraries, const std::vector<File>& extra = {});
  ~ContainerImage();  // removes the image
  ContainerImage(const ContainerImage&) = delete;
  ContainerImage& operator=(const ContainerImage&) = delete;

  const std::string& tag() const { return tag_; }
  const std::string& error() const { return error_; }

  // The argv that runs `command` in a new container of this image named `name`, with `env`
  // (NAME=value) set in it, `volumes` (HOST:CONTAINER) bind-mounted and further `options` of
  // `podman run` (e.g. "--cidfile=F", "--pid=container:OTHER").
  std::vector<std::string> RunArgv(const std::string& name, const std::vector<std::string>& env,
                                   const std::vector<std::string>& volumes,
                                   const std::vector<std::string>& command,
                                   const std::vector<std::string>& options = {}) const;
  // Environment for podman itself (its containers.conf for this machine kind).
  std::vector<std::string> PodmanEnv() const;

 private:
  std::string scratch_;
  std::string tag_;
  std::string error_;
};

// The full id of a running container named `name`, or "" (podman inspect).
std::string ContainerId(const ContainerImage& image, const std::string& name);
// The host pid of the first process of a running container named `name`, or 0.
uint32_t ContainerPid(const ContainerImage& image, const std::string& name);

}  // namespace xtrace::testing

// Debian trixie's root file system, with Level Zero's loader 1.20.6, that
// scripts/trixie-rootfs.sh builds (ctest runs it first as the fixture trixie_rootfs): where it
// is, and why it is not there.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace xtrace::testing {

inline std::string TrixieDir() {
  const char* env = std::getenv("XTRACE_TRIXIE_ROOT");
  return env && *env ? env : "/var/cache/xtrace/trixie";
}

// The tree, or "" if it is not there.
inline std::string TrixieRoot() {
  const std::string root = TrixieDir();
  return std::filesystem::exists(root + "/.xtrace-stamp") ? root : "";
}

// Why the tree is missing, as the script left it in DIR.failed (or what to run).
inline std::string WhyNoTrixie() {
  std::ifstream in(TrixieDir() + ".failed");
  std::string why((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (why.empty()) return "it was not built: run scripts/trixie-rootfs.sh as root (ctest runs it)";
  return "scripts/trixie-rootfs.sh could not build it: " + why;
}

}  // namespace xtrace::testing

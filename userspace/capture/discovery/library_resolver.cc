// Library resolution for exec-time attachment.
#include "capture/discovery/library_resolver.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace xtrace {

std::optional<MappedLibrary> LibraryAtPath(const std::string& path) {
  char real[PATH_MAX];
  struct stat st {};
  if (!realpath(path.c_str(), real) || stat(real, &st) != 0 || !S_ISREG(st.st_mode))
    return std::nullopt;
  MappedLibrary lib;
  lib.path = real;
  lib.host_path = real;
  lib.inode = st.st_ino;
  lib.dev_major = major(st.st_dev);
  lib.dev_minor = minor(st.st_dev);
  return lib;
}

std::optional<MappedLibrary> ResolveLibraryForExec(const std::string& soname) {
  std::vector<std::string> dirs;
  if (const char* llp = std::getenv("LD_LIBRARY_PATH")) {
    std::stringstream ss(llp);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  if (FILE* p = popen("/sbin/ldconfig -p 2>/dev/null", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof(line), p)) {
      const std::string l(line);
      const size_t arrow = l.find("=> ");
      // "	libze_loader.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libze_loader.so.1"
      if (arrow == std::string::npos || l.find(soname + " (") == std::string::npos) continue;
      std::string path = l.substr(arrow + 3);
      while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
      dirs.push_back(path.substr(0, path.rfind('/')));
    }
    pclose(p);
  }
  for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                        "/usr/lib64", "/lib", "/usr/lib"})
    dirs.emplace_back(d);
  for (const auto& dir : dirs)
    if (auto lib = LibraryAtPath(dir + "/" + soname)) return lib;
  return std::nullopt;
}

}  // namespace xtrace

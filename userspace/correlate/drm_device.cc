// Naming an fd's device through /proc and sysfs; see drm_device.h.
#include "correlate/drm_device.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>

namespace xtrace {
namespace {

std::string ReadLink(const std::string& path) {
  char buf[4096];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf));
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string CharDeviceDir(const std::string& sysfs_root, uint32_t major, uint32_t minor) {
  return sysfs_root + "/dev/char/" + std::to_string(major) + ":" + std::to_string(minor);
}

// /dev path of a character device from its uevent ("DEVNAME=dri/renderD128").
std::string DeviceNodePath(const std::string& sysfs_root, uint32_t major, uint32_t minor) {
  std::ifstream uevent(CharDeviceDir(sysfs_root, major, minor) + "/uevent");
  for (std::string line; std::getline(uevent, line);)
    if (line.rfind("DEVNAME=", 0) == 0) return "/dev/" + line.substr(8);
  return {};
}

// `path` as a process under another root (chroot; /proc/PID/root) names it: the kernel
// writes an fd's link from the reader's root, so a chrooted process's /dev/dri/renderD128
// reads as TREE/dev/dri/renderD128 here.
std::string ProcessOwnPath(const std::string& proc_root, uint32_t pid, std::string path) {
  const std::string root = ReadLink(proc_root + "/" + std::to_string(pid) + "/root");
  if (root.size() > 1 && root.front() == '/' && path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
      path[root.size()] == '/')
    path.erase(0, root.size());
  return path;
}

}  // namespace

DrmNodeKind DrmMinorKind(uint32_t minor) {
  if (minor < 64) return DrmNodeKind::kPrimary;
  if (minor >= 128 && minor < 192) return DrmNodeKind::kRender;
  return DrmNodeKind::kOtherDrm;
}

FdDevice ResolveFdDevice(const std::string& proc_root, const std::string& sysfs_root, uint32_t pid,
                         uint32_t fd, const FdFileAtCall& at_call) {
  const std::string link = proc_root + "/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  struct stat st {};
  const bool in_proc = ::stat(link.c_str(), &st) == 0;

  FdDevice dev;
  mode_t mode;
  if (at_call.mode != 0) {
    mode = at_call.mode;
    dev.major = at_call.major;
    dev.minor = at_call.minor;
  } else if (in_proc) {
    mode = st.st_mode;
    dev.major = major(st.st_rdev);
    dev.minor = minor(st.st_rdev);
  } else {
    return dev;  // closed before anyone looked, and the probe did not find it either
  }
  const bool is_device = S_ISCHR(mode);
  if (!is_device) dev.major = dev.minor = 0;
  // The path in /proc is the one the process used, but only if the fd still holds that file.
  const bool same_file =
      in_proc && (st.st_mode & S_IFMT) == (mode & S_IFMT) &&
      (!is_device || (major(st.st_rdev) == dev.major && minor(st.st_rdev) == dev.minor));
  if (same_file) dev.path = ProcessOwnPath(proc_root, pid, ReadLink(link));
  if (dev.path.empty() && is_device) dev.path = DeviceNodePath(sysfs_root, dev.major, dev.minor);
  if (!is_device || dev.major != kDrmMajor) {
    dev.kind = DrmNodeKind::kNotDrm;
    return dev;
  }
  dev.kind = DrmMinorKind(dev.minor);
  // .../device is the GPU (a PCI device); its driver link names the driver.
  const std::string driver =
      ReadLink(CharDeviceDir(sysfs_root, dev.major, dev.minor) + "/device/driver");
  dev.driver = driver.substr(driver.rfind('/') + 1);
  return dev;
}

}  // namespace xtrace

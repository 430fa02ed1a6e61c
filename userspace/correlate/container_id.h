// Which container a process runs in, read from its cgroup path by the naming conventions of
// the container runtimes (Docker, containerd/Kubernetes, CRI-O, Podman).
#pragma once

#include <string>
#include <string_view>

namespace xtrace {

// The 64-hex-digit container id in `cgroup_path` (e.g. ".../docker-<id>.scope",
// "/docker/<id>", ".../cri-containerd-<id>.scope", "/kubepods/.../pod<uid>/<id>"), or "" when
// the path names none. The innermost component with an id wins; a runtime's monitor process
// ("libpod-conmon-<id>.scope", "crio-conmon-<id>.scope") is not the container.
std::string ContainerIdFromCgroupPath(std::string_view cgroup_path);

}  // namespace xtrace

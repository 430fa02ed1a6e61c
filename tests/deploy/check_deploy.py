#!/usr/bin/python3
"""Checks scripts/deploy without a container engine: the Kubernetes manifests parse and ask
for what the collector needs and no more, and the image installs every shared library the
xtrace binary links (its runtime stage is compared with the binary's own dependencies).

usage: check_deploy.py DEPLOY_DIR XTRACE_BINARY
"""
import os
import re
import subprocess
import sys

import yaml

ALLOWED_CAPS = {"BPF", "PERFMON", "SYS_PTRACE", "SYS_RESOURCE"}
REQUIRED_CAPS = {"BPF", "PERFMON", "SYS_PTRACE"}
# Packages every debian:bookworm-slim image already has.
SLIM_BASE = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"}
# Libraries the binary opens at run time (not in ldd's list), and their packages.
DLOPENED = {"libze_loader.so.1": "libze1"}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def load_all(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def xtrace_containers(pod_spec):
    return [c for c in pod_spec.get("containers", []) if c.get("image", "").startswith("xtrace")]


def check_collector(where, container):
    sc = container.get("securityContext", {})
    caps = sc.get("capabilities", {})
    added = set(caps.get("add", []))
    check(caps.get("drop") == ["ALL"], f"{where}: capabilities must drop ALL")
    check(REQUIRED_CAPS <= added, f"{where}: needs {sorted(REQUIRED_CAPS)}, adds {sorted(added)}")
    check(added <= ALLOWED_CAPS, f"{where}: adds more than {sorted(ALLOWED_CAPS)}: {sorted(added)}")
    check(not sc.get("privileged", False), f"{where}: must not be privileged")
    check(sc.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation must be false")
    check(sc.get("runAsUser") == 0, f"{where}: the daemon runs as root (its socket is root's)")
    args = container.get("args", [])
    check(args[:1] == ["daemon"], f"{where}: should run `xtrace daemon`, runs {args}")
    mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
    out_dir = args[args.index("--output-dir") + 1] if "--output-dir" in args else None
    check(out_dir in mounts, f"{where}: --output-dir {out_dir} is not a mounted volume")


def check_manifests(deploy):
    agent = load_all(os.path.join(deploy, "kubernetes", "node-agent.yaml"))
    daemonsets = [d for d in agent if d.get("kind") == "DaemonSet"]
    check(len(daemonsets) == 1, "node-agent.yaml: expected one DaemonSet")
    for ds in daemonsets:
        spec = ds["spec"]["template"]["spec"]
        check(spec.get("hostPID") is True, "node agent: needs hostPID")
        check(ds["spec"]["selector"]["matchLabels"].items() <=
              ds["spec"]["template"]["metadata"]["labels"].items(),
              "node agent: selector does not match the pod labels")
        collectors = xtrace_containers(spec)
        check(len(collectors) == 1, "node agent: expected one xtrace container")
        for c in collectors:
            check_collector("node agent", c)

    sidecar = load_all(os.path.join(deploy, "kubernetes", "pod-sidecar.yaml"))
    pods = [d for d in sidecar if d.get("kind") == "Pod"]
    check(len(pods) == 1, "pod-sidecar.yaml: expected one Pod")
    for pod in pods:
        spec = pod["spec"]
        check(spec.get("shareProcessNamespace") is True, "sidecar: needs shareProcessNamespace")
        check(not spec.get("hostPID", False), "sidecar: must stay in its pod's pid namespace")
        collectors = xtrace_containers(spec)
        check(len(collectors) == 1, "sidecar: expected one xtrace container")
        check(len(spec["containers"]) > len(collectors), "sidecar: no workload beside it")
        for c in collectors:
            check_collector("sidecar", c)
            check("--system" in c.get("args", []), "sidecar: should capture its pod from the start")
        volumes = {v["name"] for v in spec.get("volumes", [])}
        for c in spec["containers"]:
            for m in c.get("volumeMounts", []):
                check(m["name"] in volumes, f"sidecar: volume {m['name']} is not defined")


def package_of(path):
    out = subprocess.run(["dpkg", "-S", os.path.realpath(path)], capture_output=True, text=True)
    if out.returncode != 0:
        out = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
    return out.stdout.split(":")[0] if out.returncode == 0 else None


def check_image(deploy, binary):
    with open(os.path.join(deploy, "Dockerfile")) as f:
        text = f.read()
    stages = re.findall(r"^FROM\s+(\S+)", text, re.M)
    check(stages == ["debian:bookworm", "debian:bookworm-slim"],
          f"Dockerfile: expected a bookworm build stage and a bookworm-slim runtime, got {stages}")
    runtime = text.split("FROM debian:bookworm-slim", 1)[-1]
    installed = set()
    for line in runtime.splitlines():
        if "apt-get install" not in line:
            continue
        words = line.split("apt-get install", 1)[1].split("&&")[0].split()
        installed |= {w for w in words if not w.startswith("-") and w != "\\"}
    check(re.search(r"COPY --from=build /build/bin/xtrace /usr/local/bin/xtrace", runtime),
          "Dockerfile: the runtime stage must copy the built binary to /usr/local/bin/xtrace")
    check('ENTRYPOINT ["/usr/local/bin/xtrace"]' in runtime, "Dockerfile: ENTRYPOINT must be xtrace")
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    for lib, path in re.findall(r"^\s*(\S+) => (\S+)", ldd, re.M):
        pkg = package_of(path)
        check(pkg is not None, f"{lib}: no Debian package owns {path}")
        if pkg and pkg not in SLIM_BASE:
            check(pkg in installed, f"Dockerfile: xtrace links {lib} from {pkg}, which the runtime "
                                    f"stage does not install ({sorted(installed)})")
    # Opened with dlopen, so ldd does not list it: without it the collector reads no device
    # clock and measures nothing.
    for lib, pkg in DLOPENED.items():
        check(pkg in installed, f"Dockerfile: xtrace opens {lib} at run time, from {pkg}, which the "
                                f"runtime stage does not install ({sorted(installed)})")
    for pkg in installed:
        known = subprocess.run(["apt-cache", "show", "--no-all-versions", pkg], capture_output=True)
        check(known.returncode == 0, f"Dockerfile: no package {pkg} in this machine's Debian archive")


def main():
    deploy, binary = sys.argv[1], sys.argv[2]
    check_manifests(deploy)
    check_image(deploy, binary)
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("deploy: manifests and image definition check out")
    return 0


if __name__ == "__main__":
    sys.exit(main())

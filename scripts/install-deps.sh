#!/usr/bin/env bash
# Installs what xtrace needs to build, test and run from Debian's archive.
# Idempotent and silent when everything is already there; prints what it installs otherwise.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  clang llvm                      # BPF objects (clang -target bpf), llvm-strip
  bpftool libbpf-dev libelf-dev linux-libc-dev   # libelf: probe sites from ELF code
  zlib1g-dev                      # libelf's, and gzip trace output (convert -o x.json.gz)
  capnproto libcapnp-dev          # event log schema compiler and runtime
  libze1 libze-dev                # the real Level Zero loader and its headers
  libdnnl-dev libtbb-dev          # real ITT clients (oneDNN, TBB) for the ITT tests
  python3-torch                   # the benchmark's real-world ITT row (oneDNN inside PyTorch)
  libgtest-dev libgmock-dev       # unit and integration tests
  nlohmann-json3-dev              # tests parse the Chrome JSON back; the benchmark's DOM baseline
  python3                         # JSON checks in tests
  libpython3-dev                  # an interpreter linked against libpython (Python frames tests)
  nodejs npm                      # runs the Chrome trace consumer in tests (below)
  python3-yaml                    # tests/deploy parses the Kubernetes manifests
  util-linux                      # unshare, nsenter, setpriv in the system-capture tests
  podman runc                     # real containers in the container tests
  openmpi-bin libopenmpi-dev      # MPI workloads: mpirun and per-rank record templates
  slurm-wlm munge                 # a Slurm cluster of its own in the cluster tests
  strace                          # a process another tracer holds is left alone (attach tests)
  debootstrap                     # the Debian trixie tree (a newer Level Zero loader) of the tests
  charliecloud-runtime            # ch-run: an HPC container runtime in the Level Zero path tests
)

# The Chrome DevTools trace engine, an independent consumer of Chrome trace JSON that the
# integration tests load xtrace's output with. Pinned; installed outside the repo.
trace_engine_version=0.0.65
test_tools=/opt/xtrace/test-tools

install_trace_engine() {
  local pkg="$test_tools/node_modules/@paulirish/trace_engine/package.json"
  if [[ -f "$pkg" ]] && grep -q "\"version\": \"$trace_engine_version\"" "$pkg"; then
    return 0
  fi
  echo "install-deps: installing the Chrome trace engine $trace_engine_version (npm) into $test_tools"
  mkdir -p "$test_tools"
  npm install --prefix "$test_tools" --no-audit --no-fund --silent \
    "@paulirish/trace_engine@$trace_engine_version" >>/tmp/xtrace-install-deps.log 2>&1 || {
    echo "install-deps: npm install failed; see /tmp/xtrace-install-deps.log" >&2
    exit 1
  }
}

missing=()
for p in "${packages[@]}"; do
  # A Node.js from another packaging (e.g. a vendor repack) serves as well as Debian's.
  if [[ "$p" == nodejs || "$p" == npm ]] && command -v "${p/nodejs/node}" >/dev/null; then
    continue
  fi
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  [[ $(id -u) -ne 0 ]] || install_trace_engine
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (sudo make ...) or install them with apt-get" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists yet; refresh once, quietly.
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/xtrace-install-deps.log 2>&1; then
  apt-get update -qq >>/tmp/xtrace-install-deps.log 2>&1
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >>/tmp/xtrace-install-deps.log 2>&1 || {
    echo "install-deps: apt-get failed; see /tmp/xtrace-install-deps.log" >&2
    tail -20 /tmp/xtrace-install-deps.log >&2
    exit 1
  }
fi
install_trace_engine
echo "install-deps: done"

#!/usr/bin/env bash
# Installs what xtrace needs to build, test and run from Debian's archive.
# Idempotent and silent when everything is already there; prints what it installs otherwise.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  clang llvm                      # BPF objects (clang -target bpf), llvm-strip
  bpftool libbpf-dev libelf-dev zlib1g-dev linux-libc-dev
  capnproto libcapnp-dev          # event log schema compiler and runtime
  libze1 libze-dev                # the real Level Zero loader and its headers
  libgtest-dev libgmock-dev       # unit and integration tests
  nlohmann-json3-dev              # tests parse the Chrome JSON back
  python3                         # JSON checks in tests
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
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
echo "install-deps: done"

#!/usr/bin/env bash
# Prints what an ITT task begin/end pair costs: without a collector, with libxtrace_itt.so and
# no capture, and (as root) under a capture. A benchmark: it prints figures, asserts none.
#   itt_overhead.sh BIN_DIR LIB_DIR
set -euo pipefail
bin=$1 lib=$2
collector="$lib/libxtrace_itt.so"

env -u INTEL_LIBITTNOTIFY64 "$bin/itt_overhead" --pairs 2000000
INTEL_LIBITTNOTIFY64="$collector" "$bin/itt_overhead" --pairs 2000000
if [[ $(id -u) -eq 0 ]]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  INTEL_LIBITTNOTIFY64="$collector" "$bin/xtrace" record -q --buffer-size 64M \
    -o "$out/overhead.capnp" -- "$bin/itt_overhead" --pairs 20000 | sed 's/$/ under a capture/'
else
  echo "itt_overhead: the cost under a capture needs root (BPF); skipped"
fi

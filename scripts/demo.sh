#!/usr/bin/env bash
# `make demo`: runs the sample Level Zero workload on the simulated GPU, traces it with
# `xtrace record`, converts the log to Chrome trace JSON and says how to open it.
set -euo pipefail

build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$root" && cd "$build" && pwd)
out="$root/demo-out"
mkdir -p "$out"

if [[ $(id -u) -ne 0 ]]; then
  echo "demo: capturing loads BPF programs and needs root; run: sudo make demo" >&2
  exit 1
fi

export ZE_ENABLE_ALT_DRIVERS="$build/lib/libxtrace_simze.so"
echo "demo: tracing build/bin/ze_workload on the simulated GPU ($ZE_ENABLE_ALT_DRIVERS)"
"$build/bin/xtrace" record -o "$out/demo.capnp" -- \
  "$build/bin/ze_workload" --iterations 40 --threads 2 --rounds 3

"$build/bin/xtrace" convert "$out/demo.capnp" -o "$out/demo.json"

# ITT labels: a program started with xtrace's collector labels its launches with tasks.
echo "demo: tracing build/bin/itt_workload: ITT tasks around its launches ($(
  "$build/bin/xtrace" env --shell | tr -d '\n'))"
INTEL_LIBITTNOTIFY64="$build/lib/libxtrace_itt.so" "$build/bin/xtrace" record \
  -o "$out/demo-itt.capnp" -- "$build/bin/itt_workload" --ze --threads 2 --iterations 20
"$build/bin/xtrace" convert "$out/demo-itt.capnp" -o "$out/demo-itt.json"

cat <<MSG

demo: done.
  event log:   $out/demo.capnp
  Chrome JSON: $out/demo.json
  with ITT:    $out/demo-itt.json (tasks "xt.step"/"xt.inner" enclose each launch)
Open https://ui.perfetto.dev and drag demo.json onto it (or use "Open trace file");
chrome://tracing reads it too. Level Zero calls appear on the threads that made them; each GPU
is a process with a track per queue, its kernels and copies marked measured or estimated, and
arrows from the call that submitted them and to the call that waited for them. The
kernel-driver (DRM) ioctls each submission issued appear on the process's "driver" track,
with an arrow from the Level Zero call that issued them.
MSG

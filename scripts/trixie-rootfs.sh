#!/usr/bin/env bash
# Builds, once, a Debian trixie root filesystem with a current Level Zero loader (libze1 1.20.x),
# its headers, a compiler and PyTorch, for the tests that run workloads on that loader (under
# chroot and podman --rootfs). Everything comes from Debian's archive through debootstrap and
# apt-get; the tree is cached and reused while its stamp names the same package list.
#
#   scripts/trixie-rootfs.sh [DIR]     (default /var/cache/xtrace/trixie; root only)
#
# ctest runs it first as the fixture `trixie_rootfs` of the tests that need the tree (so
# `make test` and `ctest -R Paths` alike build it on a fresh machine). Where it cannot be built
# (no debootstrap, the archive unreachable) it says why on stderr and in DIR.failed and exits
# 1; not root, it says so and exits 0 (the tests that need the tree need root anyway). The
# tests then skip quoting DIR.failed, or fail under CI.
set -euo pipefail

dir=${1:-${XTRACE_TRIXIE_ROOT:-/var/cache/xtrace/trixie}}
mirror=http://deb.debian.org/debian
packages=(libze1 libze-dev g++ python3-torch)
stamp_text="trixie minbase ${packages[*]}"
stamp="$dir/.xtrace-stamp"
failed="$dir.failed"

built() { [[ -f "$stamp" && "$(cat "$stamp")" == "$stamp_text" ]]; }

built && exit 0
if [[ $(id -u) -ne 0 ]]; then
  echo "trixie-rootfs: $dir is not built; run as root to build it (debootstrap needs root)" >&2
  exit 0
fi
mkdir -p "$(dirname "$dir")"
# Two test runs at once (two worktrees, or ctest and make test) build it once: the second waits.
exec 9>"$dir.lock"
flock 9
built && exit 0

log=/tmp/xtrace-trixie-rootfs.log
fail() {
  echo "trixie-rootfs: $1 failed; see $log" >&2
  {
    echo "$1 failed ($(date -u +%FT%TZ)); the end of $log:"
    tail -5 "$log" 2>/dev/null || true
  } >"$failed"
  tail -20 "$log" >&2 2>/dev/null || true
  exit 1
}
command -v debootstrap >/dev/null || {
  echo "debootstrap is missing; run scripts/install-deps.sh" >"$log"
  fail "finding debootstrap"
}

echo "trixie-rootfs: building a Debian trixie tree with ${packages[*]} in $dir (a few minutes, once; log in $log)"
# A half-built tree from an interrupted run is started over: debootstrap refuses to resume.
rm -rf "$dir.partial"
debootstrap --variant=minbase trixie "$dir.partial" "$mirror" >"$log" 2>&1 || fail debootstrap
# apt-get inside the tree needs /proc and name resolution; the host's resolv.conf serves.
cp /etc/resolv.conf "$dir.partial/etc/resolv.conf"
mount -t proc proc "$dir.partial/proc"
trap 'umount "$dir.partial/proc" 2>/dev/null || true' EXIT
DEBIAN_FRONTEND=noninteractive chroot "$dir.partial" apt-get install -y -qq \
  --no-install-recommends "${packages[@]}" >>"$log" 2>&1 || fail "apt-get install ${packages[*]}"
chroot "$dir.partial" apt-get clean >>"$log" 2>&1 || true
umount "$dir.partial/proc"
trap - EXIT
echo "$stamp_text" >"$dir.partial/.xtrace-stamp"
rm -rf "$dir" "$failed"
mv "$dir.partial" "$dir"
echo "trixie-rootfs: done ($dir)"

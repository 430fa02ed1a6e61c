#!/usr/bin/env bash
# Builds, once, a Debian trixie root filesystem with a current Level Zero loader (libze1 1.20.x),
# its headers, a compiler and PyTorch, for the tests that run workloads on that loader (under
# chroot and podman --rootfs). Everything comes from Debian's archive through debootstrap and
# apt-get; the tree is cached and reused while its stamp names the same package list.
#
#   scripts/trixie-rootfs.sh [DIR]     (default /var/cache/xtrace/trixie; root only)
#
# `make test` runs it before ctest; tests find the tree there (or in XTRACE_TRIXIE_ROOT) and
# skip with a message when it is missing.
set -euo pipefail

dir=${1:-${XTRACE_TRIXIE_ROOT:-/var/cache/xtrace/trixie}}
mirror=http://deb.debian.org/debian
packages=(libze1 libze-dev g++ python3-torch)
stamp_text="trixie minbase ${packages[*]}"
stamp="$dir/.xtrace-stamp"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$stamp_text" ]]; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "trixie-rootfs: $dir is not built; run as root to build it (debootstrap needs root)" >&2
  exit 0
fi
command -v debootstrap >/dev/null || {
  echo "trixie-rootfs: debootstrap is missing; run scripts/install-deps.sh" >&2
  exit 1
}

log=/tmp/xtrace-trixie-rootfs.log
echo "trixie-rootfs: building a Debian trixie tree with ${packages[*]} in $dir (a few minutes, once; log in $log)"
# A half-built tree from an interrupted run is started over: debootstrap refuses to resume.
rm -rf "$dir.partial"
mkdir -p "$(dirname "$dir")"
fail() {
  echo "trixie-rootfs: $1 failed; see $log" >&2
  tail -20 "$log" >&2
  exit 1
}
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
rm -rf "$dir"
mv "$dir.partial" "$dir"
echo "trixie-rootfs: done ($dir)"

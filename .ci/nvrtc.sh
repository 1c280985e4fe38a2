#!/usr/bin/env bash
# Fetches Debian's NVRTC (non-free, CUDA 11.8) into a scratch folder, with
# an apt configuration of its own (the machine's sources stay as they
# are), and prints the folder that holds libnvrtc.so.*: the GPU kernels'
# compile test (NSRNN_TEST_NVRTC_DIR) checks with it, without a GPU, that
# every kernel compiles.
set -euo pipefail
dir=${1:-/tmp/nsrnn-nvrtc}
lib="$dir/root/usr/lib/x86_64-linux-gnu"
if ls "$lib"/libnvrtc.so.* >/dev/null 2>&1; then
	echo "$lib"
	exit 0
fi
mkdir -p "$dir/lists/partial" "$dir/debs"
. /etc/os-release
printf 'deb http://deb.debian.org/debian %s non-free\n' "${VERSION_CODENAME:-bookworm}" > "$dir/sources.list"
opts=(-o "Dir::Etc::SourceList=$dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null" -o "Dir::State::Lists=$dir/lists" -o "APT::Sandbox::User=root")
apt-get "${opts[@]}" update -qq >&2
(cd "$dir/debs" && apt-get "${opts[@]}" download libnvrtc11.2 libnvrtc-builtins11.8 >&2)
for f in "$dir"/debs/*.deb; do dpkg -x "$f" "$dir/root"; done
ls "$lib"/libnvrtc.so.* >/dev/null
echo "$lib"

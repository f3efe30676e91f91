#!/bin/sh
# deps.sh: installs the Debian packages that building and testing cgprof
# need, asking apt only when one is missing.  Needs root for the install.
set -e
need="make gcc g++ libc6-dev libc6-dbg linux-perf clang binutils libelf-dev libdw-dev libcapstone-dev strace gawk libclang-rt-14-dev tcl8.6"
# cgprof export: protobuf-c and zlib (pprof); the readers its tests open
# the exports in: go tool pprof, callgrind_annotate, dot, headless Chromium
need="$need protobuf-c-compiler libprotobuf-c-dev zlib1g-dev golang-go valgrind graphviz chromium"
# library calls (tests/t0600-libcalls.sh, t0601-libcalls-more.sh): ltrace
# and uftrace count them independently
need="$need ltrace uftrace"
# AArch64 (tests/t0700-aarch64.sh): the cross compiler, its C library and
# binutils (GNU aarch64-linux-gnu-gprof, the truth for its reports), and
# qemu-user to run what it builds
need="$need gcc-aarch64-linux-gnu libc6-dev-arm64-cross binutils-aarch64-linux-gnu qemu-user"
missing=""
for p in $need; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps.sh: installing$missing"
if [ "$(id -u)" -ne 0 ]; then
    echo "deps.sh: not root; install these packages first:$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null

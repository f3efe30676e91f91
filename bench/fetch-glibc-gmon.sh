#!/bin/sh
# fetch-glibc-gmon.sh DIR: glibc's own profiling tests (the gmon/ directory
# of Debian's glibc source package) unpacked into DIR/gmon (once).  Only
# the upstream tarball is downloaded, and only gmon/ taken out of it.
set -e
dir=$1
ls "$dir"/gmon/tst-gmon.c >/dev/null 2>&1 && exit 0
mkdir -p "$dir"
if ! grep -rqs '^deb-src\|^Types:.*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    [ "$(id -u)" -eq 0 ] || { echo "fetch-glibc-gmon.sh: need root to add a deb-src entry" >&2; exit 1; }
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && grep -q '^Types: deb$' "$f" || continue
        sed 's/^Types: deb$/Types: deb-src/' "$f" >"/etc/apt/sources.list.d/cgprof-src-$(basename "$f")"
    done
    if [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list; then
        sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >/etc/apt/sources.list.d/cgprof-src.list
    fi
    apt-get update -qq
fi
cd "$dir"
ls glibc_*.orig.tar.* >/dev/null 2>&1 || apt-get source --download-only -qq glibc >/dev/null 2>&1
tar xf glibc_*.orig.tar.* --wildcards '*/gmon/*'
rm -rf gmon && mv glibc-*/gmon gmon && rm -rf glibc-*/
ls "$dir"/gmon/tst-gmon.c >/dev/null

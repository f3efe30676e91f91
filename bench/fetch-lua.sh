#!/bin/sh
# fetch-lua.sh DIR: unpacks Debian's lua5.4 source package into DIR (once).
# apt-get source needs a deb-src entry; if the machine has none, one is
# made from its own deb entries (same mirrors, same suites).
set -e
dir=$1
ls "$dir"/lua5.4-*/src/lua.c >/dev/null 2>&1 && exit 0
mkdir -p "$dir"
if ! grep -rqs '^deb-src\|^Types:.*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    [ "$(id -u)" -eq 0 ] || { echo "fetch-lua.sh: need root to add a deb-src entry" >&2; exit 1; }
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && grep -q '^Types: deb$' "$f" || continue
        sed 's/^Types: deb$/Types: deb-src/' "$f" >"/etc/apt/sources.list.d/cgprof-src-$(basename "$f")"
    done
    if [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list; then
        sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >/etc/apt/sources.list.d/cgprof-src.list
    fi
    apt-get update -qq
fi
command -v dpkg-source >/dev/null || apt-get install -y -qq dpkg-dev >/dev/null
cd "$dir" && apt-get source -qq lua5.4 >/dev/null 2>&1
ls "$dir"/lua5.4-*/src/lua.c >/dev/null

#!/bin/sh
# fetch-sqlite.sh DIR: unpacks Debian's sqlite3 source package into DIR
# (once) and makes the amalgamation sqlite3.c and speedtest1.c's home there
# (configure and make need tclsh; tcl8.6 is in scripts/deps.sh).
# apt-get source needs a deb-src entry; fetch-lua.sh makes one if missing.
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
dir=$(cd "$1" && pwd)
ls "$dir"/sqlite3-*/sqlite3.c "$dir"/sqlite3-*/test/speedtest1.c >/dev/null 2>&1 && exit 0
if ! grep -rqs '^deb-src\|^Types:.*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    sh "$ROOT/bench/fetch-lua.sh" "$dir/../lua-src" >/dev/null # adds the deb-src entry
fi
command -v dpkg-source >/dev/null || apt-get install -y -qq dpkg-dev >/dev/null
ls -d "$dir"/sqlite3-*/ >/dev/null 2>&1 || (cd "$dir" && apt-get source -qq sqlite3 >/dev/null 2>&1)
src=$(ls -d "$dir"/sqlite3-*/ | head -n 1)
cd "$src" && { [ -f Makefile ] || ./configure >/dev/null; } && make -s sqlite3.c >/dev/null 2>&1
ls "$src"/sqlite3.c "$src"/test/speedtest1.c >/dev/null

#!/bin/sh
# make-corpus.sh: regenerates the fuzzer's seed corpus in tests/fuzz/corpus/
# from a real profile of tests/progs/calls.c (each file under 4 KB).
# Needs gcc with -pg and, for the libcgprof profile, make's build/.
# The cgprof profiles in tests/fuzz/corpus-cgdata/ are recorded by hand
# (cgprof record -o) and then passed through tests/fuzz/relpaths.py, which
# replaces scratch-directory module paths with base names.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/tests/fuzz/corpus
T=$(mktemp -d "${TMPDIR:-/tmp}/cgprof-corpus.XXXXXX")
trap 'rm -rf "$T"' EXIT
cc -std=c11 -O1 -D_GNU_SOURCE -I"$ROOT/analysis" "$ROOT/tests/unit/gmon_tool.c" \
    "$ROOT/analysis/gmon.c" "$ROOT/analysis/gmon_write.c" -lm -o "$T/tool"
gcc -O2 -pg "$ROOT/tests/progs/calls.c" -o "$T/calls"
cd "$T"
./calls >/dev/null && mv gmon.out glibc.out
LD_PRELOAD=$ROOT/build/libcgprof.so ./calls >/dev/null && mv gmon.out cgprof.out

# split A B OUT: the fuzz target's two-file input, "SPLT", A's length, A, B
split() {
    n=$(wc -c <"$1")
    { printf 'SPLT' && printf "\\$(printf %03o $((n % 256)))\\$(printf %03o $((n / 256)))" &&
        cat "$1" "$2"; } >"$3"
}

mkdir -p "$OUT"
./tool edit glibc.out small.out nbins=64
./tool edit cgprof.out "$OUT/gnu-cgprof-small.out" nbins=64
./tool edit small.out "$OUT/gnu-bb.out" bb=2
./tool edit small.out far.out shift=0x100000
./tool bsd44 small.out "$OUT/bsd44-small.out"
./tool bsdold small.out "$OUT/bsdold-small.out"
cp small.out "$OUT/gnu-small.out"
cp glibc.out "$OUT/gnu-glibc.out"
split small.out far.out "$OUT/two-gnu-disjoint.split"
split small.out "$OUT/bsd44-small.out" "$OUT/gnu-then-bsd44.split"
ls -l "$OUT"

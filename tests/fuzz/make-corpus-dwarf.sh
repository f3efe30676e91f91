#!/bin/sh
# make-corpus-dwarf.sh: regenerates the DWARF fuzzer's seeds in
# tests/fuzz/corpus-dwarf/: a tiny program with an inlined function, built
# -O2 with DWARF 5, DWARF 4 and compressed DWARF 5 (about 17 KB each).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/tests/fuzz/corpus-dwarf
T=$(mktemp -d "${TMPDIR:-/tmp}/cgprof-corpus.XXXXXX")
trap 'rm -rf "$T"' EXIT
cat >"$T/seed.c" <<'C'
static inline int sq(int x) { return x * x; }
static int f(int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(i); return s; }
int main(int argc, char **argv) { (void)argv; return f(argc) & 1; }
C
mkdir -p "$OUT"
# built where the source is, its directory mapped to "." in the DWARF:
# the seeds name no machine's directories
cd "$T"
MAP="-ffile-prefix-map=$T=."
gcc -O2 -g $MAP seed.c -o "$OUT/dwarf5"
gcc -O2 -gdwarf-4 $MAP seed.c -o "$OUT/dwarf4"
gcc -O2 -g -gz $MAP seed.c -o "$OUT/dwarf5-zlib"

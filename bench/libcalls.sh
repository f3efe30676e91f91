#!/bin/sh
# bench/libcalls.sh: the cost of counting one library call (docs/libcalls.md)
# beside what glibc's mcount adds to one -pg call.  Called by bench/run.sh
# with W, BUILD and RUNS set, or alone.  Medians of RUNS runs, CPU time.
#
#   library call = (counted - not counted) / calls: a -pg loop calling a
#                  trivial function of a library built without -pg, under
#                  libcgprof with CGPROF_LIBCALLS=1 against =0
#   glibc mcount = (glibc's gmon runtime - empty mcount) / calls: the same
#                  loop calling a trivial -pg function of its own
#   -fno-plt     = the library call again, the loop built -fno-plt: its
#                  call *triv@GOTPCREL(%rip) patched into a call to a
#                  trampoline (docs/libcalls.md)
#   --lib-calls=all = the same as library call, the loop built without -pg,
#                  CGPROF_LIBCALLS=all against =0
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
RUNS=${RUNS:-11}
W=${W:-${BENCH_OUT:-$ROOT/bench/out}}
N=${LIBCALL_N:-20000000}
mkdir -p "$W"
LIB=$BUILD/libcgprof.so
[ -x "$W/cputime" ] || cc -O2 -o "$W/cputime" "$ROOT/bench/cputime.c"
[ -f "$W/empty.so" ] || cc -shared -o "$W/empty.so" "$ROOT/bench/empty_mcount.S"
gcc -O2 -fPIC -shared -DLIBTRIV "$ROOT/bench/libcall.c" -o "$W/libtriv.so"
gcc -O2 -pg "$ROOT/bench/libcall.c" -o "$W/libcall" -L"$W" -ltriv -Wl,-rpath,"$W"
gcc -O2 -pg -fno-plt "$ROOT/bench/libcall.c" -o "$W/libcall_noplt" -L"$W" -ltriv -Wl,-rpath,"$W"
gcc -O2 "$ROOT/bench/libcall.c" -o "$W/libcall_plain" -L"$W" -ltriv -Wl,-rpath,"$W"
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
for v in on off glibc floor npon npoff all none; do : >"$W/lc.$v"; done
i=0
while [ $i -lt "$RUNS" ]; do
    "$W/cputime" LD_PRELOAD="$LIB" CGPROF_FORMAT=cgprof CGPROF_FREQ=0 CGPROF_OUTPUT="$W/lc.data" \
        CGPROF_LIBCALLS=1 "$W/libcall" lib $N >>"$W/lc.on"
    "$W/cputime" LD_PRELOAD="$LIB" CGPROF_FORMAT=cgprof CGPROF_FREQ=0 CGPROF_OUTPUT="$W/lc.data" \
        CGPROF_LIBCALLS=0 "$W/libcall" lib $N >>"$W/lc.off"
    "$W/cputime" GMON_OUT_PREFIX="$W/glibc-gmon" "$W/libcall" pg $N >>"$W/lc.glibc"
    "$W/cputime" LD_PRELOAD="$W/empty.so" "$W/libcall" pg $N >>"$W/lc.floor"
    "$W/cputime" LD_PRELOAD="$LIB" CGPROF_FORMAT=cgprof CGPROF_FREQ=0 CGPROF_OUTPUT="$W/lc.data" \
        CGPROF_LIBCALLS=1 "$W/libcall_noplt" lib $N >>"$W/lc.npon"
    "$W/cputime" LD_PRELOAD="$LIB" CGPROF_FORMAT=cgprof CGPROF_FREQ=0 CGPROF_OUTPUT="$W/lc.data" \
        CGPROF_LIBCALLS=0 "$W/libcall_noplt" lib $N >>"$W/lc.npoff"
    "$W/cputime" LD_PRELOAD="$LIB" CGPROF_FORMAT=cgprof CGPROF_FREQ=0 CGPROF_OUTPUT="$W/lc.data" \
        CGPROF_LIBCALLS=all "$W/libcall_plain" lib $N >>"$W/lc.all"
    "$W/cputime" LD_PRELOAD="$LIB" CGPROF_FORMAT=cgprof CGPROF_FREQ=0 CGPROF_OUTPUT="$W/lc.data" \
        CGPROF_LIBCALLS=0 "$W/libcall_plain" lib $N >>"$W/lc.none"
    i=$((i + 1))
done
rm -f "$W"/glibc-gmon.* "$W"/lc.data.*
# the calls really were counted: the profile's arc main -> triv
"$BUILD/cgprof" record -F 0 -o "$W/lc.data" "$W/libcall" lib $N
counted=$("$BUILD/cgprof" report -b -q "$W/lc.data" 2>/dev/null |
    awk -f "$ROOT/tests/arcs.awk" | awk '$1 == "main" && $2 == "triv" { print $3 }' | sort -u)
"$BUILD/cgprof" record -F 0 -o "$W/lc.data" "$W/libcall_noplt" lib $N
npcounted=$("$BUILD/cgprof" report -b -q "$W/lc.data" 2>/dev/null |
    awk -f "$ROOT/tests/arcs.awk" | awk '$1 == "main" && $2 == "triv" { print $3 }' | sort -u)
"$BUILD/cgprof" record -F 0 --lib-calls=all -o "$W/lc.data" "$W/libcall_plain" lib $N
counted_all=$("$BUILD/cgprof" report -b -q "$W/lc.data" 2>/dev/null |
    awk -f "$ROOT/tests/arcs.awk" | awk '$1 == "main" && $2 == "triv" { print $3 }' | sort -u)
awk -v on="$(median <"$W/lc.on")" -v off="$(median <"$W/lc.off")" -v g="$(median <"$W/lc.glibc")" \
    -v f="$(median <"$W/lc.floor")" -v n=$N -v counted="${counted:-0}" \
    -v npon="$(median <"$W/lc.npon")" -v npoff="$(median <"$W/lc.npoff")" \
    -v npcounted="${npcounted:-0}" \
    -v all="$(median <"$W/lc.all")" -v none="$(median <"$W/lc.none")" -v counted_all="${counted_all:-0}" 'BEGIN {
    lc = (on - off) * 1e6 / n; gm = (g - f) * 1e6 / n
    printf "library calls: %d calls to a trivial function of a library built without -pg\n", n
    printf "  counted %d ms, not counted %d ms: %.2f ns per counted call (%d counted)\n", on, off, lc, counted
    np = (npon - npoff) * 1e6 / n
    printf "  -fno-plt: counted %d ms, not counted %d ms: %.2f ns per counted call (%d counted)\n",
        npon, npoff, np, npcounted
    printf "  glibc mcount: %d ms, empty mcount %d ms: %.2f ns per -pg call\n", g, f, gm
    printf "  --lib-calls=all, the loop built without -pg: %d ms, not counted %d ms: %.2f ns per counted call (%d counted)\n",
        all, none, (all - none) * 1e6 / n, counted_all
    r = gm > 0 ? lc / gm : 0
    printf "  RATIO library call / glibc mcount: %.2f  (target <= 0.33) %s\n", r,
        r <= 0.33 ? "PASS" : "OVER"
    r = gm > 0 ? np / gm : 0
    printf "  RATIO -fno-plt library call / glibc mcount: %.2f  (target <= 0.33) %s\n\n", r,
        r <= 0.33 ? "PASS" : "OVER"
}'

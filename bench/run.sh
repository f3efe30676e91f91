#!/bin/sh
# bench/run.sh: overhead of cgprof's runtime against glibc's, measured side
# by side in one run, the cost of sampling, and the speed of reports (flat
# profile and call graph of Lua; line by line, -l, of SQLite).  Prints a
# table; every figure is the median CPU time (user + system) of RUNS runs
# (default 7), taken in turn so that drifts of this shared machine hit
# each variant alike.
#
#   per-call cost = (time with the runtime - time with an empty mcount) / calls
#   ratio         = cgprof's added cost, counts only / glibc's added cost
#                   (required <= 0.10)
#
# BASE=COMMIT (make bench BASE=0bc9cbf): also builds that commit's runtime
# and cgprof (git archive into $W/base) and runs it beside the working
# tree's in the same interleaved loop, so a change that makes a figure
# worse shows as one more column, measured under the same load; and the
# stubs' instructions a call (callgrind) of both, exact under any load.
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
RUNS=${RUNS:-7}
W=${BENCH_OUT:-$ROOT/bench/out}
mkdir -p "$W"
LIB=$BUILD/libcgprof.so
BASE=${BASE:-}
BASELIB=
if [ -n "$BASE" ]; then
    echo "== building BASE=$BASE in $W/base"
    rm -rf "$W/base" && mkdir -p "$W/base"
    git -C "$ROOT" archive "$BASE" | tar -x -C "$W/base"
    make -C "$W/base" -j2 all >"$W/base.log" 2>&1 || { echo "bench: building $BASE failed (see $W/base.log)" >&2; exit 1; }
    BASELIB=$W/base/build/libcgprof.so
fi

# ms [VAR=VALUE...] CMD...: CPU time (user + system) of one run in ms
ms() {
    "$W/cputime" "$@" 2>/dev/null
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# spread: half the interquartile range of the numbers on stdin (the run's own noise)
spread() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print int((a[int(NR * 3 / 4) + (NR > 1)] - a[int(NR / 4) + 1]) / 2); else print 0 }'; }

# measure NAME CMD... over variants: appends "NAME variant ms" lines to $W/times
# Variants: plain (built without -pg), floor (empty mcount), glibc, cgprof.
measure() {
    name=$1 plain=$2 pg=$3
    shift 3
    : >"$W/$name.plain"; : >"$W/$name.floor"; : >"$W/$name.glibc"; : >"$W/$name.cgprof"
    : >"$W/$name.cgprof0"; : >"$W/$name.base0"
    i=0
    while [ $i -lt "$RUNS" ]; do
        ms "$plain" "$@" >>"$W/$name.plain"
        ms LD_PRELOAD="$W/empty.so" "$pg" "$@" >>"$W/$name.floor"
        ms GMON_OUT_PREFIX="$W/glibc-gmon" "$pg" "$@" >>"$W/$name.glibc"
        ms LD_PRELOAD="$LIB" CGPROF_OUTPUT="$W/cg-gmon" "$pg" "$@" >>"$W/$name.cgprof"
        ms LD_PRELOAD="$LIB" CGPROF_OUTPUT="$W/cg-gmon" CGPROF_FREQ=0 "$pg" "$@" >>"$W/$name.cgprof0"
        if [ -n "$BASELIB" ]; then
            ms LD_PRELOAD="$BASELIB" CGPROF_OUTPUT="$W/cg-gmon" CGPROF_FREQ=0 "$pg" "$@" >>"$W/$name.base0"
        fi
        i=$((i + 1))
    done
    rm -f "$W"/glibc-gmon.*
}

report() {
    name=$1 label=$2 calls=$3
    p=$(median <"$W/$name.plain"); f=$(median <"$W/$name.floor")
    g=$(median <"$W/$name.glibc"); c=$(median <"$W/$name.cgprof"); c0=$(median <"$W/$name.cgprof0")
    b0=$(median <"$W/$name.base0"); fs=$(spread <"$W/$name.floor")
    awk -v n="$label" -v p="$p" -v f="$f" -v g="$g" -v c="$c" -v c0="$c0" -v calls="$calls" \
        -v b0="$b0" -v base="$BASE" -v fs="$fs" 'BEGIN {
        printf "%s: %d calls; unprofiled %d ms, empty-mcount floor %d ms\n", n, calls, p, f
        printf "  glibc  %5d ms  +%4d ms over floor  %.2f ns/call\n", g, g - f, (g - f) * 1e6 / calls
        printf "  cgprof %5d ms  +%4d ms over floor  %.2f ns/call  (1 kHz sampling on)\n", c, c - f, (c - f) * 1e6 / calls
        printf "  cgprof %5d ms  +%4d ms over floor  %.2f ns/call  (counts only, CGPROF_FREQ=0)\n", c0, c0 - f, (c0 - f) * 1e6 / calls
        if (b0 != "")
            printf "  BASE %s %5d ms  +%4d ms over floor  %.2f ns/call  (counts only)\n", base, b0, b0 - f, (b0 - f) * 1e6 / calls
        printf "  noise: floor runs spread +-%d ms (half the middle half)\n", fs
        r = (g > f) ? (c0 - f) / (g - f) : 0
        printf "  RATIO cgprof/glibc added cost, counts only: %.2f  (required <= 0.10) %s\n", r, r <= 0.1 ? "PASS" : "FAIL"
        if (b0 != "") { rb = (g > f) ? (b0 - f) / (g - f) : 0; printf "  RATIO of BASE %s: %.2f\n", base, rb }
        printf "\n"
    }'
}

# calls CMD...: total calls counted by cgprof for one run (arc counts summed)
calls() {
    rm -f "$W/count.out"
    env LD_PRELOAD="$LIB" CGPROF_FREQ=0 CGPROF_OUTPUT="$W/count.out" "$@" >/dev/null
    gprof -b -q "$1" "$W/count.out" | awk -f "$ROOT/tests/arcs.awk" | sort -u |
        awk '{ s += $3 } END { print s }'
}

echo "== building benchmarks in $W"
cc -shared -o "$W/empty.so" "$ROOT/bench/empty_mcount.S"
cc -O2 -o "$W/cputime" "$ROOT/bench/cputime.c"
cc -O2 -o "$W/perfclock" "$ROOT/bench/perfclock.c"
gcc -O2 "$ROOT/bench/fib.c" -o "$W/fib"
gcc -O2 -pg "$ROOT/bench/fib.c" -o "$W/fib_pg"
gcc -O2 "$ROOT/bench/cpuwork.c" -o "$W/cpuwork_pg_free"
gcc -O2 -pg "$ROOT/bench/cpuwork.c" -o "$W/cpuwork"
gcc -O2 -pg -pthread "$ROOT/bench/fibthreads.c" -o "$W/fibthreads"

sh "$ROOT/bench/fetch-lua.sh" "$W/lua-src"
LUA=$(ls -d "$W"/lua-src/lua5.4-*/src)
mkdir -p "$W/luainc"
echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' >"$W/luainc/lua5.4-deb-multiarch.h"
LUASRC=$(ls "$LUA"/*.c | grep -v -e /luac.c -e /onelua.c)
[ -x "$W/lua_pg" ] || gcc -O2 -pg -DLUA_USE_LINUX -I"$W/luainc" -o "$W/lua_pg" $LUASRC -lm -ldl
[ -x "$W/lua" ] || gcc -O2 -DLUA_USE_LINUX -I"$W/luainc" -o "$W/lua" $LUASRC -lm -ldl
LUASCRIPT=$ROOT/bench/workload.lua

echo "== measuring ($RUNS runs each, medians)"
echo
FIBN=${FIBN:-35}
measure fib "$W/fib" "$W/fib_pg" $FIBN
report fib "fib($FIBN), gcc -O2 -pg" "$(calls "$W/fib_pg" $FIBN)"

measure lua "$W/lua" "$W/lua_pg" "$LUASCRIPT"
report lua "Lua 5.4 (Debian source, gcc -O2 -pg) running bench/workload.lua" \
    "$(calls "$W/lua_pg" "$LUASCRIPT")"

# Instructions a call in the counting stubs, as callgrind counts them:
# not timed, so the same on a loaded machine, and a change to a fast path
# shows here exactly even where the timings above are within their noise
# (t0150 holds HEAD's; this puts BASE beside it).
if command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then
    gcc -O2 -pg "$ROOT/tests/progs/hitpath.c" -o "$W/hitpath"
    # irs LIBSO FUNCTION CMD...: instructions in FUNCTION (cgprof format,
    # so that library calls are counted too)
    irs() {
        so=$1 fn=$2
        shift 2
        env LD_PRELOAD="$so" CGPROF_FORMAT=cgprof CGPROF_FREQ=0 CGPROF_OUTPUT="$W/cg-ir.out" \
            valgrind --tool=callgrind \
            --callgrind-out-file="$W/callgrind.out" "$@" >/dev/null 2>&1 &&
            callgrind_annotate --threshold=100 "$W/callgrind.out" |
            awk -v f="$fn" 'index($0, ":" f " [") { gsub(/,/, "", $1); print $1; exit }'
    }
    echo "instructions a call in the stubs (callgrind, counts only):"
    for what in "fib(25)|mcount|$W/fib_pg 25" "Lua 5.4 workload|mcount|$W/lua_pg $LUASCRIPT" \
        "100,000 strlen calls|cg_lc_common|$W/hitpath lib 100000"; do
        label=${what%%|*} rest=${what#*|} fn=${rest%%|*} cmd=${rest#*|}
        if [ "$fn" = mcount ]; then
            # shellcheck disable=SC2086
            n=$(($(calls $cmd) + 1))
        else
            n=100000
        fi
        # shellcheck disable=SC2086
        h=$(irs "$LIB" $fn $cmd)
        b=
        # shellcheck disable=SC2086
        [ -n "$BASELIB" ] && b=$(irs "$BASELIB" $fn $cmd)
        awk -v l="$label" -v f="$fn" -v n="$n" -v h="$h" -v b="$b" -v base="$BASE" 'BEGIN {
            printf "  %-22s %-12s HEAD %6.2f a call", l, f, h / n
            if (base != "") printf ", BASE %s %6.2f (%+.2f)", base, b / n, (h - b) / n
            printf "  (%d calls)\n", n }'
    done
    rm -f "$W/callgrind.out" "$W/cg-ir.out"
    echo
fi

# Library calls (docs/libcalls.md): one counted beside one glibc mcount.
W="$W" BUILD="$BUILD" RUNS="$RUNS" sh "$ROOT/bench/libcalls.sh"

# Report speed: cgprof report -b against gprof -b on Lua's gmon.out.
env LD_PRELOAD="$LIB" CGPROF_OUTPUT="$W/lua.gmon" "$W/lua_pg" "$LUASCRIPT" >/dev/null
: >"$W/r.gprof"; : >"$W/r.cgprof"
i=0
while [ $i -lt "$RUNS" ]; do
    ms gprof -b "$W/lua_pg" "$W/lua.gmon" >>"$W/r.gprof"
    ms "$BUILD/cgprof" report -b "$W/lua_pg" "$W/lua.gmon" >>"$W/r.cgprof"
    i=$((i + 1))
done
rg=$(median <"$W/r.gprof"); rc=$(median <"$W/r.cgprof")
awk -v a="$rg" -v b="$rc" 'BEGIN {
    printf "report: flat profile + call graph of Lua 5.4 (-b), CPU time:\n"
    printf "  gprof %d ms, cgprof report %d ms (target: no slower than gprof) %s\n\n", a, b, b <= a ? "PASS" : "SLOWER"
}'

# Line-level report: cgprof report -l against gprof -l on SQLite's
# speedtest1 (Debian source, -O2 -g -pg), same bytes.  gprof -l looks up
# every byte of the text one by one and takes tens of seconds, so it runs
# once; cgprof report -l RUNS times (median).
sh "$ROOT/bench/fetch-sqlite.sh" "$W/sqlite-src"
SQ=$(ls -d "$W"/sqlite-src/sqlite3-*/ | head -n 1)
[ -x "$W/speedtest1" ] || gcc -O2 -g -pg -DSQLITE_OMIT_LOAD_EXTENSION -I"$SQ" \
    "$SQ/test/speedtest1.c" "$SQ/sqlite3.c" -o "$W/speedtest1" -lm -lpthread
[ -x "$W/speedtest1_plain" ] || gcc -O2 -g -DSQLITE_OMIT_LOAD_EXTENSION -I"$SQ" \
    "$SQ/test/speedtest1.c" "$SQ/sqlite3.c" -o "$W/speedtest1_plain" -lm -lpthread
SQARGS="--memdb --size ${SQSIZE:-10}"
# shellcheck disable=SC2086
measure sqlite "$W/speedtest1_plain" "$W/speedtest1" $SQARGS
# shellcheck disable=SC2086
report sqlite "SQLite speedtest1 $SQARGS (Debian source, gcc -O2 -g -pg)" "$(calls "$W/speedtest1" $SQARGS)"

# Reading the SQLite profile: cgprof report and export -f html on a cgprof
# record profile (stacks on), beside gprof -b on a gmon.out of the same
# workload (the working tree's runtime, gmon format); BASE's cgprof beside.
# shellcheck disable=SC2086
"$BUILD/cgprof" record -o "$W/sq.data" "$W/speedtest1" $SQARGS >/dev/null
# shellcheck disable=SC2086
env LD_PRELOAD="$LIB" CGPROF_OUTPUT="$W/sq.gmon" "$W/speedtest1" $SQARGS >/dev/null
for v in gprof report html breport bhtml; do : >"$W/q.$v"; done
i=0
while [ $i -lt "$RUNS" ]; do
    ms gprof -b "$W/speedtest1" "$W/sq.gmon" >>"$W/q.gprof"
    ms "$BUILD/cgprof" report "$W/sq.data" >>"$W/q.report"
    ms "$BUILD/cgprof" export -f html -o "$W/sq.html" "$W/sq.data" >>"$W/q.html"
    if [ -n "$BASELIB" ]; then
        # an older cgprof may not read this profile or know the format: "failed"
        t=$(ms "$W/base/build/cgprof" report "$W/sq.data") || t=failed
        echo "$t" >>"$W/q.breport"
        t=$(ms "$W/base/build/cgprof" export -f html -o "$W/sq.bhtml" "$W/sq.data") || t=failed
        echo "$t" >>"$W/q.bhtml"
    fi
    i=$((i + 1))
done
awk -v g="$(median <"$W/q.gprof")" -v r="$(median <"$W/q.report")" -v h="$(median <"$W/q.html")" \
    -v br="$(median <"$W/q.breport")" -v bh="$(median <"$W/q.bhtml")" -v base="$BASE" \
    -v size="$(wc -c <"$W/sq.data")" 'BEGIN {
    printf "reading the SQLite profile (%d KB, stacks on), CPU time:\n", size / 1024
    printf "  gprof -b (gmon.out) %d ms; cgprof report %d ms; cgprof export -f html %d ms\n", g, r, h
    if (base != "") printf "  BASE %s: cgprof report %s ms; export -f html %s ms\n", base, br, bh
    printf "\n"
}'
(cd "$W" && rm -f gmon.out && ./speedtest1 >/dev/null && mv gmon.out speedtest1.gmon)
lg=$(ms sh -c 'gprof -b -l "$1" "$2" >"$3"' sh "$W/speedtest1" "$W/speedtest1.gmon" "$W/l.gprof")
: >"$W/l.cgprof"
i=0
while [ $i -lt "$RUNS" ]; do
    ms "$BUILD/cgprof" report -b -l "$W/speedtest1" "$W/speedtest1.gmon" >>"$W/l.cgprof"
    i=$((i + 1))
done
"$BUILD/cgprof" report -b -l "$W/speedtest1" "$W/speedtest1.gmon" >"$W/l.cgprof.out"
same=no
cmp -s "$W/l.gprof" "$W/l.cgprof.out" && same=yes
awk -v a="$lg" -v b="$(median <"$W/l.cgprof")" -v same=$same -v n="$(wc -l <"$W/l.gprof")" 'BEGIN {
    r = b > 0 ? a / b : a
    printf "line-level report (-b -l) of SQLite speedtest1 (-O2 -g -pg), CPU time:\n"
    printf "  gprof %d ms, cgprof report %d ms: %.0fx faster (target >= 100x) %s; %d lines, same bytes: %s\n\n",
        a, b, r, r >= 100 ? "PASS" : "SLOWER", n, same
}'

# Threads: the same work per thread on 1 and on 2 threads (2 cores), call
# counting only (CGPROF_FREQ=0), against the empty-mcount floor; CPU time
# per thread stays the same when threads do not contend.  glibc's runtime
# for contrast (it also drops calls under threads).
for v in floor cgprof glibc; do : >"$W/t1.$v"; : >"$W/t2.$v"; done
i=0
while [ $i -lt "$RUNS" ]; do
    for t in 1 2; do
        ms LD_PRELOAD="$W/empty.so" "$W/fibthreads" $t 35 >>"$W/t$t.floor"
        ms LD_PRELOAD="$LIB" CGPROF_FREQ=0 CGPROF_OUTPUT="$W/cg-gmon" "$W/fibthreads" $t 35 \
            >>"$W/t$t.cgprof"
        ms GMON_OUT_PREFIX="$W/glibc-gmon" "$W/fibthreads" $t 35 >>"$W/t$t.glibc"
    done
    i=$((i + 1))
done
rm -f "$W"/glibc-gmon.*
echo "threads: fib(35) in each thread, CPU time per thread, 1 thread vs 2 threads:"
for v in floor cgprof glibc; do
    awk -v v=$v -v a="$(median <"$W/t1.$v")" -v b="$(median <"$W/t2.$v")" 'BEGIN {
        printf "  %-7s 1 thread %4d ms, 2 threads %4d ms each: ratio %.2f (1.00 = no contention)\n",
            v, a, b / 2, b / 2 / a }'
done
echo

# Sampling alone: a CPU-bound -pg program with almost no calls, under each
# event source at 1 kHz, against the same runtime with sampling off (as
# cgprof record runs it: own profile format, sampler thread present).
: >"$W/s.off"
for ev in cpu wall cpu-clock; do : >"$W/s.$ev"; done
i=0
while [ $i -lt "$RUNS" ]; do
    ms LD_PRELOAD="$LIB" CGPROF_FORMAT=cgprof CGPROF_OUTPUT="$W/cg-data" CGPROF_FREQ=0 \
        "$W/cpuwork" >>"$W/s.off"
    for ev in cpu wall cpu-clock; do
        ms LD_PRELOAD="$LIB" CGPROF_FORMAT=cgprof CGPROF_OUTPUT="$W/cg-data" CGPROF_FREQ=1000 \
            CGPROF_EVENT=$ev "$W/cpuwork" >>"$W/s.$ev"
    done
    i=$((i + 1))
done
off=$(median <"$W/s.off")
echo "sampling at 1 kHz on a CPU-bound program (CPU time of the whole process, sampler included):"
for ev in cpu wall cpu-clock; do
    on=$(median <"$W/s.$ev")
    awk -v e=$ev -v a="$off" -v b="$on" 'BEGIN {
        o = (b - a) * 100 / a
        printf "  %-9s off %d ms, on %d ms: overhead %.1f%% (target < 2%%) %s\n", e, a, b, o, o < 2 ? "PASS" : "OVER"
    }'
done
echo
# Call stacks (on by default in the cgprof format): Lua, and fib's deep
# recursion (fib(FIBSTK), 38 by default: long enough to time), under
# cgprof record's settings, counts only (-F 0)
# against 1 kHz sampling with and without stacks; CPU time of all the
# process's threads and wall time.  Unwinding cost per sample = (with
# stacks - without) / samples taken.
FIBSTK=${FIBSTK:-38}
for prog in lua fib; do
    for ev in cpu cpu-clock; do
        for v in f0 nostk stk; do : >"$W/k.$prog.$ev.$v"; done
    done
done
i=0
while [ $i -lt "$RUNS" ]; do
    for prog in lua fib; do
        if [ $prog = lua ]; then set -- "$W/lua_pg" "$LUASCRIPT"; else set -- "$W/fib_pg" "$FIBSTK"; fi
        for ev in cpu cpu-clock; do
            "$W/cputime" -w "$BUILD/cgprof" record -e $ev -F 0 -o "$W/k.data" "$@" >>"$W/k.$prog.$ev.f0"
            "$W/cputime" -w "$BUILD/cgprof" record -e $ev --no-stacks -o "$W/k.data" "$@" \
                >>"$W/k.$prog.$ev.nostk"
            "$W/cputime" -w "$BUILD/cgprof" record -e $ev -o "$W/k.$prog.$ev.data" "$@" \
                >>"$W/k.$prog.$ev.stk"
        done
    done
    i=$((i + 1))
done
for prog in lua fib; do
    if [ $prog = lua ]; then
        echo "call stacks: Lua 5.4 running bench/workload.lua, 1 kHz, CPU time of all threads / wall time:"
    else
        echo "call stacks: fib($FIBSTK), recursion $FIBSTK deep, 1 kHz, CPU time of all threads / wall time:"
    fi
    for ev in cpu cpu-clock; do
        k=$W/k.$prog.$ev
        samples=$(python3 "$ROOT/tests/stacks.py" "$k.data" | sed -n 's/^# samples \([0-9]*\).*/\1/p')
        size=$(wc -c <"$k.data")
        f0c=$(cut -d" " -f1 "$k.f0" | median); f0w=$(cut -d" " -f2 "$k.f0" | median)
        nc=$(cut -d" " -f1 "$k.nostk" | median); nw=$(cut -d" " -f2 "$k.nostk" | median)
        sc=$(cut -d" " -f1 "$k.stk" | median); sw=$(cut -d" " -f2 "$k.stk" | median)
        awk -v e=$ev -v f0c="$f0c" -v f0w="$f0w" -v nc="$nc" -v nw="$nw" -v sc="$sc" -v sw="$sw" \
            -v n="$samples" -v size="$size" 'BEGIN {
            oc = (sc - f0c) * 100 / f0c; ow = (sw - f0w) * 100 / f0w
            printf "  -e %-9s counts only (-F 0) %d / %d ms; samples without stacks %d / %d ms; with stacks %d / %d ms\n", e, f0c, f0w, nc, nw, sc, sw
            printf "               stacks vs -F 0: CPU %+.1f%%, wall %+.1f%% (target <= +4%%) %s; unwinding %.1f us per sample (%d samples)\n",
                oc, ow, oc <= 4 && ow <= 4 ? "PASS" : "OVER", n ? (sc - nc) * 1000 / n : 0, n
            printf "               profile with stacks: %d KB (target <= 512 KB) %s\n", size / 1024, size <= 512 * 1024 ? "PASS" : "OVER"
        }'
    done
done
# The floor under the cpu-clock figures: what the kernel charges a thread
# for the event's samples at the same rate with no cgprof at all (each is a
# timer interrupt; on VMs that can cost tens of us).  Stacks' cost over
# counts only is this plus cgprof's own (docs/runtime.md, "Sampling's cost").
printf "  kernel floor: "
"$W/perfclock" 1000 300000000 "$RUNS" || echo "(perf events not permitted)"
echo
rm -f "$W/cg-gmon" "$W/cg-data" "$W"/cg-data.* "$W/count.out" "$W/k.data"

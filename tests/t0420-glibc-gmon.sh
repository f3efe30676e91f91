#!/bin/sh
# t0420: glibc's own profiling tests (gmon/ of Debian's glibc source:
# tst-gmon with its gprof check, tst-gmon-pie, tst-gmon-static,
# tst-gmon-static-pie, tst-sprofil), built as glibc's gmon/Makefile builds
# them and run under libcgprof -- preloaded, linked, statically linked --
# with the programs' own results unchanged.
. "$(dirname "$0")/lib.sh"

SRC=$ROOT/bench/out/glibc-src
if ! sh "$ROOT/bench/fetch-glibc-gmon.sh" "$SRC" >/dev/null 2>&1; then
    test_skip "glibc's gmon tests" "cannot fetch glibc's source with apt-get source"
    test_done
    exit 0
fi
G=$SRC/gmon
gcc -O2 "$PROGS/waitst.c" -o "$WORK/waitst" || exit 1

# glibc's flags: -fno-omit-frame-pointer -pg; tst-gmon and tst-gmon-static
# without PIE, tst-gmon-pie and tst-gmon-static-pie with it; the data in
# GMON_OUT_PREFIX=NAME.data (NAME.data.PID), checked by its gprof script
# gmon_test NAME SRC CHECK HOW CC-FLAGS...: HOW is preload or link
gmon_test() {
    name=$1 src=$2 check=$3 how=$4
    shift 4
    rm -f "$name.data".* &&
    if [ "$how" = preload ]; then
        gcc -fno-omit-frame-pointer -pg "$@" "$G/$src" -o "$name" &&
        GMON_OUT_PREFIX=$name.data LD_PRELOAD=$LIBSO ./"$name"
    else
        gcc -fno-omit-frame-pointer -pg "$@" "$G/$src" $LIBA -o "$name" &&
        nm "$name" | grep -q ' cg_arc_slow$' && GMON_OUT_PREFIX=$name.data ./"$name"
    fi &&
    ls "$name.data".* && sh "$G/$check" gprof "./$name" "$name.data".* | tee check.out &&
    grep -qx PASS check.out
}

test_expect "tst-gmon, preloaded: its gprof check passes" "
    gmon_test tst-gmon tst-gmon.c tst-gmon-gprof.sh preload -no-pie
"
test_expect "tst-gmon, linked with -lcgprof: its gprof check passes" "
    gmon_test tst-gmon-l tst-gmon.c tst-gmon-gprof.sh link -no-pie
"
test_expect "tst-gmon-pie, preloaded: its gprof check passes" "
    gmon_test tst-gmon-pie tst-gmon-pie.c tst-gmon-gprof.sh preload -fPIE -pie
"
test_expect "tst-gmon-static, -static -lcgprof: its gprof check passes" "
    gmon_test tst-gmon-static tst-gmon-static.c tst-gmon-static-gprof.sh link -static -no-pie
"
test_expect "tst-gmon-static-pie, -static-pie -lcgprof: its gprof check passes" "
    gmon_test tst-gmon-static-pie tst-gmon-static-pie.c tst-gmon-static-gprof.sh link \
        -fPIE -static-pie
"

# tst-sprofil: sprofil() at glibc's 100 Hz for 1000 ticks of wall time;
# its counts (buffers and overflow) are ITIMER_PROF's ticks of its CPU
# time.  Counts per CPU second must be those under glibc alone, run side
# by side: within 25% (our sampling's own signals must not reach it --
# they doubled its counts once).
sprofil_counts() {
    awk '/^overflow = / { s += $3 } /\(buffer / { s += $2 } END { print s + 0 }' "$1"
}
# rate OUT PROG: runs PROG, its output in OUT; prints counts per CPU second
rate() {
    out=$1
    shift
    ./waitst -t "$@" >"$out" 2>&1 && grep -q '^exit 0$' "$out" &&
    awk -v n="$(sprofil_counts "$out")" -v c="$(sed -n 's/^cpu //p' "$out")" \
        'BEGIN { if (c > 0) print n * 1000 / c }'
}
test_expect "tst-sprofil, preloaded and static under libcgprof: its counts as under glibc" "
    gcc -O2 $G/tst-sprofil.c -o tst-sprofil &&
    gcc -O2 -static -pg $G/tst-sprofil.c $LIBA -o tst-sprofil-static &&
    { rate glibc.out ./tst-sprofil >glibc.rate & p1=\$!; } &&
    { LD_PRELOAD=$LIBSO rate pre.out ./tst-sprofil >pre.rate & p2=\$!; } &&
    { rate static.out ./tst-sprofil-static >static.rate & p3=\$!; } &&
    wait \$p1 && wait \$p2 && wait \$p3 &&
    echo \"counts per CPU second: glibc \$(cat glibc.rate), preloaded \$(cat pre.rate), static \$(cat static.rate)\" &&
    for r in pre static; do
        awk -v a=\$(cat \$r.rate) -v g=\$(cat glibc.rate) 'BEGIN { d = a / g - 1; if (d < 0) d = -d; exit !(g > 0 && d <= 0.25) }' ||
            return 1
    done
"
test_done

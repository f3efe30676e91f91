#!/bin/sh
# t0230: BSD-format profiles, profiles summed or refused as gprof does, and
# gmon.sum as gmon_write_sum writes it -- each side by side with GNU gprof.
. "$(dirname "$0")/lib.sh"

TOOL=$WORK/gmon_tool
cc -std=c11 -O1 -Wall -Wextra -D_GNU_SOURCE -I"$ROOT/analysis" "$ROOT/tests/unit/gmon_tool.c" \
    "$ROOT/analysis/gmon.c" "$ROOT/analysis/gmon_write.c" -lm -o "$TOOL" || exit 1
gcc -O2 -pg "$PROGS/calls.c" -o "$WORK/calls" &&
    gcc -O2 -pg -no-pie "$PROGS/calls.c" -o "$WORK/callsnp" &&
    gcc -O2 -pg -pthread "$PROGS/threads.c" -o "$WORK/threads" &&
    gcc -O2 -pg "$ROOT/examples/demo.c" -o "$WORK/demo" || exit 1
for prog in calls callsnp threads demo; do
    (cd "$WORK" && rm -f gmon.out && ./$prog >/dev/null && mv gmon.out $prog.glibc &&
        LD_PRELOAD=$LIBSO ./$prog >/dev/null && mv gmon.out $prog.cgprof &&
        for rt in glibc cgprof; do
            $TOOL bsd44 $prog.$rt $prog.$rt.bsd44 && $TOOL bsdold $prog.$rt $prog.$rt.bsdold
        done) || exit 1
done

# same_report PROG FILES...: cgprof report -b prints what gprof -b prints.
same_report() {
    prog=$1
    shift
    gprof -b $prog "$@" >want 2>want.err && $CGPROF report -b $prog "$@" >got && diff -u want got
}

# both_refuse NAME PROG FILES...: gprof and cgprof both exit 1; cgprof's
# error is one line naming NAME, printed within a second.
both_refuse() {
    name=$1
    shift
    timeout 20 gprof -b "$@" >/dev/null 2>&1
    test $? -eq 1 || { echo "gprof did not refuse"; return 1; }
    fast_refusal "$name" "$@"
}

# fast_refusal NAME PROG FILES...: cgprof's one-line error naming NAME, at
# once: within 2 s of CPU (the process's own clock, which a busy machine
# does not stretch as it stretches wall time: a 1 s wall bound failed under
# the sanitizers beside other builds), and 20 s of wall time at most.
fast_refusal() {
    name=$1
    shift
    cpu=$(python3 -c 'import resource, subprocess, sys
with open("out", "w") as o, open("err", "w") as e:
    try:
        rc = subprocess.run(sys.argv[1:], stdout=o, stderr=e, timeout=20).returncode
    except subprocess.TimeoutExpired:
        rc = 124
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(rc, int(1000 * (r.ru_utime + r.ru_stime)))' "$CGPROF" report -b "$@")
    set -- $cpu
    rc=$1 ms=$2
    test "$rc" -eq 1 && test "$(wc -l <err)" -eq 1 && grep -q "$name" err && test "$ms" -lt 2000 ||
        { echo "rc=$rc, $ms ms of CPU"; cat err; return 1; }
}

# ---- BSD formats ----
for prog in calls callsnp threads demo; do
    for rt in glibc cgprof; do
        for fmt in bsd44 bsdold; do
            test_expect "$prog ($rt runtime) as $fmt: report identical to gprof's" "
                same_report $prog $prog.$rt.$fmt &&
                $CGPROF report -b -p $prog $prog.$rt.$fmt >got.p && gprof -b -p $prog $prog.$rt.$fmt >want.p &&
                diff -u want.p got.p
            "
        done
    done
done
test_expect "BSD and GNU files summed, in either order, as gprof sums them" "
    same_report calls calls.glibc calls.glibc.bsd44 calls.cgprof.bsdold &&
    same_report calls calls.cgprof.bsdold calls.glibc.bsd44 calls.glibc
"

test_expect "profile read from a pipe (gmon_read)" "
    cat calls.glibc.bsd44 | $TOOL sum pipe.sum /dev/stdin &&
    gprof -b calls pipe.sum >got && gprof -b calls calls.glibc.bsd44 >want && diff -u want got
"

# ---- several files: summed, or refused as gprof refuses them ----
(cd "$WORK" && $TOOL edit calls.glibc dimen.out dimen=ticks &&
    $TOOL edit calls.glibc abbrev.out abbrev=t &&
    $TOOL edit calls.glibc overlap.out shift=64 &&
    $TOOL edit calls.glibc disjoint.out shift=0x100000 &&
    $TOOL edit calls.glibc scale.out nbins=100 &&
    $TOOL edit calls.glibc rate.out rate=1000 &&
    $TOOL bsd44 rate.out rate.bsd44 &&
    $TOOL edit calls.glibc bb.out bb=3) ||
    exit 1
test_expect "same histogram range twice: summed" "same_report calls calls.glibc calls.cgprof"
test_expect "disjoint histogram ranges: both kept" "same_report calls calls.glibc disjoint.out"
test_expect "GNU files at different rates: the first file's rate, as gprof" "
    same_report calls calls.glibc rate.out && same_report calls rate.out calls.glibc
"
test_expect "basic-block records are skipped" "same_report calls bb.out calls.glibc"
test_expect "refused: histogram unit differs" "both_refuse dimen.out calls calls.glibc dimen.out"
test_expect "refused: unit abbreviation differs" "both_refuse abbrev.out calls calls.glibc abbrev.out"
test_expect "refused: histogram ranges overlap" "
    both_refuse overlap.out calls calls.glibc overlap.out && grep -q overlaps err
"
test_expect "refused: bin size differs" "both_refuse scale.out calls calls.glibc scale.out"
test_expect "refused: 4.4BSD file at another rate" "
    both_refuse rate.bsd44 calls calls.glibc rate.bsd44 &&
    both_refuse calls.glibc.bsd44 calls rate.out calls.glibc.bsd44
"

# ---- bad BSD files ----
test_expect "damaged GNU magic: neither format, at once" "
    cp calls.glibc magic.out && printf 'gmOX' | dd of=magic.out conv=notrunc 2>/dev/null &&
    fast_refusal magic.out calls magic.out && grep -q neither err
"
# (a multiple of 24 bytes less is a valid file with fewer arcs)
for cut in 1 7 23 25 47; do
    test_expect "BSD file short of $cut bytes: refused" "
        size=\$(wc -c <calls.glibc.bsd44) && head -c \$((size - $cut)) calls.glibc.bsd44 >cut.out &&
        fast_refusal cut.out calls cut.out
    "
done
test_expect "4.4BSD header claiming a 4 GB histogram: refused" "
    cp calls.glibc.bsd44 big.out && printf '\\377\\377\\377\\377' | dd of=big.out bs=1 seek=16 conv=notrunc 2>/dev/null &&
    fast_refusal big.out calls big.out && grep -q neither err
"
test_expect "BSD header with an empty pc range: refused" "
    cp calls.glibc.bsd44 empty.out && dd if=calls.glibc.bsd44 of=empty.out bs=1 skip=0 seek=8 count=8 conv=notrunc 2>/dev/null &&
    fast_refusal empty.out calls empty.out && grep -q neither err
"

# ---- gmon.sum ----
# A sum written by gmon_write_sum, read by gprof, reports what gprof's own
# gmon.sum reports; its header and histogram records are gprof's, byte for
# byte (gprof leaves the header's 12 spare bytes uninitialised: skipped).
# gprof -s writes arcs between functions, gmon_write_sum between call sites:
# the same calls in another order, so gprof's float sums along them may
# differ in the last bits (same_sum, tests/lib.sh); cgprof reads our sum
# exactly as gprof does.
hist_bytes() {
    nbins=$(od -A n -t u4 -j 37 -N 4 "$1" | tr -d ' ')
    head -c $((20 + 41 + 2 * nbins)) "$1" | tail -c +21
}
for prog in calls threads demo; do
    test_expect "$prog: gmon_write_sum's sum reads as gprof -s's does" "
        rm -f gmon.sum && gprof -s $prog $prog.glibc $prog.cgprof $prog.glibc && mv gmon.sum gprof.sum &&
        $TOOL sum our.sum $prog.glibc $prog.cgprof $prog.glibc &&
        same_sum $prog our.sum gprof.sum && same_sum $prog our.sum $prog.glibc $prog.cgprof $prog.glibc &&
        gprof -b $prog our.sum >want && $CGPROF report -b $prog our.sum >got && diff -u want got &&
        hist_bytes gprof.sum >h.want && hist_bytes our.sum >h.got && cmp h.want h.got
    "
done
test_expect "cgprof report -s: gmon.sum as gprof -s's, nothing printed" "
    rm -f gmon.sum && gprof -s calls calls.glibc calls.cgprof.bsdold && mv gmon.sum gprof.sum &&
    $CGPROF report -s calls calls.glibc calls.cgprof.bsdold >out && test ! -s out &&
    same_sum calls gmon.sum gprof.sum &&
    hist_bytes gprof.sum >h.want && hist_bytes gmon.sum >h.got && cmp h.want h.got
"
test_expect "sum of BSD files: as gprof -s writes it" "
    rm -f gmon.sum && gprof -s calls calls.glibc.bsd44 calls.cgprof.bsdold && mv gmon.sum gprof.sum &&
    $TOOL sum our.sum calls.glibc.bsd44 calls.cgprof.bsdold &&
    same_sum calls our.sum gprof.sum &&
    hist_bytes gprof.sum >h.want && hist_bytes our.sum >h.got && cmp h.want h.got
"
test_expect "sum with basic-block records: an empty one, as gprof -s" "
    rm -f gmon.sum && gprof -s calls bb.out 2>/dev/null && mv gmon.sum gprof.sum &&
    $TOOL sum our.sum bb.out &&
    tail -c 5 gprof.sum | od -A n -t x1 >t.want && tail -c 5 our.sum | od -A n -t x1 >t.got &&
    cmp t.want t.got && gprof -b calls our.sum >got 2>err && test ! -s err
"
test_expect "sum read back by cgprof: summed again, same report" "
    $TOOL sum our.sum calls.glibc calls.cgprof && $TOOL sum our2.sum our.sum our.sum &&
    same_sum calls our2.sum calls.glibc calls.cgprof calls.glibc calls.cgprof &&
    gprof -b calls our2.sum >got && $CGPROF report -b calls our2.sum >got2 && diff -u got got2
"
test_done

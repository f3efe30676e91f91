#!/bin/sh
# t0200: cgprof report -b prints what GNU gprof -b prints, byte for byte,
# on profiles written by libcgprof and by glibc's runtime.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg -pthread "$PROGS/threads.c" -o "$WORK/threads" &&
gcc -O0 -pg "$PROGS/calls.c" -o "$WORK/calls0" &&
gcc -O2 -pg -no-pie "$PROGS/calls.c" -o "$WORK/calls2" &&
gcc -O2 -pg "$ROOT/examples/demo.c" -o "$WORK/demo" || exit 1

for prog in threads calls0 calls2 demo; do
    for rt in cgprof glibc; do
        (cd "$WORK" && rm -f gmon.out &&
            if [ $rt = cgprof ]; then LD_PRELOAD=$LIBSO ./$prog; else ./$prog; fi >/dev/null &&
            mv gmon.out $prog.$rt.gmon)
        for opts in "-b" "-b -p" "-b -q" "-b -z" "-b -p -q -z"; do
            test_expect "$prog ($rt runtime), $opts: identical to gprof" "
                gprof $opts $prog $prog.$rt.gmon >want &&
                $CGPROF report $opts $prog $prog.$rt.gmon >got &&
                diff -u want got
            "
        done
    done
done

test_expect "two profiles summed as gprof sums them" "
    gprof -b calls0 calls0.cgprof.gmon calls0.glibc.gmon >want 2>&1;
    $CGPROF report -b calls0 calls0.cgprof.gmon calls0.glibc.gmon >got 2>&1;
    diff -u want got
"
test_done

#!/bin/sh
# t0110: exact counts for every way of building and loading a -pg program:
# gcc -pg, gcc -pg -mfentry, clang -pg; -O0 and -O2; PIE and non-PIE;
# LD_PRELOAD, linked libcgprof.a, linked libcgprof.so.
. "$(dirname "$0")/lib.sh"

exp=$PROGS/calls.arcs
for cc in gcc clang; do
    command -v $cc >/dev/null || { test_skip "$cc builds" "no $cc"; continue; }
    for opt in -O0 -O2; do
        for pie in -pie -no-pie; do
            fl="$opt -pg"
            [ $pie = -pie ] && fl="$fl -fPIE" || fl="$fl -fno-pie"
            test_expect "$cc $fl $pie, preloaded: exact arcs" "
                $cc $fl $pie $PROGS/calls.c -o calls &&
                rm -f gmon.out && LD_PRELOAD=$LIBSO ./calls >/dev/null &&
                same_arcs $exp calls gmon.out
            "
        done
    done
done

for opt in -O0 -O2; do
    test_expect "gcc $opt -pg -mfentry, preloaded: exact arcs" "
        gcc $opt -pg -mfentry $PROGS/calls.c -o calls_fentry &&
        objdump -d calls_fentry | grep -q 'call.*__fentry__' &&
        rm -f gmon.out && LD_PRELOAD=$LIBSO ./calls_fentry >/dev/null &&
        same_arcs $exp calls_fentry gmon.out
    "
done

test_expect "linked with libcgprof.a: exact arcs, glibc's runtime unused" "
    gcc -O2 -pg $PROGS/calls.c $LIBA -o calls_a &&
    nm calls_a | grep -q ' T mcount$' &&
    rm -f gmon.out && ./calls_a >/dev/null &&
    same_arcs $exp calls_a gmon.out
"

test_expect "linked with libcgprof.so: exact arcs" "
    gcc -O2 -pg $PROGS/calls.c -L$BUILD -lcgprof -Wl,-rpath,$BUILD -o calls_so &&
    rm -f gmon.out && ./calls_so >/dev/null &&
    same_arcs $exp calls_so gmon.out
"

test_expect "histogram is written at the real rate (1000 Hz by default)" "
    gcc -O2 -pg $PROGS/calls.c -o calls && rm -f gmon.out &&
    LD_PRELOAD=$LIBSO ./calls >/dev/null &&
    gprof -b -p calls gmon.out | grep -q 'Each sample counts as 0.001 seconds' &&
    LD_PRELOAD=$LIBSO CGPROF_FREQ=250 ./calls >/dev/null &&
    gprof -b -p calls gmon.out | grep -q 'Each sample counts as 0.004 seconds'
"

test_expect "only one gmon.out, written by us: glibc's writer never runs" "
    gcc -O2 -pg $PROGS/calls.c -o calls && rm -f gmon.out &&
    LD_PRELOAD=$LIBSO strace -f -e trace=openat -o trace ./calls >/dev/null &&
    grep 'gmon' trace >opens && grep -q 'gmon.out.cgprof-tmp' opens &&
    ! grep -v 'gmon.out.cgprof-tmp' opens
"
for cc in gcc clang; do
    command -v $cc >/dev/null || continue
    for fl in "-O0 -pg" "-O2 -pg" "-O2 -pg -mfentry" "-O0 -pg -mfentry"; do
        [ $cc = clang ] && case "$fl" in *fentry*) continue ;; esac
        test_expect "$cc $fl: argument registers survive the entry stubs" "
            $cc $fl $PROGS/args.c -o args && LD_PRELOAD=$LIBSO ./args
        "
    done
done
test_done

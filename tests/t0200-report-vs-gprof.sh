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
# clang++ (DWARF 5 by default) and std::sort: stl_algo.h's template code
# comes in line sequences that start before their first DW_LNS_set_file,
# which gprof reads as file 0; -l must name those lines as gprof does (it
# once made 3 line symbols more than gprof's 184).  Built from a copy by a
# relative name, as one builds in a project: the unit's file 1 is then
# stl_algo.h (from another directory by an absolute path, clang repeats
# the main source as file 1 and the quirk changes no name).
if command -v clang++ >/dev/null; then
    cp "$PROGS/stdsort.cc" "$WORK/" || exit 1
    for flags in "-g" "-gdwarf-5" "-O1 -g" "-O2 -g" "-O2 -gdwarf-5"; do
        name=sort$(echo "$flags" | tr -d ' -')
        test_expect "clang++ $flags, std::sort, -b -l and -b -l -z: identical to gprof" "
            clang++ $flags -pg stdsort.cc -o $name &&
            rm -f gmon.out && ./$name >/dev/null && mv gmon.out $name.gmon &&
            gprof -b -l $name $name.gmon >want && $CGPROF report -b -l $name $name.gmon >got &&
            diff -u want got &&
            gprof -b -l -z $name $name.gmon >want && $CGPROF report -b -l -z $name $name.gmon >got &&
            diff -u want got
        "
    done
else
    test_skip "clang++ and std::sort, -l" "no clang++"
fi
test_done

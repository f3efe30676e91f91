#!/bin/sh
# t0220: cgprof report takes gprof's options with gprof's meaning: for each
# option set, cgprof report -b prints what GNU gprof -b prints, byte for
# byte, on profiles written by libcgprof and by glibc's runtime; options
# not supported yet fail with one line and status 2.
. "$(dirname "$0")/lib.sh"

gcc -O0 -pg "$PROGS/cycles.c" -o "$WORK/cycles0" &&
gcc -O2 -pg -no-pie "$PROGS/cycles.c" -o "$WORK/cycles2" &&
gcc -O2 -pg "$PROGS/calls.c" -o "$WORK/calls2" &&
g++ -O2 -pg "$PROGS/cxx.cc" -o "$WORK/cxx2" &&
g++ -O0 -pg -no-pie "$PROGS/cxx.cc" -o "$WORK/cxx0" || exit 1

# Option sets for every program; the names are those of cycles.c, and
# options naming a function absent from a program leave it unchanged.
common='-b|-b -p|-b -q|-b -z|-b -c|-b -c -z|-b -p -q -z|-b -a|-b -m 2|-b -T|-b -T -z|-b -w 60|-b -D|-b -Z|-b -p -P|-b -P -p'
named='-b -e burn|-b -E burn|-b -f ring_a|-b -F even|-b -n burn|-b -N burn|-b -k ring_a/ring_b|-b -k main/even|-b -k /burn|-b -pring_a|-b -Pburn|-b -qeven|-b -Qodd|-b -E main|--brief --time=burn|--brief --no-time=burn --width=50'
cxxonly='-b --no-demangle|-b --demangle|-b --demangle=gnu-v3|-b -e _ZNK3geo6Circle4areaEi|-b -F _ZN12_GLOBAL__N_13fibEj|-b -N _Z3sumIdET_RKSt6vectorIS0_SaIS0_EEi|-b -T -c'

for prog in cycles0 cycles2 calls2 cxx2 cxx0; do
    sets="$common|$named"
    case $prog in cxx*) sets="$common|$cxxonly" ;; calls*) sets="$common|-b -e s|-b -F a|-b -k c/c" ;; esac
    for rt in cgprof glibc; do
        (cd "$WORK" && rm -f gmon.out &&
            if [ $rt = cgprof ]; then LD_PRELOAD=$LIBSO ./$prog; else ./$prog; fi >/dev/null &&
            mv gmon.out $prog.$rt.gmon)
        old_ifs=$IFS
        IFS='|'
        for opts in $sets; do
            IFS=$old_ifs
            test_expect "$prog ($rt runtime), $opts: identical to gprof" "
                gprof $opts $prog $prog.$rt.gmon >want &&
                $CGPROF report $opts $prog $prog.$rt.gmon >got &&
                diff -u want got
            "
            IFS='|'
        done
        IFS=$old_ifs
    done
done

for opt in -L -r -Cmain -Amain; do
    test_expect "$opt: one 'not yet supported' line, status 2" "
        $CGPROF report $opt cycles0 cycles0.glibc.gmon >out 2>err; rc=\$?;
        test \$rc -eq 2 && test \$(wc -l <err) -eq 1 && grep -q 'not yet supported' err &&
        test ! -s out
    "
done
# gprof -s writes arcs between functions, cgprof -s between call sites:
# compared as same_sum does (tests/lib.sh).
test_expect "-s writes gmon.sum, which GNU gprof reads as the sum" "
    rm -f gmon.sum && gprof -s cycles0 cycles0.glibc.gmon cycles0.cgprof.gmon && mv gmon.sum gprof.sum &&
    $CGPROF report -s cycles0 cycles0.glibc.gmon cycles0.cgprof.gmon >out &&
    test ! -s out && test -s gmon.sum &&
    same_sum cycles0 gmon.sum gprof.sum && same_sum cycles0 gmon.sum cycles0.glibc.gmon cycles0.cgprof.gmon
"
test_expect "unknown demangling style: usage error" "
    $CGPROF report --demangle=bogus cxx2 cxx2.glibc.gmon 2>err; test \$? -eq 2 && grep -q bogus err
"
test_done

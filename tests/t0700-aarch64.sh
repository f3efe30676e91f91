#!/bin/sh
# t0700: AArch64 (issue 23).  Programs cross-built with
# aarch64-linux-gnu-gcc -pg and run under qemu-aarch64; cgprof report on
# this x86-64 host reads their ELF, DWARF and gmon.out and prints what
# GNU aarch64-linux-gnu-gprof prints, byte for byte, for the option sets
# t0200 checks on x86-64, -c's static arcs (B and BL, tail branches
# included) and -l's lines.
. "$(dirname "$0")/lib.sh"

A64CC=aarch64-linux-gnu-gcc A64GPROF=aarch64-linux-gnu-gprof
if ! command -v $A64CC >/dev/null || ! command -v $A64GPROF >/dev/null ||
    ! command -v qemu-aarch64 >/dev/null || [ ! -d /usr/aarch64-linux-gnu/lib ]; then
    test_skip "AArch64 under qemu-user" \
        "needs gcc-aarch64-linux-gnu, binutils-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user (scripts/deps.sh)"
    test_done
    exit 0
fi
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
# run PROG ARGS...: PROG under qemu-aarch64 in $WORK, its gmon.out kept as PROG.gmon
run() {
    p=$1
    shift
    rm -f gmon.out && qemu-aarch64 ./$p "$@" >$p.out && mv gmon.out $p.gmon
}

cd "$WORK" || exit 1
$A64CC -O0 -g -pg "$PROGS/calls.c" -o calls0 &&
    $A64CC -O2 -g -pg "$PROGS/calls.c" -o calls2 &&
    $A64CC -O2 -pg -pthread "$PROGS/threads.c" -o threads &&
    $A64CC -O2 -g -pg "$PROGS/tailcalls.c" -o tailcalls || exit 1
test_expect "the programs are AArch64 executables, and glibc's runtime writes their gmon.out under qemu" '
    aarch64-linux-gnu-readelf -h calls0 | grep -q "Machine: *AArch64" &&
    run calls0 && run calls2 && run threads && run tailcalls && ls -l calls0.gmon tailcalls.gmon'

for prog in calls0 calls2 threads tailcalls; do
    for opts in "-b" "-b -p" "-b -q" "-b -z" "-b -p -q -z" "-b -c" "-b -c -z" "-b -l" "-b -A" "-b -i"; do
        test_expect "$prog (AArch64), $opts: identical to $A64GPROF" "
            $A64GPROF $opts $prog $prog.gmon >want &&
            $CGPROF report $opts $prog $prog.gmon >got 2>err &&
            diff -u want got"
    done
done

# -c must find something here, or the check above proves nothing: the
# arcs only the text has (a tail branch, calls that never ran)
test_expect "-c on AArch64: the arcs of B and BL that never ran, as gprof finds them" '
    $CGPROF report -b -q tailcalls tailcalls.gmon >plain &&
    $CGPROF report -b -q -c tailcalls tailcalls.gmon >static &&
    ! diff plain static >d && cat d &&
    grep -q "0/0 *never" static && grep -q "0/20000 *tailee" static &&
    ! grep -q "0/0 *never" plain &&
    $CGPROF report -b -q -c -z tailcalls tailcalls.gmon >all &&
    awk "/^\\[[0-9]+\\].* condjump \\[/ { e = 1; next } e && /^-----/ { exit } e" all >cj && cat cj &&
    ! grep -q never cj'

test_expect "two AArch64 profiles summed as $A64GPROF sums them" "
    cp calls0.gmon a.gmon && run calls0 &&
    $A64GPROF -b calls0 a.gmon calls0.gmon >want 2>&1 &&
    $CGPROF report -b calls0 a.gmon calls0.gmon >got 2>&1 &&
    diff -u want got"
test_done

#!/bin/sh
# t0210: bad input to cgprof report gets one clear line, status 1, fast.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg "$PROGS/calls.c" -o "$WORK/calls" &&
(cd "$WORK" && LD_PRELOAD=$LIBSO ./calls >/dev/null) || exit 1

# one_error FILE-IN-MESSAGE CMD...: exit 1, a single stderr line naming it
one_error() {
    name=$1
    shift
    timeout 5 "$@" >out 2>err
    rc=$?
    test $rc -eq 1 && test "$(wc -l <err)" -eq 1 && grep -q "$name" err ||
        { echo "rc=$rc"; cat err; false; }
}

test_expect "missing gmon.out" "one_error nosuch.out $CGPROF report calls nosuch.out"
test_expect "missing program" "one_error nosuch $CGPROF report nosuch gmon.out"
test_expect "program that is not ELF" "
    echo hello >notelf && one_error notelf $CGPROF report notelf gmon.out
"
test_expect "corrupted magic number" "
    cp gmon.out bad.out && printf 'gmOX' | dd of=bad.out conv=notrunc 2>/dev/null &&
    one_error bad.out $CGPROF report calls bad.out
"
test_expect "wrong version" "
    cp gmon.out ver.out && printf '\\011' | dd of=ver.out bs=1 seek=4 conv=notrunc 2>/dev/null &&
    one_error ver.out $CGPROF report calls ver.out
"
for n in 3 19 21 40 61; do
    test_expect "truncated to $n bytes" "
        head -c $n gmon.out >t$n.out && one_error t$n.out $CGPROF report calls t$n.out
    "
done
test_expect "truncated inside the arcs" "
    size=\$(wc -c <gmon.out) && head -c \$((size - 7)) gmon.out >tarc.out &&
    one_error tarc.out $CGPROF report calls tarc.out
"
test_expect "unknown record tag" "
    cp gmon.out tag.out && printf '\\007' >>tag.out && one_error tag.out $CGPROF report calls tag.out
"
test_expect "histogram claiming 2^31 bins" "
    cp gmon.out big.out && printf '\\377\\377\\377\\177' | dd of=big.out bs=1 seek=37 conv=notrunc 2>/dev/null &&
    one_error big.out $CGPROF report calls big.out
"
test_expect "random bytes, 50 files: never a crash or hang" "
    i=0; while [ \$i -lt 50 ]; do
        head -c \$((i * 37 + 1)) /dev/urandom >r.out;
        timeout 5 $CGPROF report calls r.out >/dev/null 2>&1; rc=\$?;
        [ \$rc -eq 0 ] || [ \$rc -eq 1 ] || { echo \"rc \$rc on file \$i\"; exit 1; };
        i=\$((i + 1)); done
"
test_expect "stripped program: one clear line, status 1" "
    cp calls stripped && strip stripped && one_error stripped $CGPROF report stripped gmon.out
"
test_expect "gmon.out read from a pipe: GNU gprof's report of the file" "
    gprof -b calls gmon.out >want && cat gmon.out | $CGPROF report -b calls /dev/stdin >got &&
    diff -u want got
"
test_expect "unknown option: usage error, status 2" "
    $CGPROF report --frobnicate calls gmon.out 2>err; test \$? -eq 2 && test \$(wc -l <err) -ge 1
"
test_done

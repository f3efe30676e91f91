#!/bin/sh
# t0140: cgprof record runs a program under the runtime and stays out of
# its way: exit status, signals, arguments and output file.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg -pthread "$PROGS/calls.c" -o "$WORK/calls" || exit 1
gcc -O2 -pg -pthread "$PROGS/proc.c" -o "$WORK/proc" || exit 1

test_expect "record --format gmon writes gmon.out with exact counts" "
    rm -f gmon.out && $CGPROF record --format gmon ./calls >/dev/null &&
    same_arcs $PROGS/calls.arcs calls gmon.out
"

test_expect "record -o FILE and -F HZ" "
    rm -f gmon.out && $CGPROF record --format=gmon -F 500 -o my.prof -- ./calls >/dev/null &&
    test ! -f gmon.out && same_arcs $PROGS/calls.arcs calls my.prof &&
    gprof -b -p calls my.prof | grep -q 'Each sample counts as 0.002 seconds'
"

# with the library calls main makes (printf), less gcrt1's registration of
# _mcleanup (its __cxa_atexit call has no function of its own to come from)
test_expect "record writes cgprof.data by default; report reads it with no arguments" "
    rm -f gmon.out cgprof.data && $CGPROF record ./calls >/dev/null && test -f cgprof.data &&
    $CGPROF report -b -q | awk -f $ROOT/tests/arcs.awk | grep -v ' __cxa_atexit ' | sort -u >got &&
    (cat $PROGS/calls.arcs; echo '__libc_start_call_main main 1'; echo 'main printf 1') |
        sort | diff -u - got
"

test_expect "a -pg program started by the recorded one writes cgprof.data.PID" "
    rm -f cgprof.data* && $CGPROF record sh -c './calls >/dev/null; echo \$! >/dev/null; true' &&
    test -f cgprof.data && ls cgprof.data.* >files && test \$(wc -l <files) -eq 1 &&
    $CGPROF report -b -q \$(cat files) | awk -f $ROOT/tests/arcs.awk | grep -q '^a b 100\$'
"

test_expect "record passes the exit status through" "
    $CGPROF record ./proc threadexit; test \$? -eq 3
"

test_expect "record passes a fatal signal through" "
    $CGPROF record sh -c 'kill -TERM \$\$'; test \$? -eq 143
"

test_expect "record: a missing program is a one-line error, status 127" "
    $CGPROF record ./no-such-program 2>err; rc=\$?; cat err; echo \"status \$rc\";
    test \$rc -eq 127 && test \$(wc -l <err) -eq 1 && grep -q 'no-such-program' err
"

# as the shell: found but not executable is 126
test_expect "record: a file that is not executable, or a directory: one line, status 126" "
    echo 'echo hi' >notexec && chmod 644 notexec && mkdir -p adir &&
    $CGPROF record ./notexec 2>err; rc=\$?; cat err; echo \"status \$rc\";
    test \$rc -eq 126 && test \$(wc -l <err) -eq 1 && grep -q 'notexec' err &&
    $CGPROF record ./adir 2>err; rc=\$?; cat err; echo \"status \$rc\";
    test \$rc -eq 126 && test \$(wc -l <err) -eq 1 && grep -q 'adir' err
"

test_expect "record -o FILE: a program that changes directory still writes FILE here" "
    rm -rf sub my.data && mkdir sub &&
    $CGPROF record --format gmon -o my.data ./proc chdir sub && ls . sub &&
    test -f my.data && test ! -e sub/my.data &&
    printf 'main f 3\\n' >exp && same_arcs exp proc my.data
"

test_expect "record: a bad rate is refused" "
    ! $CGPROF record -F abc ./calls 2>err && grep -q 'abc' err
"
test_expect "make install PREFIX=...: the installed cgprof finds its runtime" "
    make -s -C $ROOT BUILD=$BUILD install PREFIX=$WORK/inst >/dev/null &&
    test -x inst/bin/cgprof && test -f inst/lib/libcgprof.a && test -f inst/include/cgprof.h &&
    test -f inst/share/man/man1/cgprof.1 &&
    rm -f gmon.out && inst/bin/cgprof record --format gmon ./calls >/dev/null &&
    same_arcs $PROGS/calls.arcs calls gmon.out
"
test_done

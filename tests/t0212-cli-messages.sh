#!/bin/sh
# t0212: every message of the command line says what is true: the option
# as it was written and what is wrong with it, which profile was read and
# why, what a file given to record is.  Each check gives the one line the
# user reads (and the status); the truth is the situation the test made.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg "$PROGS/calls.c" -o "$WORK/calls" && gcc -c "$PROGS/calls.c" -o "$WORK/calls.o" &&
    (cd "$WORK" && $CGPROF record --no-stacks -o nostacks.data ./calls >/dev/null) || exit 1

# one_line STATUS PATTERN CMD...: CMD exits STATUS with one line on stderr matching PATTERN
one_line() {
    want=$1 pat=$2
    shift 2
    "$@" >out 2>err
    rc=$?
    cat err
    test $rc -eq "$want" && test "$(wc -l <err)" -eq 1 && grep -q -- "$pat" err
}

test_expect "long option without its value, or with one it does not take: named as written" "
    one_line 2 \"option '--propagate' needs a value\" $CGPROF report --propagate &&
    one_line 2 \"option '--json' takes no value\" $CGPROF report --json=x nostacks.data &&
    one_line 2 \"unknown option '--frob'\" $CGPROF report --frob=1 nostacks.data &&
    one_line 2 \"option '--threshold' needs a value\" $CGPROF export -f dot --threshold &&
    one_line 2 \"option '--no-static' takes no value\" $CGPROF export -f dot --no-static=1 nostacks.data &&
    one_line 2 \"option '-f' needs a value\" $CGPROF export -f &&
    one_line 2 \"unknown option '-%'\" $CGPROF report -%
"

test_expect "-v, -V and --version work for cgprof and each of its commands" "
    for c in '' record report export; do for v in -v -V --version; do
        $CGPROF \$c \$v >out 2>err && grep -qx 'cgprof [0-9][0-9.]*' out && ! test -s err || { echo \"\$c \$v\"; cat out err; return 1; }
    done; done
"

test_expect "no profile in the directory: says so (not 'a.out: No such file')" "
    mkdir empty && cd empty &&
    one_line 2 'no profile here' $CGPROF report && ! grep -q 'No such file' err &&
    one_line 2 'no profile here' $CGPROF export -f folded
"

test_expect "gmon.out newer than cgprof.data: says which it reads and why; without a.out, what is missing" "
    mkdir both && cd both && cp ../nostacks.data cgprof.data && sleep 0.02 &&
    ../calls >/dev/null && test -f gmon.out &&
    one_line 2 'gmon.out (newer than cgprof.data).*no a.out' $CGPROF report -b &&
    cp ../calls a.out && $CGPROF report -b >out 2>err && grep -q ' main ' out &&
    grep -q 'reading gmon.out with a.out: it is newer than cgprof.data' err
"

test_expect "record of an object file or a directory: what it is, status 126" "
    one_line 126 'calls.o.*an object file' $CGPROF record ./calls.o &&
    ! grep -q 'statically linked' err && mkdir adir &&
    one_line 126 'adir.*is a directory' $CGPROF record ./adir && ! grep -q 'Permission denied' err
"

test_expect "--propagate=measured of a profile without stacks: a note says the times are estimates" "
    $CGPROF report -b -q --propagate=measured nostacks.data >m.out 2>m.err &&
    grep -q 'measured.*nostacks.data has no sampled stacks' m.err &&
    $CGPROF report -b -q nostacks.data >d.out 2>d.err && ! grep -q 'propagate' d.err && cmp m.out d.out
"

# (true, not calls: 100000 samples a second of a program that runs for
# seconds is minutes of CPU on a busy machine)
test_expect "-F at its documented limits: 100000 is taken, 100001 refused" "
    $CGPROF record -F 100000 -o f.data true 2>err && test -s f.data &&
    one_line 2 '100001' $CGPROF record -F 100001 ./calls
"

# endings.c prints "cpu N", the ms of CPU its thread has used; the thread
# clock runs on across exec, so the exec'd image's own CPU is the
# difference of the two images' figures.
gcc -O2 -pg -pthread "$PROGS/endings.c" -o "$WORK/endings" || exit 1
# note_ms FILE: the ms of CPU an empty profile's note says were used
note_ms() {
    sed -n '/holds no samples/ s/.*[^0-9.]\([0-9][0-9.]*\) ms of CPU.*/\1/p' "$1"
}

test_expect "record -F 0: the note names no CPU figure it does not have" "
    $CGPROF record -F 0 -o f0.data ./endings exit 50 2>rec && $CGPROF report -b f0.data >/dev/null 2>err &&
    cat rec err && grep -q 'f0.data holds no samples (sampling was off with -F 0' err && ! grep -q 'used.*ms of CPU' err
"

test_expect "after exec: a note on the new image counts only its own CPU, not the time before the exec" "
    $CGPROF record -o ex.data ./endings exec-self 150 2>rec && cat rec && test -f ex.data.exec1 &&
    own=\$(awk '/^cpu / { c[++n] = \$2 } END { print c[2] - c[1] }' rec) &&
    $CGPROF report -b ex.data.exec1 >/dev/null 2>err; cat err; echo \"own CPU \$own ms\" &&
    ms=\$(note_ms err) && echo \"note: \${ms:-none}\" &&
    if [ -n \"\$ms\" ]; then awk -v m=\"\$ms\" -v o=\"\$own\" 'BEGIN { exit !(m <= o + 5) }'; fi
"

test_done

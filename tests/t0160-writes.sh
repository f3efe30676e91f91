#!/bin/sh
# t0160: where and how the profile is written -- one clear line naming the
# file and the reason when it cannot be (said when the run starts too),
# the program's output and exit status unchanged, an earlier profile never
# destroyed; read-only profiles and the program itself refused.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg -pthread "$PROGS/endings.c" -o "$WORK/endings" || exit 1

# fails OUT REASON [HOW]: endings HOW (default exit) with CGPROF_OUTPUT=OUT
# keeps its status, and says exactly one line naming OUT and REASON.
fails() {
    LD_PRELOAD=$LIBSO CGPROF_OUTPUT=$1 ./endings ${3:-exit} 20 2>err; rc=$?
    cat err && test $rc -eq 0 &&
    grep -v '^cpu ' err >said && test "$(wc -l <said)" -eq 1 &&
    grep -q "^cgprof: cannot write the profile $1: $2\$" said
}

test_expect "a path in a missing directory: one line, with errno's text, status kept" "
    fails nodir/gmon.out 'No such file or directory'
"

test_expect "a directory: 'Is a directory'" "
    mkdir -p d.out && fails d.out 'Is a directory'
"

test_expect "a path through a file: 'Not a directory'" "
    echo x >plain && fails plain/gmon.out 'Not a directory'
"

test_expect "the problem is said when the run starts, before the program's output" "
    LD_PRELOAD=$LIBSO CGPROF_OUTPUT=nodir/g.out ./endings exit 20 2>err &&
    head -n 1 err | grep -q '^cgprof: cannot write the profile nodir/g.out' &&
    sed -n 2p err | grep -q '^cpu '
"

test_expect "a read-only profile is refused, as glibc refuses it, and left as it was" "
    echo old >ro.out && chmod 444 ro.out &&
    fails ro.out 'the file is read-only (it is left as it is)' &&
    test \"\$(cat ro.out)\" = old
"

test_expect "the profile would replace the running program: refused" "
    cp endings prog && LD_PRELOAD=$LIBSO CGPROF_OUTPUT=prog ./prog exit 20 2>err; cat err &&
    grep -q '^cgprof: cannot write the profile prog: it is the program being profiled' err &&
    cmp prog endings
"

test_expect "cgprof record -o PROG ./PROG: refused before the program runs" "
    cp endings prog2 && ! $CGPROF record -o prog2 ./prog2 exit 20 2>err; cat err &&
    grep -q 'that is the program itself' err && cmp prog2 endings && ! grep -q '^cpu' err
"

test_expect "file size limit (ulimit -f): no SIGXFSZ, status kept, earlier profile kept" "
    echo old >fs.out &&
    (ulimit -f 1 && fails fs.out 'the file size limit (ulimit -f) is smaller than the profile') &&
    test \"\$(cat fs.out)\" = old
"

test_expect "/dev/null as the profile: written into, never replaced" "
    LD_PRELOAD=$LIBSO CGPROF_OUTPUT=/dev/null ./endings exit 20 2>err &&
    test -c /dev/null && ! grep -v '^cpu' err
"

# a full disk: a one-page tmpfs, which the earlier profile fills (needs the right to mount one)
mkdir -p "$WORK/small"
if mount -t tmpfs -o size=4k tmpfs "$WORK/small" 2>/dev/null; then
    test_expect "disk full: 'No space left on device', the earlier profile kept" "
        echo old >small/g.out && fails small/g.out 'No space left on device' &&
        test \"\$(cat small/g.out)\" = old && ! ls small | grep -q cgprof-tmp
    "
    test_expect "disk full at a fatal signal: status kept, earlier profile kept" "
        echo old >small/g.out &&
        LD_PRELOAD=$LIBSO CGPROF_OUTPUT=small/g.out sh -c './endings sig:TERM 20; echo rc=\$?' \
            >out 2>err; cat out err && grep -q rc=143 out &&
        test \$(grep -c 'No space left on device' err) -eq 1 && test \"\$(cat small/g.out)\" = old
    "
    umount "$WORK/small"
else
    test_skip "disk full" "cannot mount a tmpfs here"
fi

# a read-only directory: root writes anywhere, so a read-only bind mount
mkdir -p "$WORK/rodir"
if [ "$(id -u)" != 0 ]; then
    chmod 555 "$WORK/rodir"
    rodir=ok
elif mount --bind "$WORK/rodir" "$WORK/rodir" 2>/dev/null &&
    mount -o remount,bind,ro "$WORK/rodir" 2>/dev/null; then
    rodir=mounted
else
    rodir=
fi
if [ -n "$rodir" ]; then
    test_expect "a read-only directory: one line, status kept" "
        fails rodir/g.out '\\(Permission denied\\|Read-only file system\\)'
    "
    [ "$rodir" = mounted ] && umount "$WORK/rodir"
else
    test_skip "read-only directory" "cannot make one here"
fi

# A program that gives up the rights its profile's path needs before it
# ends -- a new user that may not write the directory, a new root where the
# path leads nowhere -- still leaves its whole profile: the directory and
# the file were opened just before (setuid and chroot are interposed).
# dropprivs calls f 300 times before and 700 after.  (Failed before:
# "cannot write the profile ...: Permission denied" / "No such file or
# directory", and no profile with f's 1000 calls.)
gcc -O2 -pg "$PROGS/dropprivs.c" -o "$WORK/dropprivs" || exit 1
if [ "$(id -u)" = 0 ]; then
    for fmt in cgprof gmon; do
        out=cgprof.data
        [ $fmt = gmon ] && out=gmon.out
        test_expect "setuid to a user who may not write the directory ($fmt): all calls kept" "
            mkdir -p su.$fmt && cd su.$fmt && chmod 755 . &&
            $CGPROF record --format $fmt ../dropprivs setuid 65534 >out 2>err; rc=\$?; cat err;
            test \$rc -eq 0 && grep -qx dropped out && test ! -s err &&
            $CGPROF report -b -q ../dropprivs $out | awk -f $ROOT/tests/arcs.awk | grep -qx 'main f 1000'
        "
        test_expect "chroot to a directory without the profile's path ($fmt): all calls kept" "
            mkdir -p cr.$fmt/jail && cd cr.$fmt &&
            $CGPROF record --format $fmt ../dropprivs chroot jail >out 2>err; rc=\$?; cat err;
            test \$rc -eq 0 && grep -qx dropped out && test ! -s err && test -z \"\$(ls jail)\" &&
            $CGPROF report -b -q ../dropprivs $out | awk -f $ROOT/tests/arcs.awk | grep -qx 'main f 1000'
        "
    done
else
    test_skip "setuid and chroot before exit" "not root"
fi

test_expect "an earlier profile survives a run killed in the middle of a write" "
    LD_PRELOAD=$LIBSO ./endings exit 20 2>/dev/null && cp gmon.out good &&
    LD_PRELOAD=$LIBSO CGPROF_CHECKPOINT=1 ./endings wait 2>/dev/null & pid=\$! &&
    sleep 1 && kill -9 \$pid; wait \$pid;
    gprof -b -p endings gmon.out >/dev/null && test \$(flat_calls endings gmon.out work) = 1000
"
test_done

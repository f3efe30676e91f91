#!/bin/sh
# t0505: where cgprof export and record write.  export -o replaces only a
# regular file (atomically); a character device, a FIFO and a terminal are
# written in place, and a symbolic link is followed to its file.  record -o
# never destroys a file that is not a profile.  No reader other than the
# plain bytes is needed: what went in is compared with what came out of
# export -o - (standard output), and the devices are made in the scratch
# directory (never the real /dev/null).
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg "$PROGS/calls.c" -o "$WORK/calls" &&
    (cd "$WORK" && $CGPROF record -o calls.data ./calls >/dev/null &&
        $CGPROF export -f folded -o - calls.data >want.folded && test -s want.folded) || exit 1

test_expect "export -o FIFO: the reader gets the whole export, the FIFO stays a FIFO" "
    mkfifo fifo && { timeout 60 cat fifo >got.fifo & } &&
    timeout 60 $CGPROF export -f folded -o fifo calls.data && wait &&
    test -p fifo && cmp want.folded got.fifo
"

if mknod "$WORK/chr" c 1 3 2>/dev/null; then
    test_expect "export -o a character device (a null device made here): stays the device" "
        $CGPROF export -f folded -o chr calls.data && test -c chr &&
        test \"\$(stat -c %t:%T chr)\" = 1:3 && ! ls chr.tmp.* 2>/dev/null
    "
else
    test_skip "export -o a character device (a null device made here): stays the device" "mknod not permitted"
fi

test_expect "export -o SYMLINK: the file it names gets the export, the link stays a link" "
    mkdir real && echo old >real/out.txt && ln -s real/out.txt link &&
    $CGPROF export -f folded -o link calls.data &&
    test -L link && test \"\$(readlink link)\" = real/out.txt && cmp want.folded real/out.txt &&
    ! ls link.tmp.* real/out.txt.tmp.* 2>/dev/null
"

test_expect "export -o a dangling symlink: creates the file it names" "
    ln -s new.txt dangling && $CGPROF export -f folded -o dangling calls.data &&
    test -L dangling && cmp want.folded new.txt
"

test_expect "export -o FILE: a regular file is replaced whole and keeps its permissions" "
    seq 1 100000 >reg && chmod 640 reg && $CGPROF export -f folded -o reg calls.data &&
    cmp want.folded reg && test \"\$(stat -c %a reg)\" = 640
"

test_expect "record -o prog.c (a file that is not a profile): refused in one line, the file kept" "
    printf 'int main(void) { return 0; }\\n' >prog.c && cp prog.c prog.c.orig &&
    ! $CGPROF record -o prog.c ./calls >out 2>err && test \$(wc -l <err) -eq 1 &&
    grep -q 'prog.c' err && grep -q 'not a profile' err && cmp prog.c prog.c.orig && ! test -s out
"

test_expect "record -o over a profile, an empty file, or with --format gmon over gmon.out: replaced" "
    $CGPROF record -o calls.data ./calls >/dev/null && : >empty && $CGPROF record -o empty ./calls >/dev/null &&
    test -s empty && $CGPROF record --format gmon -o g.out ./calls >/dev/null &&
    $CGPROF record --format gmon -o g.out ./calls >/dev/null && test -s g.out
"

test_expect "record with no -o: a cgprof.data that is not a profile is kept" "
    mkdir d && cd d && echo notes >cgprof.data && ! $CGPROF record ../calls 2>err &&
    test \"\$(cat cgprof.data)\" = notes && test \$(wc -l <err) -eq 1
"

test_done

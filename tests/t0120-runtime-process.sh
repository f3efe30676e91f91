#!/bin/sh
# t0120: the profile survives fork, exec, exit from a thread, the last
# thread's exit, deep recursion, and is written on demand by a signal.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg -pthread "$PROGS/proc.c" -o "$WORK/proc" || exit 1
gcc -O2 -pg -pthread "$PROGS/spin.c" -o "$WORK/spin" || exit 1

# seconds_near FLAT CPU: the flat profile's total seconds (its last
# cumulative figure) within 15% + 10 ms of CPU seconds
seconds_near() {
    awk -v c="$2" '$1 ~ /^[0-9.]+$/ && NF >= 4 { t = $2 } END { d = t - c; if (d < 0) d = -d;
        printf "profile %.2f s, CPU %.3f s\n", t, c; exit !(d <= 0.15 * c + 0.01) }' "$1"
}

test_expect "fork: the child starts empty and writes its own file" "
    rm -f gmon.out* && LD_PRELOAD=$LIBSO ./proc fork >out &&
    child=\$(sed -n 's/^child //p' out) &&
    printf 'main f 10\nmain h 5\n' >parent.exp && same_arcs parent.exp proc gmon.out &&
    printf 'main g 7\n' >child.exp && same_arcs child.exp proc gmon.out.\$child
"

test_expect "fork: the child's samples are its own, none of its parent's" "
    rm -f gmon.out* && LD_PRELOAD=$LIBSO ./spin fork 600 200 >out && cat out &&
    set -- \$(sed -n 's/^child //p' out) && child=\$1 ccpu=\$2 &&
    pcpu=\$(sed -n 's/^parent //p' out) &&
    gprof -b -p spin gmon.out.\$child >child.flat && cat child.flat &&
    ! grep -q ' burn\$' child.flat && grep -q ' burn_child\$' child.flat &&
    seconds_near child.flat \$ccpu &&
    gprof -b -p spin gmon.out >parent.flat && cat parent.flat &&
    ! grep -q ' burn_child\$' parent.flat && seconds_near parent.flat \$pcpu
"

test_expect "exec: the data so far is written before the new image runs" "
    rm -f gmon.out* && LD_PRELOAD=$LIBSO ./proc exec &&
    printf 'main f 3\n' >exp && same_arcs exp proc gmon.out
"

test_expect "exit() called from a thread: status kept, profile written" "
    rm -f gmon.out*; LD_PRELOAD=$LIBSO ./proc threadexit; test \$? -eq 3 &&
    printf 'exiter f 5\n' >exp && same_arcs exp proc gmon.out
"

test_expect "main ends with pthread_exit: written when the last thread exits" "
    rm -f gmon.out* && LD_PRELOAD=$LIBSO ./proc lastthread &&
    printf 'worker f 4\n' >exp && same_arcs exp proc gmon.out
"

test_expect "recursion 100,000 frames deep: every call counted" "
    rm -f gmon.out* && LD_PRELOAD=$LIBSO ./proc deep &&
    printf 'main rec 1\nrec rec 100000\n' >exp && same_arcs exp proc gmon.out
"

test_expect "CGPROF_DUMP_SIGNAL=USR1: a dump on demand, then the final file" "
    rm -f gmon.* && CGPROF_DUMP_SIGNAL=USR1 LD_PRELOAD=$LIBSO ./proc dump &&
    printf 'main f 1000\n' >dump.exp && same_arcs dump.exp proc gmon.dump &&
    printf 'main f 1500\n' >final.exp && same_arcs final.exp proc gmon.out
"

test_expect "moncontrol(0) stops counting, moncontrol(1) resumes" "
    rm -f gmon.* && LD_PRELOAD=$LIBSO ./proc moncontrol &&
    printf 'main f 3\n' >exp && same_arcs exp proc gmon.out
"

test_expect "GMON_OUT_PREFIX gives PREFIX.PID, as glibc does" "
    rm -f gmon.* prof.* &&
    GMON_OUT_PREFIX=prof LD_PRELOAD=$LIBSO sh -c 'echo \$\$ >pid; exec ./proc deep' &&
    test ! -f gmon.out && printf 'main rec 1\\nrec rec 100000\\n' >exp && same_arcs exp proc prof.\$(cat pid)
"

test_expect "CGPROF_OUTPUT names the file; no temporary file is left" "
    rm -f sub.out && ls -A >before && echo sub.out >>before && echo files >>before &&
    rm -f gmon.* && CGPROF_OUTPUT=sub.out LD_PRELOAD=$LIBSO ./proc deep &&
    test ! -f gmon.out && ls -A >files && cat files && ! grep -v -x -F -f before files &&
    printf 'main rec 1\\nrec rec 100000\\n' >exp && same_arcs exp proc sub.out
"

test_expect "a program not built with -pg writes no gmon.out" "
    rm -f gmon.* && LD_PRELOAD=$LIBSO /bin/true && test ! -f gmon.out
"

# 100002 = libc's call of main + main->rec 1 + rec->rec 100000: none fits.
test_expect "arc memory exhausted: lost calls counted, written and reported" "
    rm -f gmon.* && CGPROF_ARC_MEMORY=4000 LD_PRELOAD=$LIBSO ./proc deep 2>err &&
    test \$(grep -c 'calls could not be recorded' err) -eq 1 &&
    grep -q '^cgprof: 100002 calls could not be recorded' err &&
    $CGPROF report -b -q proc gmon.out >/dev/null 2>rep &&
    grep -q '100002 calls were not recorded' rep
"
test_done

#!/bin/sh
# t0195: -static -pg with libcgprof.a (gcc -static -pg prog.c -lcgprof):
# cgprof's runtime replaces glibc's, counts stay exact under threads,
# sampling works, endings and exec behave as in a dynamic build.
. "$(dirname "$0")/lib.sh"

# t0100's counts; libc is inside a static executable, so its calls of
# main and of the threads' functions are arcs too
cat >"$WORK/threads.expected" <<'X'
__libc_start_call_main main 1
start_thread thread_main 4
thread_main work 4
work hot 800000
work ping 4000
ping pong 20000
pong ping 20000
X

if ! gcc -static -O2 -pg -pthread "$PROGS/threads.c" -L"$BUILD" -lcgprof ${LINK_EXTRA:-} \
    -o "$WORK/threads_static" 2>"$WORK/link.err"; then
    cat "$WORK/link.err"
    test_skip "static -pg" "no static libc (libc6-dev's libc.a)"
    test_done
    exit 0
fi

test_expect "-static -pg -lcgprof: our runtime, not glibc's, is linked in" "
    nm threads_static | grep -q ' cg_arc_slow\$' && ! nm threads_static | grep -q ' write_gmon\$'
"

test_expect "static, 4 threads: every arc count exact, as in a dynamic build" "
    rm -f gmon.out && ./threads_static >/dev/null && same_arcs threads.expected threads_static gmon.out
"

test_expect "-static-pie -pg -lcgprof, 4 threads: every arc count exact" "
    gcc -static-pie -fPIE -O2 -pg -pthread $PROGS/threads.c -L$BUILD -lcgprof ${LINK_EXTRA:-} \
        -o threads_spie && rm -f gmon.out && ./threads_spie >/dev/null &&
    same_arcs threads.expected threads_spie gmon.out
"

# (the CPU time and, at most, the time a VM's hypervisor held the CPU:
# endings.c measures it; the default cpu-clock counts it)
test_expect "static: the histogram holds the CPU time the threads used" "
    gcc -static -O2 -pg $PROGS/endings.c -L$BUILD -lcgprof ${LINK_EXTRA:-} -o endings_static &&
    rm -f gmon.out && ./endings_static exit 300 2>err &&
    cpu=\$(awk '\$1 == \"cpu\" { print \$2 }' err) && steal=\$(awk '\$1 == \"cpu\" { print \$4 }' err) &&
    secs=\$(gprof -b -p endings_static gmon.out | awk '\$NF == \"spin\" { print \$3 }') &&
    echo \"spin \$secs s, program's CPU \$cpu ms, \$steal ms stolen\" &&
    awk -v s=\"\${secs:-0}\" -v c=\"\$cpu\" -v st=\"\$steal\" 'BEGIN { exit !(s * 1000 >= 0.6 * c && s * 1000 <= c + st + 20) }'
"

test_expect "static: SIGTERM and exec leave their profiles, status kept" "
    rm -f gmon.out*; ./endings_static sig:TERM 20 2>/dev/null; test \$? -eq 143 &&
    test \$(flat_calls endings_static gmon.out work) = 1000 &&
    rm -f gmon.out* && ./endings_static exec-self 20 2>/dev/null &&
    test \$(flat_calls endings_static gmon.out work) = 1000 &&
    test \$(flat_calls endings_static gmon.out.exec1 work) = 1000
"

# the same static programs in cgprof's own format (cgprof record): exact
# counts, samples named in the executable, stacks through the threads
test_expect "static, cgprof format: every arc count exact, as in the gmon.out" "
    rm -f s.data && $CGPROF record -o s.data ./threads_static >/dev/null &&
    arcs_cgprof threads_static s.data | grep -v '^thread_start ' >cg.arcs &&
    sort threads.expected | diff -u - cg.arcs
"

test_expect "static, cgprof format: spin's CPU time sampled, its stacks from main" "
    rm -f s.data && $CGPROF record -o s.data ./endings_static exit 300 2>err &&
    cpu=\$(awk '\$1 == \"cpu\" { print \$2 }' err) && steal=\$(awk '\$1 == \"cpu\" { print \$4 }' err) &&
    secs=\$($CGPROF report -b -p endings_static s.data | awk '\$NF == \"spin\" { print \$3 }') &&
    echo \"spin \$secs s, program's CPU \$cpu ms, \$steal ms stolen\" &&
    awk -v s=\"\${secs:-0}\" -v c=\"\$cpu\" -v st=\"\$steal\" 'BEGIN { exit !(s * 1000 >= 0.6 * c && s * 1000 <= c + st + 20) }' &&
    python3 $ROOT/tests/stacks.py s.data >folded &&
    spin=\$(awk '/;main;spin[ ;]/{ n += \$NF } END { print n + 0 }' folded) &&
    all=\$(awk '/ [0-9]+\$/ && !/^#/ { n += \$NF } END { print n + 0 }' folded) &&
    echo \"stacks: \$spin of \$all samples in main;spin\" && test \$spin -ge \$((all * 9 / 10))
"
test_done

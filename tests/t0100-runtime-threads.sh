#!/bin/sh
# t0100: call counts stay exact under threads, read by GNU gprof and by cgprof.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/threads.expected" <<'X'
thread_main work 4
work hot 800000
work ping 4000
ping pong 20000
pong ping 20000
X

for cc in gcc clang; do
    command -v $cc >/dev/null || { test_skip "$cc threads" "no $cc"; continue; }
    test_expect "$cc -O2 -pg, 4 threads: every arc count exact (preloaded)" "
        $cc -O2 -pg -pthread $PROGS/threads.c -o threads &&
        rm -f gmon.out && LD_PRELOAD=$LIBSO ./threads >/dev/null &&
        same_arcs threads.expected threads gmon.out
    "
done

sed 's/ 4$/ 8/; s/ 800000$/ 1600000/; s/ 4000$/ 8000/; s/ 20000$/ 40000/' \
    "$WORK/threads.expected" >"$WORK/threads8.expected"
test_expect "8 threads on 2 cores, -mfentry, linked with libcgprof.a: exact" "
    gcc -O2 -pg -mfentry -DNT=8 -pthread $PROGS/threads.c $LIBA -o threads8 &&
    rm -f gmon.out && ./threads8 >/dev/null &&
    same_arcs threads8.expected threads8 gmon.out
"

# gmon.out has no arcs from libc; a cgprof profile keeps them, so the call
# that starts each thread -- its first, made on the slow path -- is counted.
test_expect "cgprof profile, 4 threads: every arc exact, each thread's first call included" "
    gcc -O2 -pg -pthread $PROGS/threads.c -o threads_cg && rm -f cgprof.data &&
    $CGPROF record --format cgprof ./threads_cg >/dev/null &&
    $CGPROF report -b -q cgprof.data | awk -f $ROOT/tests/arcs.awk | grep -v ' __cxa_atexit ' |
        sed 's/@@*GLIBC_[0-9.]* / /' | sort -u >got &&
    { cat threads.expected; echo '__libc_start_call_main main 1'
      # main's library calls (docs/libcalls.md): one printf, a join per thread
      echo 'main printf 1'; echo 'main pthread_join 4'
      # an unoptimized runtime (t0900's sanitizer build) calls the thread's
      # function from its thread_start rather than jumping to it, and the
      # report leaves the runtime's own frames out
      [ -n \"\${RT_UNOPTIMIZED:-}\" ] || echo 'start_thread thread_main 4'; } |
        sort | diff -u - got
"

# libcgprof.a linked into a dynamic program that cgprof record runs: the
# preloaded libcgprof.so finds the executable's copy (its ELF note) and
# only passes calls through; one runtime counts everything.  (Before, both
# ran: the report had no arcs, and the runtime's own functions as the
# program's.)  The executable's own library calls are not hooked when the
# runtime is linked into it (docs/libcalls.md): the -pg arcs only.
test_expect "linked with libcgprof.a, run by cgprof record (libcgprof.so preloaded too): one runtime, every arc exact" "
    gcc -O2 -pg -pthread $PROGS/threads.c $LIBA -o threads_a && rm -f a.data gmon.out &&
    $CGPROF record -o a.data ./threads_a >/dev/null &&
    $CGPROF report -b -q a.data | awk -f $ROOT/tests/arcs.awk | grep -v '^thread_start ' | sort -u >got &&
    { cat threads.expected; echo '__libc_start_call_main main 1'
      [ -n \"\${RT_UNOPTIMIZED:-}\" ] || echo 'start_thread thread_main 4'; } | sort | diff -u - got &&
    $CGPROF record --format gmon ./threads_a >/dev/null &&
    same_arcs threads.expected threads_a gmon.out
"

# glibc's mcount drops a call when another thread is inside it (a
# compare-and-swap on one global state): its counts can fall short of the
# truth, never exceed it, and it knows no arc that is not there -- an
# independent check of the expected counts above.
test_expect "glibc's runtime on the same program: no arc beyond the truth" "
    gcc -O2 -pg -pthread $PROGS/threads.c -o threads_glibc &&
    rm -f gmon.out && ./threads_glibc >/dev/null &&
    arcs_gprof threads_glibc gmon.out >glibc.arcs &&
    awk 'NR == FNR { want[\$1 \" \" \$2] = \$3; next }
        { k = \$1 \" \" \$2; lost += want[k] - \$3; n++
          if (!(k in want) || \$3 > want[k]) { print \"glibc: \" \$0 \", expected \" want[k] + 0; bad = 1 } }
        END { printf \"glibc kept %d arcs, %d calls short of the truth\\n\", n, lost; exit bad || n == 0 }' \
        threads.expected glibc.arcs
"
test_done

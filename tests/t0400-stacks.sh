#!/bin/sh
# t0400: sampled call stacks in the runtime -- every event source, every
# thread, through libc (built without frame pointers), dlopen'ed code,
# signal handlers, deep recursion, code that cannot be unwound.  The
# stacks are read by tests/stacks.py (its own decoder, nm for names) and
# checked against the programs' structure, known by construction.
. "$(dirname "$0")/lib.sh"

STACKS="python3 $ROOT/tests/stacks.py"
# our own code without frame pointers too: only the unwind tables can walk it
OPT="-O2 -fno-optimize-sibling-calls -fomit-frame-pointer"
gcc $OPT -pthread "$PROGS/stackchain.c" -o "$WORK/chain" -ldl &&
gcc -O2 -fno-optimize-sibling-calls -pg -pthread "$PROGS/stackchain.c" -o "$WORK/chain-pg" -ldl &&
gcc -O0 -pg -pthread "$PROGS/stackchain.c" -o "$WORK/chain-O0" -ldl &&
gcc $OPT -shared -fPIC "$PROGS/stackplugin.c" -o "$WORK/plugin.so" &&
gcc -O2 -fno-optimize-sibling-calls "$PROGS/stackedge.c" -o "$WORK/edge" || exit 1

# Minimum sample counts are low enough for itimer, one process-wide timer
# ticking at the kernel's 250 Hz for all threads together.
# share FOLDED PATTERN LEAF: of the samples whose leaf is LEAF, the
# fraction whose whole stack matches the awk regex PATTERN; prints
# "matched total fraction".
share() {
    awk -v pat="$2" -v leaf="$3" '!/^#/ {
        n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
        k = split(s, f, ";"); if (f[k] != leaf) next
        tot += n; if (s ~ pat) hit += n }
        END { printf "%d %d %.4f\n", hit, tot, tot ? hit / tot : 0 }' "$1"
}
# at_least "M T F" MIN_TOTAL MIN_FRACTION
at_least() {
    echo "$1" | awk -v t="$2" -v f="$3" '{ if ($2 < t || $3 < f) {
        print "matched " $1 " of " $2 " (" $3 "); want >= " f " of >= " t " samples"; exit 1 } }'
}

# chain_check EVENT PROG: every thread's stacks are whole, the leaf's two
# callers split 3:1 as the program does its work, qsort's comparator is
# seen under its caller through libc, and the dlopen'ed library's code
# under the function that called it.  (itimer and cpu tick with the
# kernel, at 250 Hz here: twice the work, or leaf had 58 samples, under
# the 60 asked, in a full check beside busy loops.)
chain_check() {
    n=10000
    case $1 in cpu | itimer) n=20000 ;; esac
    rm -f cgprof.data &&
    $CGPROF record -e "$1" ./"$2" $n "$WORK/plugin.so" >out &&
    $STACKS cgprof.data >folded && head -n 12 folded &&
    at_least "$(share folded '^_start;.*;main;(a;b|x);leaf$' leaf)" 60 0.97 &&
    at_least "$(share folded ';t_entry;t_mid;t_leaf$' t_leaf)" 10 0.97 &&
    at_least "$(share folded '^_start;.*;main;sorter;.libc.so.6.;.*cmp$' cmp)" 10 0.95 &&
    at_least "$(share folded '^_start;.*;main;call_plugin;plugin_work;plugin_leaf$' plugin_leaf)" 10 0.85 &&
    # 3/4 of leaf's work is under b: within 5 standard deviations, with a
    # true 1 kHz clock (cpu and itimer tick with the kernel at 250 Hz and
    # alias with this program's regular pattern: see docs/events.md).
    # Under wall the truth is the real time the program measured in a() and
    # x(), waiting for a CPU included: on a busy machine that is not 3/4.
    # Nor are wall's samples independent draws there: a running thread's
    # wait for a CPU (a time slice of another's, ~4 ms: 4 samples) goes
    # whole to the stack of its last sample, so its draws are a quarter as
    # many (beside busy loops, on one CPU: ab_real 0.70-0.78 and samples
    # 0.69-0.80, run to run, neither following the other).
    case $1 in cpu|itimer) return 0 ;; esac &&
    truth=0.75 draws=1 && if [ "$1" = wall ]; then truth=$(awk '$1 == "ab_real" { print $2 }' out) draws=4; fi &&
    share folded '^_start;.*;main;a;b;leaf$' leaf | awk -v t="$truth" -v k=$draws '{ p = $3; sd = sqrt(t * (1 - t) * k / $2);
        d = p - t; if (d < 0) d = -d;
        if (t == "" || d > 5 * sd + 0.01) { print "a;b share " p " vs " t " (sd " sd ")"; exit 1 } }'
}

for ev in cpu itimer cpu-clock wall; do
    test_expect "-e $ev: whole stacks in every thread, through qsort and a dlopen'ed library" \
        "chain_check $ev chain"
done
test_expect "-pg -O2 and -pg -O0 programs: the same stacks (mcount's frames unwound too)" \
    "chain_check cpu chain-pg && chain_check cpu-clock chain-O0"

# Blocked threads under wall: the stack of a thread asleep in the kernel,
# read from /proc without interrupting it (its rbp unknown), reaches the
# -O0 function that slept and main.
test_expect "-e wall: a sleeping thread's stacks reach the function that slept" '
    gcc -O0 -pthread "$PROGS/sleepy.c" -o sleepy &&
    $CGPROF record -e wall ./sleepy >/dev/null &&
    $STACKS cgprof.data >folded && cat folded &&
    at_least "$(share folded "^_start;.*;main;nap;" "[libc.so.6]")" 100 0.95'

# (a thread's first deep stacks, before it walks its own, are cut at the
# end of their 8 KB copy -- on a loaded machine half of this short run's:
# t0405 checks the share on longer runs)
test_expect "deep recursion: 2048 frames kept, the rest cut and counted" '
    CGPROF_STACK_SYNC=1 $CGPROF record ./edge deep 6000 >/dev/null && $STACKS cgprof.data >folded &&
    head -c 300 folded && grep -q "^# samples [0-9]* stacked [0-9]* cut [1-9]" folded &&
    awk "!/^#/ && /;spin [0-9]+\$/ { c = \$NF; s = \$0; sub(/ [0-9]+\$/, \"\", s); n = split(s, f, \";\");
        if (f[1] != \"[cut]\") { print \"frames \" n \" root \" f[1]; exit 1 }
        tot += c; if (n == 2049) full += c
        for (i = 2; i < n; i++) if (f[i] != \"rec\") { print \"frame \" i \" is \" f[i]; exit 1 } }
        END { print full \" of \" tot \" at the limit\"; exit !(tot >= 15 && full >= 1) }" folded'

test_expect "signal handlers: stacks run through the signal frame to main" '
    $CGPROF record ./edge handler 20000 >out && grep -qx done out &&
    $STACKS cgprof.data >folded && cat folded &&
    at_least "$(share folded "^_start;.*;main;in_handler;.*;on_usr1;spin\$" spin)" 20 0.9'
# A handler on an alternate stack: perf's copy is of that stack, so by
# default its stacks are cut at the signal frame, and marked; with
# CGPROF_STACK_SYNC=1 the thread walks them itself, through to main, once
# the sampler has seen them cut (its first ones stay cut).  Either way,
# every stack of spin is one of those two, never another.
for sync in 0 1; do
    test_expect "a signal handler on an alternate stack (CGPROF_STACK_SYNC=$sync): whole or cut there" "
        CGPROF_STACK_SYNC=$sync \$CGPROF record ./edge altstack 20000 >out && grep -qx done out &&
        \$STACKS cgprof.data >folded && cat folded &&
        at_least \"\$(share folded '^(_start;.*;main;in_handler;.*|[[]cut[]];.*);on_usr1;spin\$' spin)\" 20 1 &&
        at_least \"\$(share folded '^_start;.*;main;in_handler;.*;on_usr1;spin\$' spin)\" 0 \$([ $sync = 1 ] && echo 0.2 || echo 0)"
done

test_expect "code that cannot be unwound (JIT, bad rbp, coroutine stack): no crash, status 0" '
    for ev in cpu cpu-clock wall; do
        for m in jit badrbp coro; do
            $CGPROF record -e $ev ./edge $m 1000 >out && grep -qx done out &&
            $STACKS cgprof.data >folded && head -n 3 folded || return 1
        done
    done &&
    $CGPROF record ./edge coro 20000 >/dev/null && $STACKS cgprof.data >folded &&
    at_least "$(share folded "coro_body;spin\$" spin)" 20 0.9'

test_expect "--no-stacks and CGPROF_STACKS=0 record no stacks; gmon.out is unchanged by stacks" '
    $CGPROF record --no-stacks ./chain 300 >/dev/null && $STACKS cgprof.data | grep -qx "# no stacks" &&
    CGPROF_STACKS=0 $CGPROF record ./chain 300 >/dev/null &&
    $STACKS cgprof.data | grep -qx "# no stacks" &&
    setarch -R $CGPROF record -F 0 --format gmon ./chain-pg 300 >/dev/null && mv gmon.out with &&
    CGPROF_STACKS=0 setarch -R $CGPROF record -F 0 --format gmon ./chain-pg 300 >/dev/null &&
    cmp with gmon.out'

test_done

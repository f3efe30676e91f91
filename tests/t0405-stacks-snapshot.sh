#!/bin/sh
# t0405: every sampled stack is one moment's (docs/stacks.md, "One moment
# per stack").  tests/progs/stackpaths.c alternates between two call paths
# of the same shape, pathA -> ra x DEPTH -> leafA and pathB -> rb x DEPTH ->
# leafB, a millisecond at each leaf: a stack taken from two moments shows
# a leaf under the other path's frames.  The stacks are read by
# tests/stacks.py (its own decoder, nm for names); the program's structure
# is the truth: a leaf's stack is its own path, DEPTH frames deep, to the
# program's root -- or, past the depth limit or the end of a stack copy,
# its own frames under a [cut] marker, never another path's.
. "$(dirname "$0")/lib.sh"

STACKS="python3 $ROOT/tests/stacks.py"
gcc -O2 -fno-optimize-sibling-calls -pthread "$PROGS/stackpaths.c" -o "$WORK/paths" &&
gcc -O2 -fno-optimize-sibling-calls "$PROGS/stackexec.c" -o "$WORK/stackexec" &&
gcc -O2 -fno-optimize-sibling-calls "$PROGS/eintr.c" -o "$WORK/eintr" &&
gcc -O2 -pthread "$PROGS/sleepers.c" -o "$WORK/sleepers" || exit 1

# paths_check FOLDED DEPTH WANT: the stacks of leafA and leafB in FOLDED.
#   whole: >= 75% of them are whole (root to leaf, DEPTH frames of their
#          own recursion; the rest cut, never mixed: a thread's first deep
#          stacks are cut at the end of their copy, until it walks them
#          itself, and so is a sample whose signal the kernel delivers
#          more than a period late -- its snapshot is of a later moment
#          and matches no record), at least 40 samples.  The 20 KB frames
#          run 300 rounds (some 0.2 s): at 100 rounds the first look's
#          share and the late signals left 60-100% whole (kernel 6.18,
#          16 runs, 8 beside two busy loops; 3 in 13 under 75%); at 300,
#          84-100%
#   all:   >= 95% whole, the rest cut (CGPROF_STACK_SYNC=2: every user-mode
#          sample walked where its thread stopped; those in the kernel
#          are left out with --kernel, below)
#   limit: all cut: >= 65% at the depth limit, [cut] then 2048 frames,
#          their own (the rest: a thread's first deep stacks, cut at the
#          end of their copy before it walks its stacks itself)
#   cut:   whole or cut, never mixed, and at least 90% cut (copies only)
# Any stack with the other path's frames, or a root that is neither the
# program's (_start, or the thread's start in libc) nor [cut], fails.
paths_check() {
    awk -v depth="$2" -v want="$3" '
    !/^#/ {
        n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
        if (f[k] != "leafA" && f[k] != "leafB") next
        me = substr(f[k], 5); other = me == "A" ? "B" : "A"
        rec = (big ? "big" : "r") (big ? me : tolower(me))
        tot += n; mine = 0; bad = ""
        for (i = 1; i < k; i++) {
            if (f[i] ~ ("^(path" other "|r" tolower(other) "|big" other ")$")) bad = "mixed"
            if (f[i] ~ "^(r" tolower(me) "|big" me ")$") mine++
        }
        if (f[1] == "[cut]") cut += n
        else if (f[1] != "_start" && f[1] != "[libc.so.6]") bad = bad " root " f[1]
        else if (mine != depth || s !~ ("run;path" me ";")) bad = bad " whole with " mine " frames"
        else whole += n
        if (want == "limit" && f[1] != "[cut]") bad = bad " not cut"
        if (want == "limit" && (k != 2049 || mine != 2047)) short += n
        if (bad != "") { print "bad stack (" bad "): " substr(s, 1, 200) " ... " f[k] " " n; err = 1 }
    }
    END {
        printf "leaf samples %d whole %d cut %d\n", tot, whole, cut
        if (err) exit 1
        if (tot < 40) { print "too few samples"; exit 1 }
        if (want == "whole" && whole < 0.75 * tot) { print "too few whole"; exit 1 }
        if (want == "all" && whole < 0.95 * tot) { print "too few whole"; exit 1 }
        if (want == "cut" && cut < 0.9 * tot) { print "too few cut"; exit 1 }
        if (want == "limit" && short > 0.35 * tot) { print short " cut short of the limit"; exit 1 }
    }' big="${4:-}" "$1"
}

# perf events' stacks deeper than their copy are walked by the thread
# itself with CGPROF_STACK_SYNC=1; by default (below) such a thread's
# user-mode samples go to a handler event; the cpu event's handler always
# walks the thread's own stack.
for ev in cpu-clock cpu; do
    test_expect "-e $ev: 400 frames deep, two paths: every stack whole and one moment's" "
        CGPROF_STACK_SYNC=1 \$CGPROF record -e $ev ./paths small 400 400 >out && grep -qx done out &&
        \$STACKS cgprof.data >folded && head -n 1 folded && paths_check folded 400 whole"
    test_expect "-e $ev: 20 KB frames 400 deep (8 MB of stack): the same" "
        CGPROF_STACK_SYNC=1 \$CGPROF record -e $ev ./paths big 400 300 >out && grep -qx done out &&
        \$STACKS cgprof.data >folded && head -n 1 folded && paths_check folded 400 whole 1"
    test_expect "-e $ev: 6,000 frames deep: cut at 2,048 and marked, no garbage root" "
        CGPROF_STACK_SYNC=1 \$CGPROF record -e $ev ./paths small 6000 100 >out && grep -qx done out &&
        \$STACKS cgprof.data >folded && head -n 1 folded &&
        grep -q '^# samples [0-9]* stacked [0-9]* cut [1-9]' folded && paths_check folded 6000 limit"
done

# By default a thread whose stack outgrows its copy goes to a handler
# event (docs/stacks.md): its first deep samples are cut at the copy's
# end, and from then on its user-mode stacks are whole.
test_expect "by default: 400 frames deep, two paths: every stack whole and one moment's (from the first deep samples on)" '
    $CGPROF record ./paths small 400 400 >out && grep -qx done out &&
    $STACKS cgprof.data >folded && head -n 1 folded && paths_check folded 400 whole'
test_expect "by default: 20 KB frames 400 deep (8 MB of stack), in a thread: the same" '
    $CGPROF record ./paths big 400 300 >out && grep -qx done out &&
    $STACKS cgprof.data >folded && head -n 1 folded && paths_check folded 400 whole 1'
test_expect "by default: 6,000 frames deep: cut at 2,048 and marked, no garbage root" '
    $CGPROF record ./paths small 6000 100 >out && grep -qx done out &&
    $STACKS cgprof.data >folded && head -n 1 folded &&
    grep -q "^# samples [0-9]* stacked [0-9]* cut [1-9]" folded && paths_check folded 6000 limit'

# -e wall: a thread blocked in a system call, 400 frames deep (32 KB), has
# its stack read by the sampler while it is blocked, as far as the walk
# needs (docs/stacks.md): whole, and one moment's (the thread's CPU run
# time unchanged over the read), its leaf the one that sleeps.
test_expect "-e wall: a thread blocked 400 frames deep, two paths: every stack whole and one moment's" '
    $CGPROF record -e wall ./paths sleep 400 300 >out && grep -qx done out &&
    $STACKS cgprof.data >folded && head -n 1 folded && paths_check folded 400 whole'

# -e wall, a running thread 400 frames deep: as by default (above), it
# goes to a handler event at its first walks cut by the copy's end, so its
# stacks are whole (all cut before: 759 of 759 leaf samples); its time
# waiting for a CPU is charged where its handler last sampled it.  Its
# samples stand for at least its CPU time and at most the run's real time
# (load cannot break either bound) -- plus 5%: a deep thread's ring event
# takes kernel-mode samples beside its handler event; those that fell in
# the delivery of the handler event's own signal put it 1.5-4.9% over its
# CPU time (12 runs, quiet) until they were dropped (in_signal_path):
# 100.1-102.4% in 6 runs since, where without that 101.6-109.1%
# (docs/stacks.md).
wall_span() { # DATA ELAPSED_NS
    $CGPROF report --json "$1" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
el = int(sys.argv[1]) / 1e9
s = sum(t["sampled_seconds"] for t in d["threads"])
c = sum(t["cpu_seconds"] for t in d["threads"])
print("sampled %.3f s, CPU %.3f s, real %.3f s" % (s, c, el))
sys.exit(not (0.95 * c <= s <= 1.05 * el))' "$2"
}
test_expect "-e wall: a running thread 400 frames deep, two paths: every stack whole and one moment's, its samples between its CPU time and the real time" '
    t0=$(date +%s%N) && $CGPROF record -e wall -o w.data ./paths small 400 400 >out &&
    t1=$(date +%s%N) && grep -qx done out &&
    $STACKS w.data >folded && head -n 1 folded && paths_check folded 400 whole &&
    wall_span w.data $((t1 - t0))'

# The same on one CPU with a busy loop (taskset): some three quarters of
# its real time waiting for the CPU, charged where its handler event last
# sampled it -- whole stacks; charged to its last ring sample's stack
# instead (the copies: cut), the whole share would be a quarter.
if command -v taskset >/dev/null 2>&1; then
    test_expect "-e wall: the same thread sharing one CPU with a busy loop: its waiting time on its whole stacks" '
        taskset -c 0 sh -c "while :; do :; done" & busy=$!
        t0=$(date +%s%N) && taskset -c 0 $CGPROF record -e wall -o w1.data ./paths small 400 400 >out
        rc=$?; t1=$(date +%s%N); kill $busy; test $rc -eq 0 && grep -qx done out &&
        $STACKS w1.data >folded && head -n 1 folded && paths_check folded 400 whole &&
        wall_span w1.data $((t1 - t0))'
fi

# A counting event: page faults, 64 in each leaf (stackpaths fault), one
# sample per 251 (each weighs 251 faults; a period of 256 would divide the
# 128 faults of a round and land on the same leaf every time).  By default a thread deeper than
# its copies goes to a handler event of the same event as for time events
# (all cut before), if its event has overflowed no faster than 2.5 kHz so
# far (a counting event's rate is the program's); the leaves' faults, 300
# rounds x 2 x 64 = 38,400, within 25%, half each.  At one sample per
# fault (some 50 kHz) the thread keeps its copies, cut, and runs to its end.
test_expect "-e page-faults -c 251: 400 frames deep, two paths: every stack whole and one moment's, the leaves' faults counted" '
    $CGPROF record -e page-faults -c 251 -o pf.data ./paths fault 400 300 >out && grep -qx done out &&
    $STACKS pf.data >folded && head -n 1 folded && paths_check folded 400 whole &&
    awk "/leafA [0-9]+\$/ { a += \$NF } /leafB [0-9]+\$/ { b += \$NF }
        END { print \"leafA\", a, \"leafB\", b; exit !(a + b > 28800 && a + b < 48000 && a > 0.35 * (a + b) && b > 0.35 * (a + b)) }" folded'
# Without -c the event is sampled at the rate (-F, 1 kHz), each sample
# weighing the faults since the thread's last: a deep thread goes to a
# handler event as at a fixed period, each of its samples weighing the
# count it reads (before: all cut, and 147 records merged for full rings).
# Every fault is counted: the leaves' 38,400 within 2% below, 1% above (the
# faults before the first sample and those outside the leaves are charged
# where samples land), half each.
test_expect "-e page-faults (at the rate): 400 frames deep, two paths: every stack whole and one moment's, every leaf fault counted" '
    $CGPROF record -e page-faults -o pfr.data ./paths fault 400 300 >out 2>err && grep -qx done out && cat err &&
    $STACKS pfr.data >folded && head -n 1 folded && paths_check folded 400 all &&
    awk "/leafA [0-9]+\$/ { a += \$NF } /leafB [0-9]+\$/ { b += \$NF }
        END { print \"leafA\", a, \"leafB\", b; exit !(a + b >= 37632 && a + b <= 38784 && a > 0.4 * (a + b) && b > 0.4 * (a + b)) }" folded'
test_expect "-e page-faults -c 1: a deep thread faulting at some 50 kHz keeps its copies (cut) and runs to its end" '
    timeout -k 10 60 $CGPROF record -e page-faults -c 1 -o pf1.data ./paths fault 400 300 >out 2>err; rc=$?
    cat err; test $rc -eq 0 && grep -qx done out &&
    $STACKS pf1.data >folded && head -n 1 folded && paths_check folded 400 cut'

# Fast sampling of a deep thread: its signals must not come faster than it
# can take them.  Threads go to handler events only up to 10 kHz, and a
# walk in a handler takes at most a quarter of the period (cut past it).
# At 20 kHz a 400-frame thread's queued signals once filled the user's
# real-time signal queue, and the kernel's SIGIO killed the program.
# CGPROF_STACK_SYNC=1 and 2, which signal at every sample, keep the same
# limit: above 10 kHz their threads keep their copies.
test_expect "a deep thread sampled at 10 and 20 kHz runs to its end (by default, CGPROF_STACK_SYNC=1 and 2)" '
    for sync in 3 1 2; do
        for hz in 10000 20000; do
            CGPROF_STACK_SYNC=$sync timeout -k 10 60 $CGPROF record -F $hz -o hz.data ./paths small 400 300 >out ||
                { echo "CGPROF_STACK_SYNC=$sync -F $hz failed"; exit 1; }
            grep -qx done out || exit 1
        done
    done'

# Where a thread cannot walk its own stack, its sample's copy of the stack
# (8 KB) is walked, and nothing else: the 32 KB of these stacks end in a
# cut marker, never in frames read later.
test_expect "CGPROF_STACK_SYNC=0: stacks from the copies only, cut at their end" '
    CGPROF_STACK_SYNC=0 $CGPROF record ./paths small 400 300 >out && grep -qx done out &&
    $STACKS cgprof.data >folded && head -n 1 folded && paths_check folded 400 cut'
for sync in 1 3; do
    test_expect "CGPROF_STACK_SYNC=$sync: a thread with every signal blocked: stacks from the copies, cut; it runs to the end" "
        CGPROF_STACK_SYNC=$sync \$CGPROF record ./paths masked 400 600 >out && grep -qx done out &&
        \$STACKS cgprof.data >folded && head -n 1 folded && paths_check folded 400 cut"
done

# A deep thread gets the runtime's signal at every sample; it execs: none
# may reach the next image (its default action ends the process).
test_expect "a deep thread that execs, 6 times: every image runs to its end" '
    CGPROF_STACK_SYNC=1 $CGPROF record -o x.data ./stackexec 5 >out && cat out && grep -qx "done 0" out'
test_expect "by default: a deep thread that execs, 6 times: every image runs to its end" '
    $CGPROF record -o x3.data ./stackexec 5 >out && cat out && grep -qx "done 0" out'

# CGPROF_STACK_SYNC=2: a time event's user-mode samples are taken by their
# thread itself, from a user-only event that signals it at every overflow
# (docs/stacks.md): every stack is one moment's, to 2,048 frames, at any
# depth; a thread that blocks the signal is not sampled and the report
# says so; a signal never comes while the thread is in the kernel, so no
# system call returns EINTR because of it.
# Samples taken in the kernel (page faults, the signals' own delivery, a
# busy machine's preemptions: 6-10% of the 20 KB frames' samples) come
# from the second event's copies, cut at their end; with --kernel they
# end in kernel frames instead of leafA/leafB and are left out here.
kflag=
if [ "$(id -u)" -eq 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -lt 2 ]; then
    kflag=--kernel
fi
test_expect "CGPROF_STACK_SYNC=2: 1,200 frames deep, two paths: every stack whole and one moment's" '
    CGPROF_STACK_SYNC=2 $CGPROF record $kflag ./paths small 1200 200 >out && grep -qx done out &&
    $STACKS cgprof.data >folded && head -n 1 folded && paths_check folded 1200 all'
test_expect "CGPROF_STACK_SYNC=2: 20 KB frames 400 deep (8 MB of stack), in a thread: the same" '
    CGPROF_STACK_SYNC=2 $CGPROF record $kflag ./paths big 400 300 >out && grep -qx done out &&
    $STACKS cgprof.data >folded && head -n 1 folded && paths_check folded 400 all 1'
test_expect "CGPROF_STACK_SYNC=2: 6,000 frames deep: cut at 2,048 and marked, no garbage root" '
    CGPROF_STACK_SYNC=2 $CGPROF record ./paths small 6000 100 >out && grep -qx done out &&
    $STACKS cgprof.data >folded && head -n 1 folded &&
    grep -q "^# samples [0-9]* stacked [0-9]* cut [1-9]" folded && paths_check folded 6000 limit'
test_expect "CGPROF_STACK_SYNC=2: a thread with every signal blocked runs to its end; the report names why it has no samples" '
    CGPROF_STACK_SYNC=2 $CGPROF record -o m.data ./paths masked 400 600 >out && grep -qx done out &&
    $CGPROF report -b -p m.data >/dev/null 2>err; cat err &&
    grep -q "1 of the 1 threads blocked the profiler.s sampling signal" err'
test_expect "CGPROF_STACK_SYNC=2: a deep thread that execs, 6 times: every image runs to its end" '
    CGPROF_STACK_SYNC=2 $CGPROF record -o x2.data ./stackexec 5 >out && cat out && grep -qx "done 0" out'
# eintr.c: 400 frames deep, pipe writes and reads (kernel time) before
# each 20 us nanosleep, 3,000 times; exits 3 if any nanosleep returned
# EINTR (CGPROF_STACK_SYNC=1 made 3 of 3,000 do so here: docs/stacks.md).
# Its time in write and read is sampled all the same (as root: the
# kernel's samples come from the second event).  By default the same: the
# thread, deeper than its copies, goes to a user-only handler event, and
# its first period's end signals the sampler thread, not it (beside two
# busy loops 1 nanosleep in 3,000 returned EINTR in 2 of 7 runs while
# that signal went to the thread).
test_expect "by default: no EINTR in 3,000 nanosleeps after system calls in a deep thread; their time is sampled" '
    $CGPROF record -o e3.data ./eintr 3000 >out; rc=$?; cat out && test $rc -eq 0 &&
    $CGPROF report -b -p e3.data >flat 2>/dev/null && cat flat &&
    if [ "$(id -u)" -eq 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -lt 2 ]; then
        grep -q " write \[libc.so.6\]\$" flat && grep -q " read \[libc.so.6\]\$" flat; fi &&
    grep -q " round_trip\$" flat'
# sleepers.c: 200 short threads in turn, each computing a little and
# sleeping 20 us 60 times.  Each thread's first period, drawn at random,
# may end in the kernel on the way into a nanosleep; its signal went to
# the thread until it went to the sampler thread: 6-13 of the 12,000
# nanosleeps returned EINTR, under every ring event (by default, -e wall,
# --no-stacks, CGPROF_STACK_SYNC=0).
test_expect "short threads that sleep: no EINTR in 12,000 nanosleeps, by default, -e wall, --no-stacks, CGPROF_STACK_SYNC=0" '
    for v in default wall nostacks sync0; do
        case $v in
        default) $CGPROF record -o s.data ./sleepers 200 >out; rc=$? ;;
        wall) $CGPROF record -e wall -o s.data ./sleepers 200 >out; rc=$? ;;
        nostacks) $CGPROF record --no-stacks -o s.data ./sleepers 200 >out; rc=$? ;;
        sync0) CGPROF_STACK_SYNC=0 $CGPROF record -o s.data ./sleepers 200 >out; rc=$? ;;
        esac
        echo "$v: $(cat out)"; test $rc -eq 0 || return 1
    done'
test_expect "CGPROF_STACK_SYNC=2: no EINTR in 3,000 nanosleeps after system calls; their time is sampled" '
    CGPROF_STACK_SYNC=2 $CGPROF record -o e.data ./eintr 3000 >out; rc=$?; cat out && test $rc -eq 0 &&
    $CGPROF report -b -p e.data >flat 2>/dev/null && cat flat &&
    if [ "$(id -u)" -eq 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -lt 2 ]; then
        grep -q " write \[libc.so.6\]\$" flat && grep -q " read \[libc.so.6\]\$" flat; fi &&
    grep -q " round_trip\$" flat'

# The stacks cost no system call per word: the sampler thread reads none
# of the program's memory (strace counts process_vm_readv).
if command -v strace >/dev/null 2>&1; then
    test_expect "no process_vm_readv while sampling a deep stack (by default, and walked by the thread)" '
        strace -f -qq -c -e trace=process_vm_readv -o trace0 $CGPROF_REAL record ./paths small 400 300 >out &&
        grep -qx done out && cat trace0 && ! grep -q process_vm_readv trace0 &&
        CGPROF_STACK_SYNC=1 strace -f -qq -c -e trace=process_vm_readv -o trace $CGPROF_REAL record ./paths small 400 300 >out &&
        grep -qx done out && cat trace && ! grep -q process_vm_readv trace'
else
    test_skip "no process_vm_readv while sampling a deep stack" "no strace"
fi

test_done

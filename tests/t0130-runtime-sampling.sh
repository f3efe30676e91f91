#!/bin/sh
# t0130: every thread is sampled; the flat profile's seconds add up to the
# process's CPU time; long runs do not wrap 16-bit histogram bins.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg -pthread "$PROGS/spin.c" -o "$WORK/spin" || exit 1
gcc -O2 -pg "$PROGS/touch.c" -o "$WORK/touch" || exit 1

# flat_total PROG GMON: the last "cumulative seconds" of gprof's flat profile
flat_total() {
    gprof -b -p "$1" "$2" | awk '$1 ~ /^[0-9.]+$/ && NF >= 4 { t = $2 } END { print t + 0 }'
}
# within A B PCT: |A - B| <= PCT% of B
within() {
    awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
        if (d > b * p / 100) { print a " is not within " p "% of " b; exit 1 } }'
}

for n in 1 4; do
    test_expect "$n thread(s) of CPU: flat profile seconds within 10% of CPU time" "
        rm -f gmon.out && LD_PRELOAD=$LIBSO ./spin threads $n 300 >cpu &&
        total=\$(flat_total spin gmon.out) && echo \"flat \$total cpu \$(cat cpu)\" &&
        within \$total \$(cat cpu) 10
    "
done

test_expect "cgprof report shows the same seconds" "
    rm -f gmon.out && LD_PRELOAD=$LIBSO ./spin threads 2 200 >cpu &&
    gprof -b -p spin gmon.out | grep ' burn\$' >g &&
    $CGPROF report -b -p spin gmon.out | grep ' burn\$' >c &&
    diff g c
"

# the cpu event: its POSIX timers report the periods a late expiry missed
# (weighted samples), where perf's cpu-clock is throttled by the kernel
# at 100 kHz (the report says how much went unsampled: t0305)
test_expect "a bin past 65,535 samples: split records, GNU gprof sums them" "
    rm -f gmon.out && CGPROF_EVENT=cpu CGPROF_FREQ=100000 LD_PRELOAD=$LIBSO ./spin one 1200 >cpu &&
    python3 $ROOT/tests/gmon_bins.py gmon.out >bins && cat bins &&
    grep -q ' records 65535 [1-9][0-9]*' bins &&
    total=\$(flat_total spin gmon.out) && echo \"flat \$total cpu \$(cat cpu)\" &&
    within \$total \$(cat cpu) 10
"

# touch.c takes exactly N page faults at one instruction: the bin holding
# it must sum to N over the records it is split into (read by a reader of
# its own, tests/gmon_bins.py).  The perf ring buffer can overflow when the
# machine is loaded and the sampler thread waits for a CPU; the runtime
# then says how many samples it lost, and only such a run is repeated (up
# to 5 times).
touch_bins() {
    for try in 1 2 3 4 5; do
        rm -f gmon.out && $CGPROF record -e page-faults -c 1 --format gmon ./touch 66000 >/dev/null 2>err &&
            cat err || return 1
        grep -q 'samples could not be recorded' err || break
    done
    python3 $ROOT/tests/gmon_bins.py gmon.out >bins && cat bins &&
        grep -q ' sum 66000 records 65535 465$' bins
}
if ! perf stat -e page-faults true >/dev/null 2>&1; then
    test_skip "a bin of 66,000 page faults" "perf events not permitted here"
else
    test_expect "a bin of 66,000 page faults: records of 65,535 and 465, exactly" touch_bins
fi

test_expect "CGPROF_FREQ=0: call counts only, still exact" "
    rm -f gmon.out && CGPROF_FREQ=0 LD_PRELOAD=$LIBSO ./spin threads 1 50 >/dev/null &&
    printf 'thread_main burn 1\n' >exp && same_arcs exp spin gmon.out
"
# the cpu event's POSIX timers each take a queued signal: none with
# RLIMIT_SIGPENDING 0
test_expect "a thread that cannot get a timer is reported, never silently unsampled" "
    command -v bash >/dev/null &&
    rm -f gmon.out && bash -c 'ulimit -i 0; CGPROF_EVENT=cpu LD_PRELOAD=$LIBSO ./spin threads 3 20' >/dev/null 2>err &&
    grep -q '^cgprof: 4 threads could not be given a CPU timer' err
"
test_done

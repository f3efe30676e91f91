#!/bin/sh
# t0406: an ordinary user's limits, named right.  Each sampled thread's
# ring buffer is locked memory, and a user's rings may lock
# perf_event_mlock_kb per CPU, then RLIMIT_MEMLOCK: threads past that go
# unsampled, and the message must name that limit, not perf_event_paranoid
# (issue 19, item 7).  Run as `nobody` with runuser; the threads left
# unsampled are counted against the program's own count of its threads.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1 ||
    [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
    test_skip "an ordinary user's threads past the locked-memory limit: the limit is named" \
        "needs root, runuser, a nobody user and perf_event_paranoid <= 2"
    test_done
    exit
fi
# barrier.c's 200 threads all exist at once (each waits for the others), so
# their rings are all wanted together, whatever the machine's speed
gcc -O2 -pthread "$PROGS/barrier.c" -o "$WORK/threads200" || exit 1
chmod 755 "$WORK"

test_expect "an ordinary user's threads past the locked-memory limit: the limit is named" '
    chmod 777 . &&
    runuser -u nobody -- sh -c "ulimit -l 1024 && $CGPROF_REAL record -o t.data ./threads200" >out 2>err;
    cat err &&
    n=$(sed -n "s/^cgprof: \([0-9]*\) threads not sampled.*/\1/p" err) &&
    test "${n:-0}" -gt 0 && test "$n" -le 200 &&
    grep -q "^cgprof: ring buffer: no locked memory left .*perf_event_mlock_kb.*RLIMIT_MEMLOCK" err &&
    ! grep -q perf_event_paranoid err'

test_done

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

# CGPROF_STACK_SYNC=2: the threads' user-mode samples come from events
# without rings, which lock no memory: all 200 threads are sampled under
# the same limit (barrier.c spins 20 ms in each), none unsampled; the
# samples are the threads' CPU time x rate, less the time the events
# counted that no sample may stand for (late_seconds: at
# perf_event_paranoid 2 the kernel's part, 19-20% of this program's).
test_expect "CGPROF_STACK_SYNC=2: the same 200 threads as an ordinary user, every one sampled" '
    chmod 777 . &&
    runuser -u nobody -- sh -c "ulimit -l 1024 && CGPROF_STACK_SYNC=2 $CGPROF_REAL record -o t2.data ./threads200" >out 2>err;
    cat err && ! grep -q "not sampled" err && ! grep -q "locked memory" err &&
    $CGPROF report --json t2.data >j 2>rep.err && cat rep.err && ! grep -q "could not be sampled" rep.err &&
    python3 -c "import json,sys; j=json.load(open(\"j\")); t=j[\"threads\"]; r=j[\"runtime\"]
busy=[x for x in t if x[\"cpu_seconds\"] > 0.015]
none=[x[\"tid\"] for x in busy if x[\"samples\"] == 0]
s=sum(x[\"samples\"] for x in t); c=sum(x[\"cpu_seconds\"] for x in t) - r[\"start_cpu_seconds\"]
late=r[\"late_seconds\"]
print(len(t), \"threads,\", len(busy), \"spun;\", s, \"samples for\", round(c, 3), \"s of CPU,\", round(late, 3), \"s unsampled; spun without samples:\", none)
sys.exit(not (len(busy) >= 200 and not none and 0.97 * (c - late) * 1000 - 20 <= s <= 1.01 * c * 1000 + 20))"'

test_done

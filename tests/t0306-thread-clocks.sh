#!/bin/sh
# t0306: short threads are never sampled for more than they ran, under each
# event.  tests/progs/thrclock.c starts 60 threads, two at a time, each
# burning 2-20 ms of CPU and reading its own clocks last thing (its CPU
# clock, CLOCK_THREAD_CPUTIME_ID, and its real time); the profile's
# per-thread samples (report --json "threads") may not exceed what those
# clocks allow at the profile's rate, per thread and in all, beyond a
# period's phase and 3 deviations of the count (tests/thread_clocks.py).
# CPU events against the CPU clock; wall against the real time.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg "$PROGS/thrclock.c" -o "$WORK/thrclock" -lpthread || exit 1

if perf stat -e cpu-clock true >/dev/null 2>&1; then
    perf_ok=1
else
    perf_ok=0
fi

# clocks EVENT CLOCK [PAR]: record thrclock under EVENT, check its threads
clocks() {
    rm -f t.data && $CGPROF record -e $1 -o t.data ./thrclock 60 20000 ${3:-2} >truth 2>err &&
        $CGPROF report --json t.data >t.json 2>/dev/null &&
        python3 $ROOT/tests/thread_clocks.py t.json truth $2
}

for e in cpu-clock task-clock wall cpu itimer; do
    clock=cpu
    [ $e = wall ] && clock=real
    case $e in cpu | itimer) need=0 ;; *) need=1 ;; esac
    if [ $need = 1 ] && [ $perf_ok = 0 ]; then
        test_skip "-e $e: no short thread sampled for more than its $clock clock, nor all of them" \
            "perf events not permitted here"
        continue
    fi
    test_expect "-e $e: no short thread sampled for more than its $clock clock, nor all of them" "clocks $e $clock"
done

# four at a time on a machine with fewer cores: threads wait for a CPU,
# which no CPU event may count, and wall counts as real time (the wait
# read from schedstat) but never past the thread's own real time
if [ $perf_ok = 1 ]; then
    test_expect "-e cpu-clock, four threads at a time: none sampled for more than its CPU clock" "clocks cpu-clock cpu 4"
    test_expect "-e wall, four threads at a time: none sampled for more than its real time" "clocks wall real 4"
fi

test_done

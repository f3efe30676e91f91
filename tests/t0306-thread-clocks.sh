#!/bin/sh
# t0306: short threads are never sampled for more than they ran, under each
# event.  tests/progs/thrclock.c starts 60 threads, two at a time, each
# burning 2-20 ms of CPU and reading its own clocks last thing (its CPU
# clock, CLOCK_THREAD_CPUTIME_ID, and its real time); the profile's
# per-thread samples (report --json "threads") may not exceed what those
# clocks allow at the profile's rate, per thread and in all, beyond a
# period's phase and 3 deviations of the count (tests/thread_clocks.py).
# CPU events against the CPU clock (perf's clocks: and the time a VM's
# hypervisor held the CPU, which they count); wall against the real time.
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
    [ $e = cpu-clock ] || [ $e = task-clock ] && clock=cpu+steal
    [ $e = wall ] && clock=real
    # (ITIMER_PROF is the process's: a thread other than the one whose CPU
    # ran it out may take its signal -- on a loaded machine 12 samples for
    # a 16 ms thread at 243 Hz, 1 run in 4 -- so all of them together)
    [ $e = itimer ] && clock=process
    case $e in cpu | itimer) need=0 ;; *) need=1 ;; esac
    if [ $need = 1 ] && [ $perf_ok = 0 ]; then
        test_skip "-e $e: no short thread sampled for more than its $clock clock, nor all of them" \
            "perf events not permitted here"
        continue
    fi
    what="no short thread sampled for more than its $clock clock, nor all of them"
    [ $clock = process ] && what="the short threads together sampled for no more than their CPU clocks"
    test_expect "-e $e: $what" "clocks $e $clock"
done

# report --threads says of each thread what the JSON says: its samples,
# their seconds at the rate, its CPU seconds, "(running)" only for a
# thread that had not ended (main, whose profile is written at its exit)
test_expect "report --threads: each thread's samples, seconds, CPU and ending as the JSON gives them" "
    clocks cpu-clock cpu+steal && $CGPROF report -b --threads t.data >thr 2>/dev/null &&
    python3 -c 'import json, sys
r = json.load(open(\"t.json\"))
want = {}
for t in r[\"threads\"]:
    want[t[\"tid\"]] = \"%10u %10u %10.2f %12.2f%s\" % (t[\"tid\"], t[\"samples\"], t[\"samples\"] / r[\"rate\"],
        t[\"cpu_seconds\"], \"\" if t[\"ended\"] else \"  (running)\")
got, on = {}, False
for ln in open(\"thr\"):
    ln = ln.rstrip(\"\\n\")
    if \"Per-thread totals\" in ln:
        on = True
    elif on and ln.split() and ln.split()[0].isdigit():
        got[int(ln.split()[0])] = ln
    elif on and ln.startswith(\"Flat profile\"):
        break
bad = [\"want: %s\\ngot:  %s\" % (w, got.get(t)) for t, w in want.items() if got.get(t) != w]
print(len(want), \"threads,\", len(bad), \"differ\")
print(\"\\n\".join(bad[:5]))
sys.exit(1 if bad or len(got) != len(want) or sum(1 for w in want.values() if \"running\" in w) != 1 else 0)'
"

# four at a time on a machine with fewer cores: threads wait for a CPU,
# which no CPU event may count, and wall counts as real time (the wait
# read from schedstat) but never past the thread's own real time
if [ $perf_ok = 1 ]; then
    test_expect "-e cpu-clock, four threads at a time: none sampled for more than its CPU clock" "clocks cpu-clock cpu+steal 4"
    test_expect "-e wall, four threads at a time: none sampled for more than its real time" "clocks wall real 4"
fi

test_done

#!/bin/sh
# t0410: the stack sampler under stress -- 4 threads dlopen'ing and
# dlclose'ing a -pg library in a loop, malloc-heavy work, 1 kHz sampling
# with stacks, for STRESS_SECONDS (default 30 s with the default event, a
# third of that with each other event): no deadlock (a watchdog kills a
# run that takes three times longer), no crash, status 0, and a profile
# whose stacks add up.
. "$(dirname "$0")/lib.sh"

SECS=${STRESS_SECONDS:-30}
gcc -O2 -pg -pthread "$PROGS/stackstress.c" -o "$WORK/stress" -ldl &&
gcc -O2 -pg -shared -fPIC "$PROGS/stackplugin.c" -o "$WORK/plugin.so" || exit 1

stress() {
    secs=$2
    rm -f cgprof.data &&
    timeout -s KILL $((secs * 3 + 20)) $CGPROF record -e "$1" ./stress "$secs" "$WORK/plugin.so" >out
    rc=$?
    cat out
    [ $rc -eq 0 ] || { echo "status $rc (137: killed by the watchdog: a deadlock)"; return 1; }
    grep -q "^ok [1-9]" out &&
    python3 "$ROOT/tests/stacks.py" cgprof.data >folded && head -n 3 folded &&
    grep -q "^# samples [1-9]" folded &&
    grep -q ";worker;churn" folded &&
    grep -q ";worker;plugin_work" folded &&
    $CGPROF report -b -p >flat && grep -q "churn" flat
}

test_expect "-e cpu, $SECS s: dlopen/dlclose, malloc, 4 threads, stacks at 1 kHz" "stress cpu $SECS"
for ev in cpu-clock wall itimer; do
    test_expect "-e $ev, $((SECS / 3)) s: the same" "stress $ev $((SECS / 3))"
done
test_done

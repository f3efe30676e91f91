#!/bin/sh
# t0190: soak -- threads created and ended in a loop, fork (children that
# exec too), dlopen/dlclose of a -pg library, the program's own signals
# and timers, malloc-heavy work, sampling at 1 kHz, checkpoints, for
# SOAK_SECONDS (default 8; longer when asked): no deadlock, no crash,
# every exactly countable count exact, every profile read and summed.
. "$(dirname "$0")/lib.sh"

secs=${SOAK_SECONDS:-8}
gcc -O2 -pg -pthread "$PROGS/soak.c" -o "$WORK/soak" -ldl &&
gcc -O2 -pg -shared -fPIC "$PROGS/libsoak.c" -o "$WORK/libsoak.so" || exit 1

test_expect "soak, $secs s: ends by itself, status 0, its own signals all delivered" "
    timeout -s KILL \$(($secs + 45)) $CGPROF record ./soak $secs \$PWD/libsoak.so >out 2>err;
    rc=\$?; cat out err; test \$rc -eq 0 &&
    set -- \$(cat out) && test \"\$2\" -gt 0 && test \"\$8\" -eq \"\$2\" &&
    test \"\${10}\" -gt 0 && test \"\${12}\" -gt 0 && ! grep -v '^cgprof: note' err | grep -q .
"

# counts from soak.c: per round 4 x 1000 tw() and 10 lib_fn(); cf() 100 per
# child, ce() 50 per exec'd image; on_usr1 once per round
test_expect "soak: one profile per process, and the sum's counts are exact" "
    set -- \$(cat out) && r=\$2 f=\$4 e=\$6 &&
    test \$(ls cgprof.data* | grep -vc cgprof-tmp) -eq \$((1 + f + e)) &&
    ! ls | grep -q cgprof-tmp &&
    $CGPROF report -b -q cgprof.data cgprof.data.* 2>rep.err >rep && cat rep.err &&
    awk -f $ROOT/tests/arcs.awk rep | sort -u >arcs &&
    printf '%s\n' \"main ce \$((50 * e))\" \"main cf \$((100 * f))\" \"main lib_fn \$((10 * r))\" \
        \"worker tw \$((4000 * r))\" \"on_usr1 \$r\" | sort >exp &&
    { grep -E '^(main (ce|cf|lib_fn)|worker tw) ' arcs; grep ' on_usr1 ' arcs | sed 's/^[^ ]* //'; } |
        sort >got && diff -u exp got
"
test_done

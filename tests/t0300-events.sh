#!/bin/sh
# t0300: event sources and the whole process -- cpu, itimer, cpu-clock and
# wall; libraries linked and dlopen'ed, libc; programs without -pg; events
# the machine cannot count.
. "$(dirname "$0")/lib.sh"

gcc -O2 "$PROGS/split.c" -o "$WORK/split" &&
gcc -O2 -pthread "$PROGS/sleepy.c" -o "$WORK/sleepy" &&
gcc -O2 -shared -fPIC "$PROGS/libwork.c" -o "$WORK/libwork.so" &&
gcc -O2 -shared -fPIC "$PROGS/plugin.c" -o "$WORK/plugin.so" &&
gcc -O2 "$PROGS/mixlib.c" -L"$WORK" -lwork -Wl,-rpath,'$ORIGIN' -ldl -o "$WORK/mixlib" || exit 1

# fn_shares: "name percent" per function of cgprof's flat profile (stdin)
fn_shares() {
    awk 'NF >= 4 && $1 ~ /^[0-9.]+$/ { print $NF, $1 }'
}
# near A B PTS: |A - B| <= PTS
near() {
    awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
        if (d > p) { print a " is not within " p " points of " b; exit 1 } }'
}
# split_check EVENT N: f60/f30/f10 shares within 3 points of the truth the
# program measured itself.  N sets the work: cpu and itimer take a sample
# per kernel tick (250 Hz here; cpu weights it by the periods it covers),
# so they run three times longer than cpu-clock's true 1 kHz for as many
# independent samples.
split_check() {
    rm -f cgprof.data &&
    $CGPROF record -e "$1" --format cgprof ./split "$2" >truth &&
    $CGPROF report -b -p >flat && fn_shares <flat >got && cat truth got &&
    for f in f60 f30 f10; do
        near "$(awk -v f=$f '$1 == f { print $2 }' got)" \
             "$(awk -v f=$f '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' truth)" 3 ||
            return 1
    done
}

for ev in cpu:3000000 itimer:3000000 cpu-clock:1000000; do
    test_expect "-e ${ev%:*}, no -pg: 60/30/10 split within 3 points of the truth" \
        "split_check ${ev%:*} ${ev#*:}"
done

test_expect "-e cycles without a PMU: one-line error naming the event, status 1" "
    if perf stat -e cycles true 2>&1 | grep -q 'not supported'; then
        $CGPROF record -e cycles ./split 10 2>err; rc=\$?; cat err;
        test \$rc -eq 1 && test \$(wc -l <err) -eq 1 && grep -q \"'cycles'\" err
    else echo 'this machine counts cycles: nothing to check' >&2; fi
"

test_expect "-e list names every event and says what this machine supports" "
    $CGPROF record -e list >list && grep -q '^cpu  *yes' list && grep -q '^wall  *yes' list &&
    grep -q '^page-faults ' list && grep -q '^cycles ' list
"

test_expect "an unknown event is refused" "
    ! $CGPROF record -e no-such-event ./split 10 2>err && grep -q no-such-event err
"

test_expect "-e wall: nap's share of the samples as the program timed it, no EINTR, run time within 15%" "
    s=\$(date +%s%N) && ./sleepy 100 >/dev/null && e=\$(date +%s%N) && base=\$(((e - s) / 1000000)) &&
    rm -f cgprof.data && s=\$(date +%s%N) && $CGPROF record -e wall --format cgprof ./sleepy 100 >out &&
    e=\$(date +%s%N) && prof=\$(((e - s) / 1000000)) && echo \"run \$base ms, profiled \$prof ms\" &&
    awk -v a=\$prof -v b=\$base 'BEGIN { exit !(a <= b * 1.15) }' &&
    $CGPROF report -b -p >flat && cat flat &&
    sleep_share=\$(awk '/nanosleep/ && \$1 ~ /^[0-9.]+\$/ { s += \$1 } END { print s + 0 }' flat) &&
    truth=\$(sed -n 's/^nap \\([0-9.]*\\)%/\\1/p' out) && echo \"program: nap \$truth%\" &&
    near \$sleep_share \$truth 8
"

test_expect "-e page-faults: a counting event, samples weighted by the period" "
    rm -f cgprof.data && $CGPROF record -e page-faults -c 1 --format cgprof ./mixlib ./plugin.so 1 >/dev/null &&
    $CGPROF report -b -p >flat && grep -q 'Each sample counts as 1 page-faults' flat
"

# module_shares: "module percent" from cgprof's flat profile (stdin)
module_shares() {
    awk 'NF >= 4 && $1 ~ /^[0-9.]+$/ { m = "mixlib";
        if (match($0, /\[[^]]+\]$/)) m = substr($0, RSTART + 1, RLENGTH - 2); s[m] += $1 }
        END { for (k in s) print k, s[k] }'
}

if ! command -v perf >/dev/null || ! perf record -q -e cpu-clock -o "$WORK/probe.data" true 2>/dev/null; then
    test_skip "shares across libraries against perf" "no perf, or perf cannot record here"
else
    # cpu-clock, a true 1 kHz like perf's own: as many samples as perf takes
    test_expect "executable, linked and dlopen'ed libraries, libc: within 4 points of perf" "
        rm -f cgprof.data && $CGPROF record -e cpu-clock ./mixlib ./plugin.so 10 >/dev/null &&
        $CGPROF report -b -p | module_shares >ours &&
        perf record -q -e cpu-clock -o p.data ./mixlib ./plugin.so 10 >/dev/null 2>&1 &&
        perf report -i p.data --stdio --sort dso 2>/dev/null |
            awk '\$1 ~ /%\$/ && \$2 !~ /kernel/ { v = \$1; sub(/%/, \"\", v); print \$2, v }' >perfs &&
        total=\$(awk '{ s += \$2 } END { print s }' perfs) && cat ours perfs &&
        for m in mixlib libwork.so plugin.so libc.so.6; do
            near \"\$(awk -v m=\$m '\$1 == m { print \$2 }' ours)\" \
                 \"\$(awk -v m=\$m -v t=\$total '\$1 == m { print \$2 * 100 / t }' perfs)\" 4 || exit 1
        done
    "
fi

test_expect "library functions are named, with their module" "
    rm -f cgprof.data && $CGPROF record --format cgprof ./mixlib ./plugin.so 2 >/dev/null &&
    $CGPROF report -b -p >flat &&
    grep -q ' lib_work \[libwork.so\]\$' flat && grep -q ' plugin_work \[plugin.so\]\$' flat &&
    grep -q ' own_work\$' flat && grep -q 'memmove.* \[libc.so.6\]\$' flat
"

test_expect "time in the vDSO is named; per-thread totals add up" "
    gcc -O2 -pthread $PROGS/vdso.c -o vdso && rm -f cgprof.data && $CGPROF record ./vdso >/dev/null &&
    $CGPROF report -b -p --threads >out && cat out &&
    grep -q 'clock_gettime \[vdso\]\$' out &&
    awk '\$1 ~ /^[0-9]+\$/ && NF >= 4 && \$4 ~ /[.]/ { n++; s += \$2; c += \$4 }
         \$NF == \"[vdso]\" || / \[vdso\]\$/ { } END { exit !(n >= 2) }' out &&
    $CGPROF report --json >j && python3 -c 'import json,sys; d=json.load(open(\"j\")); t=d[\"threads\"];
assert len(t) >= 2, t; s=sum(x[\"sampled_seconds\"] for x in t); c=sum(x[\"cpu_seconds\"] for x in t);
assert abs(s - c) <= 0.2 * c + 0.02, (s, c); assert abs(s - d[\"total_seconds\"]) < 0.01, s'
"

test_expect "a library rebuilt since the profile: the report warns (build-id)" "
    rm -f cgprof.data && $CGPROF record --format cgprof ./mixlib ./plugin.so 1 >/dev/null &&
    cp libwork.so libwork.keep &&
    gcc -O1 -shared -fPIC $PROGS/libwork.c -o libwork.so &&
    $CGPROF report -b -p >/dev/null 2>err; mv libwork.keep libwork.so;
    grep -q 'libwork.so is not the file that was profiled' err
"

test_expect "-pg program with --format gmon: GNU gprof reads the profile" "
    gcc -O2 -pg $PROGS/calls.c -o calls && rm -f gmon.out &&
    $CGPROF record --format gmon ./calls >/dev/null && same_arcs $PROGS/calls.arcs calls gmon.out
"

# Unlike gmon.out, the own format keeps the call of main from libc.
test_expect "-pg program with --format cgprof: exact call counts in the report" "
    gcc -O2 -pg $PROGS/calls.c -o calls && rm -f cgprof.data &&
    $CGPROF record --format cgprof ./calls >/dev/null &&
    $CGPROF report -b -q cgprof.data | awk -f $ROOT/tests/arcs.awk | sort -u >got &&
    (cat $PROGS/calls.arcs; echo '__libc_start_call_main main 1') | sort | diff - got
"

test_expect "libcgprof's own mcount is left out, and its share said; libc's locals named" "
    gcc -O2 -pg $ROOT/examples/demo.c -o demo && rm -f cgprof.data && $CGPROF record ./demo >/dev/null &&
    $CGPROF report -b >out 2>err && cat err &&
    grep -q 'of the samples were in libcgprof.s call counting' err &&
    ! grep -q 'libcgprof.so\]' out &&
    if [ -d /usr/lib/debug/.build-id ]; then grep -q 'msort_with_tmp.* \[libc.so.6\]' out; fi
"

test_expect "a truncated or corrupted cgprof profile: one clear line, status 1" "
    rm -f cgprof.data && $CGPROF record --format cgprof ./split 1000 >/dev/null &&
    size=\$(wc -c <cgprof.data) &&
    head -c \$((size - 5)) cgprof.data >t.data &&
    $CGPROF report t.data 2>err; test \$? -eq 1 && test \$(wc -l <err) -eq 1 && grep -q t.data err &&
    cp cgprof.data v.data && printf '\\011' | dd of=v.data bs=1 seek=8 conv=notrunc 2>/dev/null &&
    $CGPROF report v.data 2>err; test \$? -eq 1 && grep -q 'version 9' err
"
test_done

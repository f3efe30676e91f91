#!/bin/sh
# t0300: event sources and the whole process -- cpu, itimer, cpu-clock and
# wall; libraries linked and dlopen'ed, libc; programs without -pg; events
# the machine cannot count.
. "$(dirname "$0")/lib.sh"

gcc -O2 "$PROGS/split.c" -o "$WORK/split" &&
gcc -O2 -pthread "$PROGS/sleepy.c" -o "$WORK/sleepy" &&
gcc -O2 -shared -fPIC "$PROGS/libwork.c" -o "$WORK/libwork.so" &&
gcc -O2 -shared -fPIC "$PROGS/plugin.c" -o "$WORK/plugin.so" &&
gcc -O2 "$PROGS/mixlib.c" -L"$WORK" -lwork -Wl,-rpath,'$ORIGIN' -ldl -o "$WORK/mixlib" &&
gcc -O2 "$PROGS/touch.c" -o "$WORK/touch" &&
gcc -O2 "$PROGS/faults.c" -o "$WORK/faults" &&
gcc -O2 "$PROGS/sort.c" -o "$WORK/sort" || exit 1

# fn_shares: "name percent" per function of cgprof's flat profile (stdin)
fn_shares() {
    awk 'NF >= 4 && $1 ~ /^[0-9.]+$/ { print $NF, $1 }'
}
# near A B PTS: |A - B| <= PTS
near() {
    awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
        if (d > p) { print a " is not within " p " points of " b; exit 1 } }'
}
# samples_of JSON: "samples cpu_seconds" summed over the profile's threads
samples_of() {
    python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["threads"];
print(sum(x["samples"] for x in t), sum(x["cpu_seconds"] for x in t))' "$1"
}
# near_share GOT TRUE N: a share measured by N independent samples is
# within 4 standard deviations (binomial, sqrt(p(1-p)/N)) of the true
# share, plus half a point for the rounding of both and the program's own
# clock: a wrong share fails, chance never does (p < 1e-4 per check).
near_share() {
    awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { p = b / 100; if (p <= 0 || p >= 1 || n < 1) exit 1;
        tol = 400 * sqrt(p * (1 - p) / n) + 0.5; d = a - b; if (d < 0) d = -d;
        printf "%s vs %s: %.2f points apart, tolerance %.2f (%d samples)\n", a, b, d, tol, n;
        exit !(d <= tol) }'
}
# split_check EVENT N: f60/f30/f10 shares near the truth the program
# measured itself.  N sets the work: cpu and itimer take a sample per
# kernel tick (cpu weights it by the periods it covers), so they run three
# times longer than cpu-clock's true 1 kHz for as many independent
# samples.  Independent samples: cpu-clock's own; itimer's, at most one
# per tick of the process's CPU time (the tick rate it shows, samples per
# CPU second, is measured first); cpu's, half its ticks: it credits all the
# periods a late expiry missed to the one pc it interrupts, and on a loaded
# machine it was seen 4.2 binomial deviations off when counted per tick
# (f10 4.6% for 9.8%; docs/events.md).
split_check() {
    rm -f cgprof.data &&
    # (itimer and cpu tick with the kernel: work drawn at random per call,
    # or beside busy loops itimer once read f10 as 3.2% for 9.9%)
    case $1 in itimer | cpu) jit="0 jitter" ;; *) jit= ;; esac &&
    $CGPROF record -e "$1" --format cgprof ./split "$2" $jit >truth &&
    $CGPROF report -b -p >flat && fn_shares <flat >got && cat truth got &&
    $CGPROF report --json >j && set -- "$1" $(samples_of j) && echo "$2 samples, $3 s of CPU" &&
    case $1 in
    itimer) awk -v s=$2 -v c=$3 'BEGIN { printf "%d\n", s / c + 0.5 }' >tick_hz && n=$2 ;;
    cpu) n=$(awk -v s=$2 -v c=$3 -v t="$(cat tick_hz 2>/dev/null || echo 100)" 'BEGIN { m = c * t; printf "%d", (s < m ? s : m) / 2 }') ;;
    *) n=$2 ;;
    esac &&
    for f in f60 f30 f10; do
        near_share "$(awk -v f=$f '$1 == f { print $2 }' got)" \
             "$(awk -v f=$f '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' truth)" "$n" ||
            return 1
    done
}

for ev in itimer:3000000 cpu:3000000 cpu-clock:1000000; do
    test_expect "-e ${ev%:*}, no -pg: 60/30/10 split within 4 sigma of the truth" \
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

# sleepy computes 10 ms of CPU and sleeps 10 ms, 100 times, and measures
# both: its CPU time in compute and its time blocked in nanosleep (less any
# wait for a CPU after waking, which wall counts in neither).  No EINTR
# (sleepy exits 3), and the process's CPU time, the sampler thread's
# included, within 15% of an unprofiled run's.
case "-e wall: " in *"${TEST_ONLY:-}"*)
    (cd "$WORK" && ./sleepy 100 >wall.base && rm -f cgprof.data &&
        $CGPROF record -e wall --format cgprof ./sleepy 100 >wall.truth && $CGPROF report -b -p >wall.flat)
    echo $? >"$WORK/wall.rc" ;;
esac
test_expect "-e wall: no EINTR, CPU time within 15% of an unprofiled run" "
    cat wall.base wall.truth wall.flat && test \$(cat wall.rc) -eq 0 &&
    awk 'NR == FNR { base = \$6; next } { printf \"CPU %.3f s profiled, %.3f s not\\n\", \$6, base;
        exit !(\$6 <= 1.15 * base + 0.02) }' wall.base wall.truth
"
# The blocked share is estimated from looks every 10 ms on average:
# tolerance 4 binomial standard deviations for that many looks, plus a
# point.  On a machine so loaded that sleepy waited for a CPU more than 5%
# of its run, the looks are no longer independent of what it does (blocked
# time came out up to half low; docs/events.md): the check is skipped, saying
# so, rather than failed at random.
waited=$(awk '{ printf "%.1f", 100 * $8 / $10 }' "$WORK/wall.truth" 2>/dev/null)
if [ -z "$waited" ] || awk -v w="$waited" 'BEGIN { exit !(w > 5) }'; then
    test_skip "-e wall: the blocked share as measured" "sleepy waited ${waited:-?}% of its run for a CPU"
else
    test_expect "-e wall: the blocked share as measured" "
        cat wall.truth wall.flat &&
        sleep_share=\$(awk '/nanosleep/ && \$1 ~ /^[0-9.]+\$/ { s += \$1 } END { print s + 0 }' wall.flat) &&
        awk -v got=\$sleep_share '{ c = \$2; b = \$4; p = b / (b + c); looks = (b + c) / 0.010;
            tol = 400 * sqrt(p * (1 - p) / looks) + 1; d = got - 100 * p; if (d < 0) d = -d;
            printf \"asleep %.2f%% sampled, %.2f%% measured, tolerance %.2f\\n\", got, 100 * p, tol;
            exit !(d <= tol) }' wall.truth
    "
fi

# wall on a thread that only computes, beside two busy loops on this
# 2-CPU machine: its time is its real time -- its CPU time, its waits for
# a CPU, and on a virtual machine the time the hypervisor took the CPU
# away (steal), which the kernel's timer misses as one late sample (the
# periods it came late by are charged there, at the pc the thread stood
# at).  Two busy loops here make 5-40% of such a thread's real time
# steal; before, that time was missing (2.19 s of a 3 s run).  3 runs,
# each within 3% and 10 ms of the program's own measure.
test_expect "-e wall on a busy machine: a computing thread's time is its real time (steal and waits included), 3 runs" "
    sh -c 'while :; do :; done' &
    b1=\$!
    sh -c 'while :; do :; done' &
    b2=\$!
    for run in 1 2 3; do
        rm -f ws.data && $CGPROF record -e wall -o ws.data ./split 300000 >ws.truth 2>ws.err &&
            $CGPROF report --json ws.data >ws.json 2>/dev/null || { kill \$b1 \$b2; return 1; }
        python3 -c 'import json,sys; t=open(sys.argv[1]).read().split(); d=json.load(open(sys.argv[2]))
real=float(t[t.index(\"real\") + 1]); steal=float(t[t.index(\"steal\") + 1]); w=d[\"total_seconds\"]
print(\"wall %.3f s, real %.3f s, of it %.3f s stolen\" % (w, real, steal))
sys.exit(not (abs(w - real) <= 0.03 * real + 0.010))' ws.truth ws.json || { kill \$b1 \$b2; return 1; }
    done; kill \$b1 \$b2
"

# touch.c takes exactly 8,000 page faults in touch_pages: at one sample
# per 16, 500 samples of 16 events each (give or take a sample at either
# end: the period counts the program's other faults too).  The profile
# holds events, one "sample" each.
test_expect "-e page-faults -c 16: a counting event, samples weighted by the period" "
    rm -f cgprof.data && $CGPROF record -e page-faults -c 16 --format cgprof ./touch 8000 >/dev/null &&
    $CGPROF report -b -p >flat 2>err && cat flat err && grep -q 'Each sample counts as 1 page-faults' flat &&
    lost=\$(sed -n 's/.*warning: \([0-9]*\) samples were lost.*/\1/p' err) &&
    awk -v lost=\${lost:-0} '\$NF == \"touch_pages\" { v = \$3 } END {
        printf \"touch_pages: %s page faults of 8000, %d samples lost (said)\\n\", v, lost;
        exit !(v + 16 * lost >= 8000 - 32 && v <= 8000 + 16 && v % 16 == 0) }' flat
"

# Without -c a counting event is sampled at the rate (-F), each sample
# weighted by the events its thread counted since its last one
# (docs/events.md, "Counting events at a rate"): every event counted
# wherever the samples fall -- at -c 1 (the old default) this 300,000-
# fault run lost most of its samples.  faults.c counts each function's
# faults itself and draws which function takes each chunk (or fault) at
# random, 2 to 1, so a share varies as the samples' draws do: the burst
# run's 1,700 or so samples at the default rate put its deviation near a
# point, the slow run's 1,000 at 1.5 points.  (At -F 4000, 8 KB of stack
# copied with each sample, the kernel throttled the event now and then on
# this VM, and it counts nothing while throttled: said, but not counted.)  fa's and fb's total within 2% below
# (the kernel throttles an event that overflows too often in a tick, and
# counts nothing until the next: the event's own final count came out up
# to 1.3% short at -F 4000, said in one line) and 0.5% above (faults
# elsewhere charged to their samples).
# fault_shares TOL: out (the program's counts) against flat (the report)
fault_shares() {
    awk -v tol="$1" 'FNR == NR { a = $2; b = $4; next }
        $NF == "fa" { fa = $3 } $NF == "fb" { fb = $3 }
        END { t = a + b; got = fa + fb
            printf "program: fa %d fb %d; profile: fa %d fb %d\n", a, b, fa, fb
            if (!t || !got) exit 1
            d = fa / got * 100 - a / t * 100
            exit !(got >= t * 0.98 && got <= t * 1.005 + 50 && d < tol && -d < tol) }' out flat
}
test_expect "-e page-faults without -c: 1,000,000 faults in bursts, every one counted, each function's share within 5 points" "
    rm -f cgprof.data && $CGPROF record -e page-faults ./faults 1000000 >out 2>err &&
    $CGPROF report -b -p >flat 2>>err && cat out err && fault_shares 5 &&
    merged=\$(sed -n 's/^cgprof: \\([0-9]*\\) samples could not be recorded where.*/\\1/p' err) &&
    echo \"records the rings could not hold: \${merged:-0} (their events in later samples)\" &&
    test \${merged:-0} -lt 20000
"
# the samples' periods follow the thread's rate of events (each look of
# the sampler's): at 1 Hz, after its first look, the slow run's 3,000
# faults take no more than a sample or so; those after a thread's last
# sample are charged to it when the thread ends or the profile is written
test_expect "-e page-faults -F 1: the events after a thread's last sample are counted too" "
    rm -f cgprof.data && $CGPROF record -e page-faults -F 1 ./faults 3000 slow >out 2>err &&
    $CGPROF report -b -p >flat 2>>err && cat out err && fault_shares 101
"
test_expect "-e page-faults without -c: 3,000 faults 200 us apart, every one counted, each function's share within 6 points" "
    rm -f cgprof.data && $CGPROF record -e page-faults ./faults 3000 slow >out 2>err &&
    $CGPROF report -b -p >flat 2>>err && cat out err && fault_shares 6
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
    # cpu-clock, a true 1 kHz like perf's own: as many samples as perf
    # takes.  Each is held to the program's own measure of the same run
    # (mixlib times its parts on its thread's CPU clock): the modules' work
    # differs in kind (memmove against arithmetic), and beside a loaded
    # full check their shares moved between two runs by 6 points, so one
    # run's shares cannot stand for another's.
    # truth_near OURS TRUTH: each module's share within 4 points
    truth_near() {
        for m in mixlib libwork.so plugin.so libc.so.6; do
            near "$(awk -v m=$m '$1 == m { print $2 }' "$1")" \
                "$(awk -v m=$m '{ for (i = 2; i < NF; i += 2) if ($i == m) print $(i + 1) }' "$2")" 4 || return 1
        done
    }
    test_expect "executable, linked and dlopen'ed libraries, libc: within 4 points of the program's own measure, and so is perf" "
        rm -f cgprof.data && $CGPROF record -e cpu-clock ./mixlib ./plugin.so 10 >t.ours &&
        $CGPROF report -b -p | module_shares >ours &&
        perf record -q -e cpu-clock -o p.data ./mixlib ./plugin.so 10 >t.perf 2>/dev/null &&
        perf report -i p.data --stdio --sort dso 2>/dev/null |
            awk '\$1 ~ /%\$/ && \$2 !~ /kernel/ { v = \$1; sub(/%/, \"\", v); print \$2, v }' >perfs &&
        total=\$(awk '{ s += \$2 } END { print s }' perfs) &&
        awk -v t=\$total '{ print \$1, \$2 * 100 / t }' perfs >perfn &&
        echo cgprof: && cat ours && grep shares t.ours && echo perf: && cat perfn && grep shares t.perf &&
        truth_near ours t.ours && truth_near perfn t.perf
    "
fi

# memmove's body is also memcpy's in glibc (__memmove_avx_unaligned_erms and
# __memcpy_avx_unaligned_erms start at one address): either name is right.
test_expect "library functions are named, with their module" "
    rm -f cgprof.data && $CGPROF record -e cpu-clock --format cgprof ./mixlib ./plugin.so 2 >/dev/null &&
    $CGPROF report -b -p >flat && {
        grep -q ' lib_work \[libwork.so\]\$' flat && grep -q ' plugin_work \[plugin.so\]\$' flat &&
        grep -q ' own_work\$' flat && grep -Eq '(memmove|memcpy).* \[libc.so.6\]\$' flat || { cat flat; false; }
    }
"

# dlopen("../run/plugin.so") and an rpath of "." name a library relative to a
# directory the program may leave: the profile names the file itself, so a
# report run elsewhere -- beside another plugin.so -- still finds the one
# that was profiled.  (Failed before: the report named lib_work, the decoy's
# function, as plugin.so's.)
test_expect "libraries loaded by a relative path are recorded absolute" "
    mkdir -p rel/run rel/elsewhere && cp mixlib plugin.so rel/run/ &&
    gcc -O2 -shared -fPIC $PROGS/libwork.c -o rel/run/libwork.so &&
    gcc -O2 $PROGS/mixlib.c -Lrel/run -lwork -Wl,-rpath,. -ldl -o rel/run/mixlib &&
    cp rel/run/libwork.so rel/elsewhere/plugin.so && cp plugin.so rel/elsewhere/libwork.so &&
    (cd rel/run && rm -f cgprof.data && $CGPROF record -e cpu-clock ./mixlib ../run/plugin.so 2 >/dev/null) &&
    cd rel/elsewhere && $CGPROF report -b -p ../run/cgprof.data >flat 2>err && cat err &&
    grep -q ' plugin_work \[plugin.so\]\$' flat && grep -q ' lib_work \[libwork.so\]\$' flat &&
    ! grep -Eq 'lib_work \[plugin.so|plugin_work \[libwork.so' flat &&
    $CGPROF report --json ../run/cgprof.data >j &&
    python3 -c 'import json; d=json.load(open(\"j\")); m=[n.get(\"module\", \"[cut]\") for n in d[\"stacks\"][\"nodes\"]];
assert m and all(x.startswith(\"/\") or x.startswith(\"[\") for x in m), sorted(set(m))'
"

# dlopen(A), work, dlclose(A), dlopen(B): B is mapped where A was.  Every
# sample, stack frame and call is named by the module mapped at its pc when
# it was taken: A's 3/4 of the time and 3 calls stay A's.  (Failed before:
# work_b [libb.so] 98.5% with 8 calls, work_a absent.)
gcc -O2 -pg -shared -fPIC -DWORK=work_a "$PROGS/reuselib.c" -o "$WORK/liba.so" &&
gcc -O2 -pg -shared -fPIC -DWORK=work_b "$PROGS/reuselib.c" -o "$WORK/libb.so" &&
gcc -O2 -pg "$PROGS/reuse.c" -ldl -o "$WORK/reuse" || exit 1
if (cd "$WORK" && LD_PRELOAD=$LIBSO CGPROF_FREQ=0 ./reuse ./liba.so ./libb.so 0) | grep -qx same; then
    test_expect "a module mapped where a closed one was: samples, calls and stacks stay each one's" "
        mkdir -p reuse.d && cd reuse.d && rm -f cgprof.data &&
        $CGPROF record -e cpu-clock ../reuse ../liba.so ../libb.so 2 >out && cat out &&
        $CGPROF report -b -q | awk -f $ROOT/tests/arcs.awk | sort -u >arcs && cat arcs &&
        grep -qx 'main work_a 3' arcs && grep -qx 'main work_b 5' arcs &&
        $CGPROF report -b -p >flat && cat flat &&
        a=\$(awk 'NF > 2 && \$(NF - 1) == \"work_a\" { print \$1 }' flat) &&
        b=\$(awk 'NF > 2 && \$(NF - 1) == \"work_b\" { print \$1 }' flat) &&
        near \"\$a\" 75 10 && near \"\$b\" 25 10 &&
        grep -q ' work_a \\[liba.so\\]\$' flat && grep -q ' work_b \\[libb.so\\]\$' flat &&
        $CGPROF export -f folded -o - >folded &&
        awk '/;main;work_a \\[liba.so\\] [0-9]+\$/ { a += \$NF } /;main;work_b \\[libb.so\\] [0-9]+\$/ { b += \$NF }
             END { print a, b; exit !(a > 2 * b && b > 0) }' folded
    "
else
    test_skip "a module mapped where a closed one was" "the loader put libb.so elsewhere here"
fi

test_expect "time in the vDSO is named; per-thread totals add up" "
    gcc -O2 -pthread $PROGS/vdso.c -o vdso && rm -f cgprof.data && $CGPROF record ./vdso >/dev/null &&
    $CGPROF report -b -p --threads >out && cat out &&
    grep -q 'clock_gettime \[vdso\]\$' out &&
    awk '\$1 ~ /^[0-9]+\$/ && \$2 ~ /^[0-9]+\$/ && NF >= 4 { n++; smp += \$2; s += \$3; c += \$4;
             x = \$3 - \$4; if (x < 0) x = -x; if (x > 0.1 * \$4 + 0.015) far++ }
         \$1 ~ /[.]/ && NF >= 4 { total = \$2 }
         END { printf \"%d threads, %d samples, %.2f s sampled, %.2f s CPU, flat total %.2f s\\n\", n, smp, s, c, total;
             d = smp / 1000 - total; if (d < 0) d = -d; e = s - c; if (e < 0) e = -e;
             exit !(n >= 2 && d <= 0.0051 && e <= 0.2 * c + 0.02 && !far) }' out &&
    $CGPROF report --json >j && python3 -c 'import json,sys; d=json.load(open(\"j\")); t=d[\"threads\"];
assert len(t) >= 2, t; s=sum(x[\"sampled_seconds\"] for x in t); c=sum(x[\"cpu_seconds\"] for x in t);
assert abs(s - c) <= 0.2 * c + 0.02, (s, c); assert abs(s - d[\"total_seconds\"]) < 0.01, s'
"

# libwork.so built with -pg in a directory of its own: the calls into it
# are counted exactly, so the profile always points into it (sampled time
# alone can miss a 30 ms library: its rounds beat with the kernel's tick).
test_expect "a library rebuilt since the profile: the report warns (build-id)" "
    mkdir -p bid && cp mixlib plugin.so bid/ && cd bid &&
    gcc -O2 -pg -shared -fPIC $PROGS/libwork.c -o libwork.so &&
    rm -f cgprof.data && $CGPROF record --format cgprof ./mixlib ./plugin.so 1 >/dev/null &&
    $CGPROF report -b -q >same 2>err.same && cat err.same &&
    grep -q '40/40 *main' same && ! grep -q 'not the file that was profiled' err.same &&
    gcc -O1 -pg -shared -fPIC $PROGS/libwork.c -o libwork.so &&
    $CGPROF report -b -q >/dev/null 2>err; cat err &&
    test \$(grep -c 'libwork.so is not the file that was profiled' err) -eq 1
"

test_expect "-pg program with --format gmon: GNU gprof reads the profile" "
    gcc -O2 -pg $PROGS/calls.c -o calls && rm -f gmon.out &&
    $CGPROF record --format gmon ./calls >/dev/null && same_arcs $PROGS/calls.arcs calls gmon.out
"

# Unlike gmon.out, the own format keeps the call of main from libc.
# with main's library call, printf (docs/libcalls.md); gcrt1's __cxa_atexit
# call has no function of its own to come from
test_expect "-pg program with --format cgprof: exact call counts in the report" "
    gcc -O2 -pg $PROGS/calls.c -o calls && rm -f cgprof.data &&
    $CGPROF record --format cgprof ./calls >/dev/null &&
    $CGPROF report -b -q cgprof.data | awk -f $ROOT/tests/arcs.awk | grep -v ' __cxa_atexit ' |
        sort -u >got &&
    (cat $PROGS/calls.arcs; echo '__libc_start_call_main main 1'; echo 'main printf 1') |
        sort | diff - got
"

test_expect "libcgprof's own mcount is left out, and its share said" "
    gcc -O2 -pg $ROOT/examples/demo.c -o demo && rm -f cgprof.data && $CGPROF record ./demo >/dev/null &&
    $CGPROF report -b >out 2>err && cat err &&
    grep -q 'of the samples were in libcgprof.s call counting' err &&
    ! grep -q 'libcgprof.so\]' out
"

# sort.c spends ~70% of its time in msort_with_tmp, a local function of
# libc that only libc6-dbg's symbols name (scripts/deps.sh installs them).
test_expect "libc's local functions named from its debug symbols" "
    { test -d /usr/lib/debug/.build-id || { echo 'libc6-dbg is not installed: run scripts/deps.sh'; false; }; } &&
    rm -f cgprof.data && $CGPROF record ./sort 3 >/dev/null && $CGPROF report -b -p >out && cat out &&
    grep -q '^ *[1-9][0-9]*[.][0-9]* .* msort_with_tmp[.a-z0-9]* \[libc.so.6\]\$' out
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

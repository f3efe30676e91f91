#!/bin/sh
# t0305: the default event is the most accurate the machine allows
# (cpu-clock where perf events are permitted, else cpu with a note), it
# samples every thread in proportion to its CPU time however short the
# thread (a random first period), a regular split comes out right run
# after run, the runtime's own per-thread work is not the program's, and
# CPU time that could not be sampled is reported, never silent.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg "$PROGS/shortthr.c" -o "$WORK/shortthr" -lpthread &&
gcc -O2 "$PROGS/split.c" -o "$WORK/split" &&
gcc -O2 "$PROGS/systime.c" -o "$WORK/systime" || exit 1

if perf stat -e cpu-clock true >/dev/null 2>&1; then
    default=cpu-clock
else
    default=cpu
fi

# the machine's own word (perf stat) decides which default is right
test_expect "the default event is $default, and the profile says so" "
    rm -f cgprof.data && $CGPROF record ./split 100000 >/dev/null 2>err && cat err &&
    $CGPROF report --json >j && grep '\"event\"' j &&
    grep -q '\"event\": \"$default\"' j &&
    if test $default = cpu; then grep -q 'perf events are not permitted' err; else ! test -s err; fi
"

# share_of FLAT: burn_thread's percent of burn_thread + burn_main
share_of() {
    awk '$NF == "burn_thread" { t = $1 } $NF == "burn_main" { m = $1 }
        END { if (t + m > 0) printf "%.1f\n", 100 * t / (t + m); else print "none" }' "$1"
}

# 2,000 threads of 0.2 ms each, one after another, then as much CPU in
# main: each thread is shorter than the 1 ms period.  The program's own
# clock is the truth; 400 samples a side put 8 points at 4.5 deviations.
short_threads() {
    for run in ${2:-1 2 3}; do
        rm -f s.data && ${4:+taskset -c 0} $CGPROF record ${3:+-e $3} -o s.data ./shortthr 2000 200 $1 >truth 2>err &&
            $CGPROF report -b -p shortthr s.data >flat 2>rerr || return 1
        # (-e wall: by real time, which a busy machine makes longer than
        # CPU time; cpu-clock: by CPU time, and up to the time a VM's
        # hypervisor held the CPU, which its clock counts: the truth is the
        # range between the shares without and with each side's steal)
        got=$(share_of flat) &&
            want=$(awk -v w="${3:-}" '{ if (w == "wall") { print $6; exit }
                t = $12; m = $13; st = $9; sm = $10
                lo = 100 * t / (t + m + sm); hi = 100 * (t + st) / (t + st + m)
                printf "%.1f", 100 * t / (t + m); if (hi - lo >= 0.1) printf "..%.1f..%.1f", lo, hi; print "" }' truth) &&
            echo "run $run: burn_thread $got% of the two, the program measured $want%" &&
            cat err rerr && near "$got" "$want" 8 || { cat flat; return 1; }
    done
}
# near A B PTS: |A - B| <= PTS; B may be a range "MID..LO..HI": A within
# PTS of [LO, HI]
near() {
    awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { n = split(b, r, "[.][.]"); lo = r[1]; hi = r[1]
        if (n == 3) { lo = r[2]; hi = r[3] }
        d = a < lo ? lo - a : a > hi ? a - hi : 0
        if (a == "none" || d > p) { print a " is not within " p " points of " b; exit 1 } }'
}
if test $default = cpu-clock; then
    test_expect "2,000 threads of 0.2 ms: their share within 8 points of the truth, 3 runs" \
        "short_threads plain"
    # the threads' own set-up (opening the event, ending its first period)
    # is the runtime's work: reported apart, none of it in the profile
    test_expect "the runtime's work in each thread is not the program's time; it is reported" "
        ! grep -E '(ioctl|fcntl|perf_event_open|syscall|libcgprof|cg_sampler|on_sample_sig)' flat &&
        grep -q \"starting each thread's sampling\" rerr && ! grep -q 'could not be sampled' rerr
    "
    # the runtime's own start-up (its constructor hooking library calls:
    # dlopen, dlsym, _dl_addr, getenv, pthread_atfork) and a thread's first
    # arc table (mmap) are not the program's time: before, every run at
    # 20 kHz had stacks call_init -> dlopen/_dl_addr/getenv and root mmap
    # frames; spin calls none of them itself (its threads' stacks are
    # libc's pthread_create's mmap, under the program's call)
    test_expect "the runtime's start-up and first arc tables are not the program's time (stacks, 6 runs at 20 kHz)" "
        gcc -O2 -pg '$PROGS/spin.c' -o spinx -lpthread &&
        for run in 1 2 3 4 5 6; do
            case \$run in 1 | 2 | 3) args='one 40' ;; *) args='threads 4 20' ;; esac
            $CGPROF record -F 20000 -o own.data ./spinx \$args >/dev/null 2>&1 &&
                $CGPROF_REAL export -f folded -o own.folded own.data 2>/dev/null || return 1
            if grep -E '(^|;)(dlopen[@ ]|dlsym[@ ]|_dl_addr |getenv |__register_atfork |_dl_find_object_update |cg_)' own.folded ||
                grep -E '^mmap ' own.folded; then
                echo \"run \$run: the runtime's own work in the stacks\"
                return 1
            fi
        done
    "
    # with our signal blocked, the first period ends when the sampler sees
    # its sample: the samples in between are dropped
    test_expect "the same with threads that block every signal" "short_threads block 1"
    test_expect "the same under -e wall (time waiting for a CPU too: against real time)" \
        "short_threads plain 1 wall"
    # ... and on one CPU shared with a busy loop (taskset), where each of
    # them waits for it about as long as it runs: a thread that ends
    # between two looks of the sampler reads its own waiting time as it
    # ends, charged where it was sampled (else at its start routine);
    # before, the threads' waiting was lost and their share came out 26-33%
    # against 45-50% by real time
    if command -v taskset >/dev/null 2>&1; then
        test_expect "-e wall, on one CPU beside a busy loop: the short threads' waiting is counted (against real time)" "
            taskset -c 0 sh -c 'while :; do :; done' & busy=\$!
            short_threads plain 1 wall pin; rc=\$?; kill \$busy; test \$rc -eq 0
        "
    fi
else
    test_skip "2,000 threads of 0.2 ms: their share within 8 points of the truth" \
        "perf events not permitted here"
    test_skip "the runtime's work in each thread is not the program's time" \
        "perf events not permitted here"
fi

# the cpu event's timers expire on the kernel's tick (4 ms at 250 Hz): a
# 0.2 ms thread is rarely there when one does.  The report says how much
# CPU time went unsampled, measured against the threads' own CPU clocks.
test_expect "-e cpu on short threads: the unsampled CPU time is reported, with its share" "
    rm -f c.data && $CGPROF record -e cpu -o c.data ./shortthr 1000 200 >truth &&
    $CGPROF report -b -p shortthr c.data >flat 2>err; cat err &&
    grep -E 'warning: c.data: the threads used [0-9.]+ s of CPU, of which [0-9.]+ s \\(([2-9][0-9])%\\) could not be sampled at 1000 Hz' err
"

# A regular 60/30/10 split (a plain loop, no -pg), 10 runs: every share
# within 3 points every time.  -F 10000 over 0.7 s: some 7,000 samples,
# so 3 points are 4 deviations of the 60% share -- chance does not fail
# it, sampling in step with the program does (cpu on a 250 Hz tick).
split_runs() {
    if test $default = cpu; then
        echo "perf events not permitted: cpu samples on the kernel's tick" && return 0
    fi
    for run in 1 2 3 4 5 6 7 8 9 10; do
        rm -f p.data && $CGPROF record -F 10000 -o p.data ./split 800000 >truth 2>err &&
            $CGPROF report -b -p p.data >flat 2>rerr || return 1
        line="run $run:"
        for f in f60 f30 f10; do
            got=$(awk -v f=$f '$NF == f { print $1 }' flat)
            want=$(awk -v f=$f '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' truth)
            line="$line $f $got/$want"
            near "$got" "$want" 3 || { echo "$line"; cat flat err rerr; return 1; }
        done
        echo "$line"
    done
}
test_expect "a 60/30/10 split, 10 runs of 10 within 3 points of the truth" split_runs

# samples at the rate claimed: the threads' samples are their CPU time x
# the rate (the kernel's own clocks, less what the runtime did on them and
# what they ran before their sampling began, which the threads' CPU
# seconds leave out): never more than 1% and 3 samples over; under by no
# more than the time the event's own count shows between samples beyond
# their periods (RUNTIME's late field, "late_seconds"), less 1% and 3
# samples -- at 1 kHz too: beside a full check's sanitizer builds a 1 kHz
# run came out 287 samples for 294.6 ms of CPU with 11.1 ms late.  The kernel's 10 kHz
# cpu-clock timer in these VMs fires late now and then and no sample
# stands for the time it skipped: 97.6-98.7% of the rate in 8 runs each of
# b9542c0's runtime and this one on an idle machine, 95.5-97% on one busy
# with other builds (issue 22 item 12: a fixed 3% failed there), where
# late_seconds was 5-6% of the CPU time (the event's clock runs while the
# thread's CPU clock does not count steal and interrupt time, so it can
# exceed the shortfall).  report leaves that time out of its check of
# unsampled time.  Over: the bound is the CPU time and the program's
# stolen time (split's "steal": real time that was neither its CPU time
# nor a wait for a CPU -- a virtual machine's hypervisor holding the CPU),
# which runs the event's clock: a tick due meanwhile fires as the CPU
# comes back, so part of it is sampled, as perf's are.  Beside two busy
# loops on these 2-CPU VMs 0-40% of split's real time was stolen, and a
# deep thread (handler_rate, below) came out 106-111.5% of its CPU time
# with 11-24% of it stolen; CI, on a shared host, ran 102.4-104.8%.
rate_check() {
    rm -f r.data && $CGPROF record -F "$1" -o r.data ./split 300000 >r.truth &&
        $CGPROF report --json r.data >j 2>err && cat err &&
        python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); hz=float(sys.argv[2])
r=j["runtime"]; t=j["threads"]; w=open("r.truth").read().split(); steal=float(w[w.index("steal") + 1])
s=sum(x["samples"] for x in t)
c=sum(x["cpu_seconds"] for x in t) - r["write_cpu_seconds"] - r["start_cpu_seconds"]
late=r["late_seconds"]
print("%d samples for %.4f s of CPU at %d Hz, %.4f s of it between samples beyond their periods, %.4f s stolen: %.2f%% of the rate" % (s, c, hz, r["late_seconds"], steal, 100 * s / (c * hz)))
sys.exit(not (s <= 1.01 * (c + steal) * hz + 3 and s >= 0.99 * (c - late) * hz - 3 and 0 <= late < 0.1 * c + steal))' j "$1"
}
if test $default = cpu-clock; then
    test_expect "cpu-clock samples at the rate asked: 1 kHz" "rate_check 1000"
    test_expect "cpu-clock samples at the rate asked: 10 kHz (never over; under only by the time the event skipped)" \
        "rate_check 10000"
    test_expect "report: no unsampled time at 10 kHz (a 0.1 s program; the delays are not missing samples)" "
        rm -f r.data && \$CGPROF record -F 10000 -o r.data ./split 100000 >/dev/null &&
        \$CGPROF report -p r.data >/dev/null 2>err; cat err; ! grep -q 'could not be sampled' err"
    # -F 100000: each sample is a timer interrupt, 30-50 us of CPU on these
    # VMs, more than the 10 us period -- the program barely ran (a 0.25 s
    # run of split took 10 minutes, 7.5 of them in the kernel).  The
    # runtime measures the interrupt's cost and lowers the rate to what
    # takes at most half the CPU, saying so; where it is cheap (bare metal)
    # 100 kHz stays.  Checked: the run ends (CPU of the whole run, record
    # and program, against the program's own: at the 10 kHz floor a loaded
    # VM's interrupts still cost 35-45 us, the run several times the
    # program's; without the cap, minutes), the profile's rate is the one
    # said, and the machine delivers it -- samples for at least 80% of the
    # thread's CPU time at that rate (a rate the interrupts cannot keep up
    # with skips periods).  The one line is the rate's: a line saying that
    # a few samples were lost besides (a full ring, on a loaded machine:
    # 5 of 20,573 at 40 kHz on a VM whose interrupts cost 6 us) may follow.
    test_expect "-F 100000 where a sample costs more than its period: the rate comes down, said in one line" "
        cpu_of() { python3 -c 'import resource,subprocess,sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN); print(\"%.3f\" % (r.ru_utime + r.ru_stime))' \"\$@\"; } &&
        c0=\$(cpu_of ./split 200000) &&
        rm -f hi.data && c1=\$(cpu_of timeout -k 5 300 \$CGPROF record -F 100000 -o hi.data ./split 200000 2>err) &&
        cat err && echo \"CPU: \$c0 s unprofiled, \$c1 s at -F 100000\" &&
        awk -v a=\$c0 -v b=\$c1 'BEGIN { exit !(b <= 12 * a + 2) }' &&
        \$CGPROF report --json hi.data >hi.json 2>/dev/null &&
        rate=\$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
r=j[\"runtime\"]; t=j[\"threads\"]; hz=j[\"rate\"]
s=sum(x[\"samples\"] for x in t)
c=sum(x[\"cpu_seconds\"] for x in t) - r[\"write_cpu_seconds\"] - r[\"start_cpu_seconds\"]
print(\"%d samples for %.3f s of CPU at %d Hz: %.1f%% of the rate\" % (s, c, hz, 100 * s / (c * hz)), file=sys.stderr)
print(int(hz) if s >= 0.8 * c * hz else 0)' hi.json) &&
        echo \"profile's rate \$rate\" && test \$rate -gt 0 &&
        if grep -q 'timer interrupt costs' err; then
            test \$(grep -v 'samples could not be recorded' err | grep -c .) -eq 1 &&
            grep -q \"^cgprof: -F 100000 (CGPROF_FREQ): each cpu-clock sample's timer interrupt costs [0-9]* us of CPU here, a whole sample about twice that: sampling at \$rate Hz\" err &&
            test \$rate -ge 10000 && test \$rate -lt 100000
        else
            test \$rate -eq 100000
        fi"
fi
# CGPROF_STACK_SYNC=2 where the kernel's time may be sampled (root): the
# user-mode samples come from a handler event, the kernel's from a ring
# event with a period of its own (15/16 of P), its samples kept one per P
# of their periods.  With the same period the two events' ticks locked
# together and the kernel event sampled the thread delivering the handler
# event's signal: 100-110% of CPU x rate at 1 kHz, 3 of 8 runs over 104%.
# Now 101.3-102.1% in 10 runs (ticks due while the handler event's
# interrupt holds interrupts off still come in the kernel), with a rare run
# higher (106% once in some 25, in a full check): over 5 runs of 1.5 s
# together no more than 4% over (a full check on a quiet machine at
# e5d1b9f: 105.3, 102.1, 100.5, 105.2, 103.4%, together 103.3%; the lock
# ran 105-110%), no run more than 8% over, and the shares right.
# handler_rate SYNC [DEPTH [OVER]]: with CGPROF_STACK_SYNC=SYNC, split.c's
# work under DEPTH frames of recursion (none: 0); the 5 runs together at
# most OVER% over the rate (default 2.5).
# handler_rate SYNC DEPTH OVER [HZ [RUNS]]
handler_rate() {
    : >rates
    hz=${4:-1000}
    for run in $(seq 1 ${5:-5}); do
        rm -f h.data && CGPROF_STACK_SYNC=$1 $CGPROF record -F $hz -o h.data ./split 1500000 ${2:-0} >truth 2>err &&
            $CGPROF report --json h.data >j 2>rerr && $CGPROF report -b -p h.data >flat 2>>rerr &&
            cat err rerr || return 1
        python3 -c 'import json,sys; j=json.load(open("j")); hz=int(sys.argv[1])
r=j["runtime"]; t=j["threads"]
s=sum(x["samples"] for x in t)
c=sum(x["cpu_seconds"] for x in t) - r["write_cpu_seconds"] - r["start_cpu_seconds"]
w=open("truth").read().split(); steal=float(w[w.index("steal") + 1])
print("%d samples for %.4f s of CPU at %d Hz, %.4f s stolen: %.2f%% of the rate" % (s, c, hz, steal, 100 * s / (c * hz)))
open("rates", "a").write("%d %.6f %.6f\n" % (s, c + steal, r["late_seconds"]))
sys.exit(not (0.99 * (c - r["late_seconds"]) * hz - 3 <= s <= 1.08 * (c + steal) * hz + 3))' $hz || return 1
        for f in f60 f30 f10; do
            got=$(awk -v f=$f '$NF == f { print $1 }' flat)
            want=$(awk -v f=$f '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' truth)
            echo "$f $got/$want" && near "$got" "$want" 3 || return 1
        done
    done
    awk -v over="${3:-2.5}" -v hz=$hz '{ s += $1; c += $2 } END { printf "all runs: %.2f%% of the rate\n", 100 * s / (c * hz);
        exit !(s <= (1 + over / 100) * c * hz + 3) }' rates
}
if test $default = cpu-clock && { test "$(id -u)" = 0 || test "$(cat /proc/sys/kernel/perf_event_paranoid)" -lt 2; }; then
    test_expect "CGPROF_STACK_SYNC=2 with kernel samples: at the rate asked, 5 runs (no phase lock)" "handler_rate 2 0 2.5"
    # by default, a thread deeper than its copies (400 frames of 160 bytes
    # over split's work) goes to the same two events once a walk is cut
    # (docs/stacks.md).  The ring event's ticks that fall in the delivery
    # of the handler event's signal are not counted (in_signal_path in
    # runtime/sampler.c): counted, they put such a thread 0.7-1% over the
    # rate at 1 kHz on a quiet 2-core VM, 2-5% on CI's, 5-6% at 10 kHz;
    # without them, 99.7-101.8% at 1 kHz and 100.7-101.1% at 10 kHz,
    # beside two busy loops as without them
    test_expect "by default, a thread deeper than its stack copies: at the rate asked, 5 runs, the shares right" "
        handler_rate 3 400 2.5 && CGPROF_STACK_SYNC=3 \$CGPROF record -o d.data ./split 300000 400 >/dev/null &&
        python3 $ROOT/tests/stacks.py d.data >d.folded && head -n 1 d.folded &&
        awk '!/^#/ && \$1 !~ /^\\[cut\\]/ { w += \$NF } !/^#/ { n += \$NF } END { print w \" whole of \" n; exit !(w >= 0.8 * n) }' d.folded"
    test_expect "by default, a thread deeper than its stack copies at 10 kHz: at the rate asked, 3 runs" "handler_rate 3 400 2.5 10000 3"
else
    test_skip "CGPROF_STACK_SYNC=2 with kernel samples: at the rate asked" \
        "kernel samples not permitted here (root or perf_event_paranoid < 2)"
fi

# Time in the kernel (here pwrite's) is the thread's CPU time too: cpu-clock
# charges it to the user pc the thread entered the kernel from, as a CPU
# timer's signal does -- where kernel-mode samples are permitted (root, or
# perf_event_paranoid < 2); elsewhere the report says it went unsampled.
kernel_time() {
    rm -f k.data && $CGPROF record -o k.data ./systime 60000 >truth &&
        $CGPROF report -b -p k.data >flat 2>err && cat truth flat err || return 1
    if test "$(id -u)" = 0 || test "$(cat /proc/sys/kernel/perf_event_paranoid)" -lt 2; then
        got=$(awk '$NF == "[libc.so.6]" && $(NF - 1) ~ /^(__libc_)?pwrite/ { s += $3 } END { print s + 0 }' flat)
        want=$(awk '{ print $2 }' truth)
        echo "pwrite: $got s sampled, $want s measured" &&
            awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.2 * b + 0.01) }' &&
            ! grep -q 'could not be sampled' err
    else
        grep -q 'could not be sampled' err
    fi
}
if test $default = cpu-clock; then
    test_expect "time in system calls is charged to the call that spent it" kernel_time
fi
test_done

#!/bin/sh
# t0213: every numeric option at its documented limits (cgprof --help, the
# man page), on both sides: the limit is accepted, one past it refused with
# one line naming the option, exit status 2, nothing run or written.  And
# checkpoints (--checkpoint, CGPROF_CHECKPOINT) of a program that makes no
# calls (tests/progs/nocalls.c): written, readable, never more time than
# the program's own CPU clock says it used; every checkpoint caught as it is
# written (tests/checkpoints.py), in both formats.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg "$PROGS/nocalls.c" -o "$WORK/nocalls" &&
    gcc -O2 -g -pg "$PROGS/calls.c" -o "$WORK/calls" &&
    (cd "$WORK" && $CGPROF record -o calls.data ./calls >/dev/null &&
        $CGPROF record --format gmon -o calls.gmon ./calls >/dev/null) || exit 1

# accepted ARGS...: record takes the options and goes on to the program,
# which is not there: the one error names the program, not an option.
accepted() {
    ! $CGPROF record "$@" -o never.data ./no-such-program >out 2>err &&
        test $(wc -l <err) -eq 1 && grep -q 'no-such-program' err && ! test -e never.data
}

# refused NAME CMD...: status 2, one line on stderr naming NAME, nothing on
# stdout, no profile written.
refused() {
    name=$1
    shift
    "$@" >out 2>err
    rc=$?
    cat err
    test $rc -eq 2 && test $(wc -l <err) -eq 1 && grep -q -- "$name" err && ! test -s out &&
        ! test -e never.data
}

test_expect "record -F: 0 and 100000 accepted; 100001, -1, 1e3 and empty refused naming -F" "
    accepted -F 0 && accepted -F 100000 && accepted --freq=100000 &&
    for v in 100001 -1 1e3 '' 18446744073709551617; do
        refused -F $CGPROF record -F \"\$v\" -o never.data ./nocalls || return 1
    done
"

test_expect "record -c: 1 and 2^64-1 accepted; 0, -1 and 2^64 refused naming -c" "
    accepted -e page-faults -c 1 && accepted -e page-faults -c 18446744073709551615 &&
    for v in 0 -1 18446744073709551616; do
        refused -c $CGPROF record -e page-faults -c \$v -o never.data ./nocalls || return 1
    done
"

# a counting event is sampled at a rate (-F) or every N events (-c)
test_expect "record -e page-faults: -F alone and -c alone accepted; both together refused naming them" "
    accepted -e page-faults -F 4000 && accepted -e page-faults -c 7 &&
    refused '-F and -c' $CGPROF record -e page-faults -F 4000 -c 7 -o never.data ./nocalls
"

test_expect "record --checkpoint: 0 and 86400000 accepted; 86400001 and -1 refused naming it" "
    accepted --checkpoint 0 && accepted --checkpoint 86400000 &&
    for v in 86400001 -1 1.5; do
        refused --checkpoint $CGPROF record --checkpoint \$v -o never.data ./nocalls || return 1
    done
"

for o in w t m; do
    test_expect "report -$o: 0 and 1000000 accepted; 1000001 and -1 refused naming -$o" "
        $CGPROF report -A -$o 0 calls calls.gmon >/dev/null &&
        $CGPROF report -A -$o 1000000 calls calls.gmon >/dev/null &&
        refused -$o $CGPROF report -A -$o 1000001 calls calls.gmon &&
        refused -$o $CGPROF report -A -$o -1 calls calls.gmon &&
        grep -q '0 to 1000000' err
    "
done

test_expect "export -t: 0 and 100 accepted; 100.001 and -0.001 refused naming -t" "
    $CGPROF export -f dot -t 0 -o - calls.data >t0.dot && $CGPROF export -f dot -t 100 -o - calls.data >t100.dot &&
    test \$(grep -c -- '->' t100.dot) -lt \$(grep -c -- '->' t0.dot) &&
    refused -t $CGPROF export -f dot -t 100.001 -o - calls.data &&
    refused -t $CGPROF export -f dot -t -0.001 -o - calls.data
"

test_expect "report --propagate: measured and counts accepted; other values and none refused naming it" "
    $CGPROF report --propagate=measured calls.data >/dev/null && $CGPROF report --propagate=counts calls.data >/dev/null &&
    refused --propagate $CGPROF report --propagate=count calls.data &&
    refused --propagate $CGPROF report --propagate calls.data
"

# (main's time within its thread's CPU clock and its stolen time: on a
# virtual machine the hypervisor's, which the event's clock counts and the
# thread's (CONFIG_PARAVIRT_TIME_ACCOUNTING) leaves out -- a loaded run
# read 306 samples for 300.9 ms of CPU; 3% and two samples over allowed;
# main's only callees are libraries' functions and their PLT stubs, where
# a sample can fall)
test_expect "checkpoints every 10 ms of a program that makes no calls: status 0, several writes, main's time within its CPU" "
    $CGPROF record --checkpoint 10 -o nc.data ./nocalls 300 steal >nc.truth && cat nc.truth &&
    steal=\$(awk '\$1 == \"steal\" { print \$2 }' nc.truth) &&
    $CGPROF report --json nc.data >nc.json 2>nc.err &&
    jq -e '.runtime.writes >= 3' nc.json &&
    jq -e --argjson st \$steal '([.threads[].cpu_seconds] | add + \$st) as \$cpu | [.functions[] | select(.name == \"main\")][0] |
        .self_seconds > 0.1 and .inclusive_seconds <= 1.03 * \$cpu + 0.002' nc.json &&
    jq -e --argjson st \$steal '([.threads[].cpu_seconds] | add + \$st) as \$cpu | .total_seconds <= 1.03 * \$cpu + 0.002 and
        ([.arcs[] | select(.caller == \"main\" and (.callee | test(\" \\\\[|@plt\$\") | not))] | length == 0)' nc.json
"

test_expect "kill -9 after a checkpoint (CGPROF_CHECKPOINT=10) of a program that makes no calls: the profile reads" "
    { LD_PRELOAD=$LIBSO CGPROF_FORMAT=cgprof CGPROF_CHECKPOINT=10 CGPROF_OUTPUT=k.data ./nocalls 60000 & } &&
    pid=\$! && i=0 && while ! $CGPROF report -b -p k.data.\$pid 2>/dev/null | grep -q ' main\$' && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done &&
    kill -9 \$pid; wait \$pid; test \$? -eq 137 &&
    $CGPROF report -b -p k.data.\$pid >k.p && grep -q ' main\$' k.p
"

# Every checkpoint as it is written (tests/checkpoints.py copies each new
# version of the file while the program runs): each reads, in both formats
# (the gmon.out ones by GNU gprof), holds stacks with the samples its
# counts have, never gives main more samples than the main thread's CPU
# clock allows at that moment (read from /proc after the copy, and
# allowed the 10 ms by which the kernel's reading of a running thread can
# lag), never fewer than the checkpoint before.
test_expect "every checkpoint (every 20 ms) of a program that makes no calls reads, holds its stacks, within main's CPU, never going back" "
    mkdir cpc && LD_PRELOAD=$LIBSO CGPROF_FORMAT=cgprof CGPROF_CHECKPOINT=20 CGPROF_OUTPUT=cp.data \
        python3 $ROOT/tests/checkpoints.py catch cp.data.%d cpc ./nocalls 400 >n &&
    cat n && test \$(cat n) -ge 3 &&
    python3 $ROOT/tests/checkpoints.py check cpc 1000 cp.data.* json $CGPROF report
"

test_expect "every checkpoint of it as gmon.out reads in GNU gprof, within main's CPU, never going back" "
    mkdir cpg && LD_PRELOAD=$LIBSO CGPROF_FORMAT=gmon CGPROF_CHECKPOINT=20 CGPROF_OUTPUT=cp.gmon \
        python3 $ROOT/tests/checkpoints.py catch cp.gmon cpg ./nocalls 400 >n &&
    cat n && test \$(cat n) -ge 3 && gprof -b -p nocalls cp.gmon | grep -q 'Each sample counts as 0.001 seconds' &&
    python3 $ROOT/tests/checkpoints.py check cpg 1000 cp.gmon gprof ./nocalls
"

test_done

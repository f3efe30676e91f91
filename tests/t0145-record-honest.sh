#!/bin/sh
# t0145: cgprof record never records nothing in silence (issue 13): a run
# that cannot be recorded is refused with its reason, a profile with
# nothing in it says so, a profile cut short is refused, a foreign ELF
# file is not run as a script.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg "$PROGS/calls.c" -o "$WORK/calls" &&
gcc -O2 "$PROGS/spin.c" -o "$WORK/spin" || exit 1

# one_line STATUS WORD CMD...: exits STATUS with one stderr line holding WORD
one_line() {
    want=$1 word=$2
    shift 2
    "$@" >out 2>err
    rc=$?
    test $rc -eq "$want" && test "$(wc -l <err)" -eq 1 && grep -q -- "$word" err ||
        { echo "status $rc, want $want; stderr:"; cat err; false; }
}

# --- 8: nothing recorded is never silent
test_expect "record true; report: a line saying there are no samples and no call counts" "
    $CGPROF record -F 0 true && $CGPROF report >out 2>err &&
    grep -q 'cgprof.data holds no samples' err && grep -q 'no call counts' err &&
    grep -q 'no time accumulated' out
"
test_expect "a profile cut at a record boundary: 'cut short', status 1" "
    rm -f cgprof.data && $CGPROF record ./calls >/dev/null && size=\$(wc -c <cgprof.data) &&
    head -c \$((size - 16)) cgprof.data >cut.data &&
    one_line 1 'cut.data: cut short' $CGPROF report cut.data
"
test_expect "--format gmon on a program without -pg: refused, status 1, the program not run" "
    rm -f gmon.out && one_line 1 'not built with -pg' $CGPROF record --format gmon ./spin one 10 &&
    test ! -e gmon.out && test ! -s out
"
test_expect "a static program without libcgprof.a: refused, status 1" "
    if gcc -O2 -static $PROGS/spin.c -o spin-static 2>/dev/null; then
        one_line 1 'statically linked' $CGPROF record ./spin-static one 10
    else echo 'no static libc: nothing to check'; fi
"
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
    test_expect "a set-user-ID program of another user: refused, status 1" "
        cp spin suid && chown nobody suid && chmod 4755 suid &&
        one_line 1 'set-user-ID' $CGPROF record ./suid one 10
    "
else
    test_skip "a set-user-ID program of another user: refused" "needs root to make one"
fi

# --- 11: an ELF file for another machine is not a shell script (RISC-V,
# EM_RISCV 243: an AArch64 one is run under qemu-aarch64, t0700)
test_expect "an ELF file for another machine: 'exec format error', status 126" "
    cp calls foreign && printf '\\363\\000' | dd of=foreign bs=1 seek=18 conv=notrunc 2>/dev/null &&
    one_line 126 'exec format error' $CGPROF record ./foreign
"
test_expect "a script without #! still runs (as execvp runs it)" "
    printf 'exit 7\\n' >script && chmod +x script && $CGPROF record ./script; test \$? -eq 7
"
# --- 7: CGPROF_ARC_MEMORY drops arcs, nothing else, at no great cost
# (calls.c makes 226 calls of -pg functions and 2 library calls, counted
# too: main's printf and gcrt1's __cxa_atexit; manycalls.c 2,000,001 and
# the same __cxa_atexit; docs/libcalls.md)
gcc -O2 -pg "$PROGS/manycalls.c" -o "$WORK/manycalls" || exit 1
for cap in 1000 8000 100000 1000000; do
    test_expect "CGPROF_ARC_MEMORY=$cap: the functions keep their names; calls lost are counted exactly" "
        CGPROF_ARC_MEMORY=$cap $CGPROF record -o cap.data ./calls >/dev/null 2>rec.err &&
        $CGPROF report -b -p cap.data >flat 2>err && cat err &&
        grep -qE ' (s|b|a|c|main)\$' flat && ! grep -q unknown flat &&
        ! grep -q 'samples were lost' err &&
        lost=\$(sed -n 's/.*warning: \([0-9]*\) calls were not recorded.*/\1/p' err) &&
        counted=\$($CGPROF report -b -q cap.data | awk -f $ROOT/tests/arcs.awk | sort -u |
            awk '{ s += \$3 } END { print s + 0 }') &&
        echo \"calls counted \$counted, lost \${lost:-0}\" && test \$((counted + \${lost:-0})) -eq 228
    "
done
test_expect "CGPROF_ARC_MEMORY=1000: 2,000,000 calls, all lost, in well under 1 s of CPU" "
    CGPROF_ARC_MEMORY=1000 timeout 30 $CGPROF record -o cap.data ./manycalls >/dev/null 2>&1 &&
    $CGPROF report -b --threads cap.data >rep 2>err &&
    grep -q 'warning: 2000002 calls were not recorded' err &&
    awk '/Per-thread totals/ { t = 1 } t && \$1 ~ /^[0-9]+\$/ && NF >= 4 { cpu += \$4 }
         END { print \"cpu seconds:\", cpu; exit !(cpu < 1) }' rep
"
# --- 12: help, man page and messages say what the program does
# the man page's lines (groff source, \- read as -) for what item 12 named
cat >"$WORK/man-wants" <<'EOF'
^\.B --threads
^\.BR -m .*--min-count
^\.BR -v ", " -V ", " --version
^\.BR "cgprof --version" ,
EOF
test_expect "the man page has --threads, -m and --version, which the commands take" "
    sed 's/\\\\-/-/g' $ROOT/man/cgprof.1 >man.txt &&
    while read -r re; do grep -q -e \"\$re\" man.txt || { echo \"not in the man page: \$re\"; exit 1; }; done <man-wants &&
    $CGPROF report --help | grep -q -- --threads && $CGPROF report --help | grep -q -- --min-count &&
    $CGPROF report --help | grep -q -- --version && $CGPROF record --help | grep -q -- --version &&
    $CGPROF export --help | grep -q -- --version
"
test_expect "report --help says what report reads by default: the newer of the two" "
    $CGPROF report --help | grep -q 'newer of cgprof.data and gmon.out' &&
    rm -f cgprof.data gmon.out && $CGPROF record -o cgprof.data ./calls >/dev/null && sleep 0.01 &&
    LD_PRELOAD=$LIBSO ./calls >/dev/null && cp calls a.out && $CGPROF report calls >want &&
    $CGPROF report >got &&
    cmp want got
"
test_expect "a file that cannot be executed: 126, as the man page says" "
    cp calls noexec && chmod -x noexec && $CGPROF record ./noexec 2>err; rc=\$?; cat err;
    test \$rc -eq 126 && sed 's/\\\\-/-/g' $ROOT/man/cgprof.1 | grep -q '126 if'
"
test_expect "--version on both subcommands" "
    v=\$($CGPROF --version) && test \"\$($CGPROF record --version)\" = \"\$v\" &&
    test \"\$($CGPROF report --version)\" = \"\$v\"
"
test_expect "an empty or directory PROFILE: said, not 'not an ELF file'" "
    : >empty && mkdir -p adir &&
    one_line 1 'empty: empty file' $CGPROF report empty &&
    one_line 1 'adir: is a directory' $CGPROF report adir
"
test_expect "CGPROF_FREQ=10000000 is out of range (and abc not a number)" "
    CGPROF_FREQ=10000000 LD_PRELOAD=$LIBSO ./calls 2>err >/dev/null && grep -q 'CGPROF_FREQ: out of range' err &&
    CGPROF_FREQ=abc LD_PRELOAD=$LIBSO ./calls 2>err >/dev/null && grep -q 'CGPROF_FREQ: not a valid number' err
"
test_expect "-e itimer: record says that it may sample slower than asked" "
    $CGPROF record -e itimer -o it.data ./calls >/dev/null 2>err && grep -q 'itimer ticks with the kernel' err
"
# a short run under -e itimer (ITIMER_PROF fires at most once per kernel
# tick, so a 60 ms program gets some 15 samples at any rate asked): its
# samples' seconds are its CPU time, not samples / the rate asked (before:
# 16 ms at 1 kHz, 1.3 ms at 10 kHz); the program prints its own CPU time
gcc -O2 -pg "$PROGS/spin.c" -o "$WORK/spin" -lpthread || exit 1
for hz in 1000 10000; do
    test_expect "-e itimer -F $hz, a 60 ms run: the profile's seconds are the program's CPU time (25%)" "
        $CGPROF record -e itimer -F $hz -o si.data ./spin one 60 >cpu 2>/dev/null &&
        $CGPROF report --json si.data 2>/dev/null | python3 -c 'import json, sys
t = json.load(sys.stdin)[\"total_seconds\"]
c = float(open(\"cpu\").read().split()[-1])
print(t, c)
sys.exit(not 0.75 * c <= t <= 1.25 * c)'
    "
done
# issue 22 item 7: a program that blocks every signal under -e cpu is not
# "throttled or too short": the warning names the blocked signal (before:
# "the kernel throttling the event, or threads too short for it"); the
# same program with its signals open has no such warning, and samples.
gcc -O1 -pthread "$PROGS/blocksig.c" -o "$WORK/blocksig" || exit 1
test_expect "-e cpu, every signal blocked: the warning says the threads blocked the sampling signal" "
    $CGPROF record -e cpu -o bs.data ./blocksig block >/dev/null &&
    $CGPROF report -p bs.data >/dev/null 2>err; cat err &&
    grep -q 'warning: bs.data: 2 of the 2 threads blocked the profiler.s sampling signal' err &&
    ! grep -q throttling err
"
test_expect "-e cpu, signals open: sampled, no warning of unsampled time" "
    $CGPROF record -e cpu -o bo.data ./blocksig open >/dev/null &&
    $CGPROF report -p bo.data >flat 2>err; cat err &&
    ! grep -q 'could not be sampled\|blocked the profiler' err && grep -q ' burn\$' flat
"
test_expect "cgprof_dump(): links without libcgprof (weak), dumps when the runtime is preloaded" "
    printf '#include <cgprof.h>\\n#include <stdio.h>\\nint main(void) { if (cgprof_dump) return cgprof_dump() != 0; puts(\"no runtime\"); return 0; }\\n' >dump.c &&
    gcc -I$ROOT/include dump.c -o dump && ./dump | grep -q 'no runtime' &&
    rm -f dump.data && $CGPROF record -o dump.data ./dump && test -s dump.data
"
test_done

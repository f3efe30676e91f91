#!/bin/sh
# t0700: AArch64 (issue 23).  Programs cross-built with
# aarch64-linux-gnu-gcc -pg and run under qemu-aarch64; cgprof report on
# this x86-64 host reads their ELF, DWARF and gmon.out and prints what
# GNU aarch64-linux-gnu-gprof prints, byte for byte, for the option sets
# t0200 checks on x86-64, -c's static arcs (B and BL, tail branches
# included) and -l's lines.  Then cgprof's own runtime, cross-built by
# `make ARCH=aarch64`, in the same programs under qemu: exact counts under
# 4 threads (preloaded, linked, -static), GNU gprof reading its gmon.out
# and cgprof's report the same bytes, and a 60/30/10 split's samples.
. "$(dirname "$0")/lib.sh"

A64CC=aarch64-linux-gnu-gcc A64GPROF=aarch64-linux-gnu-gprof
if ! command -v $A64CC >/dev/null || ! command -v $A64GPROF >/dev/null ||
    ! command -v qemu-aarch64 >/dev/null || [ ! -d /usr/aarch64-linux-gnu/lib ]; then
    test_skip "AArch64 under qemu-user" \
        "needs gcc-aarch64-linux-gnu, binutils-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user (scripts/deps.sh)"
    test_done
    exit 0
fi
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
# qemu64 ARGS...: qemu-aarch64, killed if it runs 3 minutes (a hang fails
# its check, never the suite); its status, or the signal that ended it
qemu64() {
    timeout -k 5 180 qemu-aarch64 "$@"
}
# run PROG ARGS...: PROG under qemu-aarch64 in $WORK, its gmon.out kept as PROG.gmon
run() {
    p=$1
    shift
    rm -f gmon.out && qemu64 ./$p "$@" >$p.out && mv gmon.out $p.gmon
}

cd "$WORK" || exit 1
$A64CC -O0 -g -pg "$PROGS/calls.c" -o calls0 &&
    $A64CC -O2 -g -pg "$PROGS/calls.c" -o calls2 &&
    $A64CC -O2 -pg -pthread "$PROGS/threads.c" -o threads &&
    $A64CC -O2 -g -pg "$PROGS/tailcalls.c" -o tailcalls || exit 1
test_expect "the programs are AArch64 executables, and glibc's runtime writes their gmon.out under qemu" '
    aarch64-linux-gnu-readelf -h calls0 | grep -q "Machine: *AArch64" &&
    run calls0 && run calls2 && run threads && run tailcalls && ls -l calls0.gmon tailcalls.gmon'

for prog in calls0 calls2 threads tailcalls; do
    for opts in "-b" "-b -p" "-b -q" "-b -z" "-b -p -q -z" "-b -c" "-b -c -z" "-b -l" "-b -A" "-b -i"; do
        test_expect "$prog (AArch64), $opts: identical to $A64GPROF" "
            $A64GPROF $opts $prog $prog.gmon >want &&
            $CGPROF report $opts $prog $prog.gmon >got 2>err &&
            diff -u want got"
    done
done

# -c must find something here, or the check above proves nothing: the
# arcs only the text has (a tail branch, calls that never ran)
test_expect "-c on AArch64: the arcs of B and BL that never ran, as gprof finds them" '
    $CGPROF report -b -q tailcalls tailcalls.gmon >plain &&
    $CGPROF report -b -q -c tailcalls tailcalls.gmon >static &&
    ! diff plain static >d && cat d &&
    grep -q "0/0 *never" static && grep -q "0/20000 *tailee" static &&
    ! grep -q "0/0 *never" plain &&
    $CGPROF report -b -q -c -z tailcalls tailcalls.gmon >all &&
    awk "/^\\[[0-9]+\\].* condjump \\[/ { e = 1; next } e && /^-----/ { exit } e" all >cj && cat cj &&
    ! grep -q never cj'

# ---- the runtime, cross-built
RT=$WORK/rt
test_expect "make ARCH=aarch64 cross-builds libcgprof.so and libcgprof.a for AArch64" '
    make -s -C "$ROOT" ARCH=aarch64 BUILD="$RT" >make.out 2>&1; rc=$?; tail -5 make.out; test $rc = 0 &&
    aarch64-linux-gnu-readelf -h "$RT/libcgprof.so" | grep -q "Machine: *AArch64" &&
    aarch64-linux-gnu-nm -D --defined-only "$RT/libcgprof.so" | grep -q " T _mcount$" &&
    aarch64-linux-gnu-nm "$RT/libcgprof.a" | grep -q " T _mcount$"'

# on an AArch64 host `make` builds everything (ARCH defaults to the
# host's): no AArch64 machine here, and no AArch64 libdw to link with, so
# the command's sources are compiled for AArch64 as far as that goes
# (types and warnings, with the host's arch-independent headers of
# elfutils, capstone, protobuf-c and zlib)
native64() {
    for f in "$ROOT"/cli/*.c "$ROOT"/analysis/*.c "$ROOT"/output/*.c; do
        $A64CC -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter -Werror \
            -D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/analysis" -I"$ROOT/output" -I"$BUILD/gen" \
            -idirafter /usr/include -fsyntax-only "$f" || return 1
    done
    make -s -C "$ROOT" -n HOST_ARCH=aarch64 ARCH=aarch64 BUILD="$WORK/native" all >native.n &&
        grep -q -- "-o $WORK/native/cgprof" native.n
}
test_expect "cgprof's own sources compile for AArch64 without a warning (make on an AArch64 host)" native64

cat >threads.expected <<'X'
ping pong 20000
pong ping 20000
thread_main work 4
work hot 800000
work ping 4000
X
# arcs64 PROG GMON: "caller callee count", as GNU aarch64 gprof reads them
arcs64() {
    $A64GPROF -b -q "$1" "$2" | awk -f "$ROOT/tests/arcs.awk" | sort -u
}
# same_bytes PROG GMON: cgprof report prints what aarch64 gprof prints
same_bytes() {
    for o in "-b" "-b -p" "-b -q" "-b -z" "-b -c"; do
        $A64GPROF $o "$1" "$2" >want && $CGPROF report $o "$1" "$2" >got && diff -u want got || return 1
    done
}
test_expect "4 threads, libcgprof.so preloaded under qemu: every arc count exact, report the same bytes as gprof" '
    $A64CC -O2 -pg -pthread "$PROGS/threads.c" -o rthreads &&
    rm -f gmon.out && qemu64 -E LD_PRELOAD="$RT/libcgprof.so" ./rthreads >/dev/null 2>err && cat err &&
    arcs64 rthreads gmon.out >got.arcs && diff -u threads.expected got.arcs &&
    same_bytes rthreads gmon.out'
test_expect "4 threads, linked with libcgprof.a: every arc count exact" '
    $A64CC -O2 -pg -pthread "$PROGS/threads.c" "$RT/libcgprof.a" -o lthreads &&
    rm -f gmon.out && qemu64 ./lthreads >/dev/null &&
    arcs64 lthreads gmon.out >got.arcs && diff -u threads.expected got.arcs'
# -static: libc.a'"'"'s own gmon stays out (libcgprof.a'"'"'s _mcount comes first);
# glibc'"'"'s start-up code calls main and the threads'"'"' functions
test_expect "4 threads, -static with libcgprof.a: every arc count exact, report the same bytes as gprof" '
    $A64CC -static -O2 -pg -pthread "$PROGS/threads.c" "$RT/libcgprof.a" -o sthreads &&
    rm -f gmon.out && qemu64 ./sthreads >/dev/null &&
    arcs64 sthreads gmon.out | grep -v -e "^__libc_start_call_main main 1$" -e "^start_thread thread_main 4$" >got.arcs &&
    diff -u threads.expected got.arcs && same_bytes sthreads gmon.out'

# a -pg shared library (pglib.c) called by 4 threads (pgmain.c), calling
# within itself and back into the executable: every arc exact, in the
# cgprof format (gmon.out holds the executable's arcs alone); the
# program linked with libcgprof.so rather than preloaded
test_expect "a -pg shared library, 4 threads, linked with libcgprof.so: arcs into it, within it and back, exact" '
    $A64CC -O2 -pg -fPIC -shared "$PROGS/pglib.c" -o libpglib.so &&
    $A64CC -O2 -pg -pthread "$PROGS/pgmain.c" -L. -lpglib -L"$RT" -lcgprof -Wl,-rpath,"$WORK:$RT" -o pgmain &&
    aarch64-linux-gnu-readelf -d pgmain | grep -q "NEEDED.*libcgprof.so" &&
    rm -f s.data* && qemu64 -E CGPROF_FORMAT=cgprof -E CGPROF_OUTPUT=s.data ./pgmain >out 2>err && cat out err &&
    test "$(cat out)" = 96000 && mv s.data.* s.data &&
    $CGPROF report -b -q -p s.data | awk -f "$ROOT/tests/arcs.awk" | sort -u >got.arcs && cat got.arcs &&
    grep -x "worker lib_step 1000" got.arcs && grep -x "lib_step lib_inner 7000" got.arcs &&
    grep -x "lib_step callback 7000" got.arcs && test "$(grep -c "lib_\|callback" got.arcs)" = 3'

# qemu-user has no perf_event_open: the default event is then each
# thread's CPU timer (timer_create), whose signal must be one qemu can
# send (it keeps the highest real-time signals for itself).  Each call
# lasts milliseconds: under qemu a timer's signal comes late when calls
# are short, and the next function gets the sample -- glibc's own runtime
# too (split 60000: f10 2-2.8% for 9.8% with glibc's, 1.6-2.1% with ours;
# 300000: 9.5% for 10.0%), an emulator's limit (docs/architectures.md)
# shares_near TRUTH FLAT: f60/f30/f10's shares of split's samples (a flat
# profile, at least 300 samples) against the program's own clocks, within
# 4 binomial deviations plus half a point (as t0300), and one more point
# for qemu's late signals (above: 0.5 points with 7 ms calls, quiet)
shares_near() {
    n=$(awk '$NF ~ /^f(60|30|10)$/ { s += $3 } END { printf "%d", s * 1000 }' "$2")
    echo "$n samples"
    test "$n" -ge 300 || return 1
    for f in f60 f30 f10; do
        want=$(awk -v f=$f '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' "$1")
        got=$(awk -v f=$f '$NF == f { print $1 }' "$2")
        awk -v f=$f -v a="$got" -v b="$want" -v n="$n" 'BEGIN { p = b / 100; tol = 400 * sqrt(p * (1 - p) / n) + 1.5
            d = a - b; if (d < 0) d = -d; printf "%s: %s vs %s, tolerance %.2f\n", f, a, b, tol; exit !(d <= tol) }' ||
            return 1
    done
}
split64() {
    $A64CC -O2 -pg -I"$PROGS" "$PROGS/split.c" -o split &&
        rm -f gmon.out && qemu64 -E LD_PRELOAD="$RT/libcgprof.so" ./split 300000 >truth 2>err &&
        cat truth err && ! grep -q "not sampled" err &&
        $CGPROF report -b -p split gmon.out >flat && cat flat || return 1
    shares_near truth flat
}
test_expect "the default event under qemu: a 60/30/10 split, each share within 4 sigma of the program's clocks" \
    split64

# the cgprof format from the AArch64 runtime, read on this host: the
# libraries qemu-user loaded from its prefix (/lib/libc.so.6 to the
# program) found there (QEMU_LD_PREFIX, or CGPROF_SYMFS, or without
# either under Debian's /usr/aarch64-linux-gnu if the build-id matches:
# libc's __libc_start_main named on every stack), the PLT's stubs named, the
# stacks whole: _start .. main, deep 21 times, the leaf.  (Not a libc
# function in the flat profile: under qemu a split run's few samples in
# libc fall in its local functions as often as in clock_gettime, and
# the check asking for clock_gettime failed once in 2 runs.)
stacks64() {
    rm -f c.data* &&
        qemu64 -E LD_PRELOAD="$RT/libcgprof.so" -E CGPROF_FORMAT=cgprof -E CGPROF_OUTPUT=c.data \
            ./split 300000 20 >truth2 2>err && cat truth2 err && mv c.data.* c.data &&
        env -u QEMU_LD_PREFIX $CGPROF_REAL report -b -p c.data >flat0 2>err0 && cat err0 &&
        ! grep -q "no symbols" err0 &&
        $CGPROF report -b -p c.data >flat2 2>err2 && cat flat2 err2 && ! grep -q "no symbols" err2 &&
        ! grep -q " _init$" flat2 &&
        $CGPROF export -f folded -o f.folded c.data && head -c 3000 f.folded || return 1
    whole="_start;__libc_start_main [libc.so.6];[libc.so.6];main"
    k=0
    while [ $k -le 20 ]; do whole="$whole;deep" && k=$((k + 1)); done
    for f in f60 f30 f10; do
        awk -v f=$f -v w="$whole;$f" '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); k = split(st, a, ";") }
            a[k] == f { all += n; if (st == w) good += n }
            END { printf "%s: %d of %d samples on the whole stack\n", f, good, all; exit !(all > 0 && good >= 0.99 * all) }' f.folded ||
            return 1
    done
    echo "(the split's shares are split64's check)"
}
test_expect "cgprof format from AArch64: libraries under qemu's prefix, PLT names, whole stacks" \
    stacks64

# a libc whose build-id is not the one under /usr/aarch64-linux-gnu (a
# copy of it with one byte of its build-id note changed, run as qemu's
# prefix): read without QEMU_LD_PREFIX, Debian's libc is not taken for it
fakeid64() {
    rm -rf fakeroot && mkdir -p fakeroot/lib && cp /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 fakeroot/lib/ &&
        id=$(aarch64-linux-gnu-readelf -n /usr/aarch64-linux-gnu/lib/libc.so.6 | sed -n 's/.*Build ID: *//p') &&
        test -n "$id" &&
        python3 -c "import sys; b = open(sys.argv[1], 'rb').read(); i = bytes.fromhex(sys.argv[2]); assert b.count(i) == 1
j = bytes([i[0] ^ 0xff]) + i[1:]; open(sys.argv[3], 'wb').write(b.replace(i, j))" \
            /usr/aarch64-linux-gnu/lib/libc.so.6 "$id" fakeroot/lib/libc.so.6 &&
        rm -f k.data* && qemu64 -L "$WORK/fakeroot" -E LD_PRELOAD="$RT/libcgprof.so" -E CGPROF_FORMAT=cgprof \
            -E CGPROF_OUTPUT=k.data ./split 30000 >/dev/null && mv k.data.* k.data &&
        env -u QEMU_LD_PREFIX $CGPROF report -b -p k.data >flat 2>err; cat err &&
        grep -q "no symbols for /lib/libc.so.6" err &&
        QEMU_LD_PREFIX="$WORK/fakeroot" $CGPROF report -b -p k.data >flat 2>err && cat err && ! grep -q "no symbols" err
}
test_expect "a library of another build-id is not taken from Debian's AArch64 prefix" fakeid64

# stacks_like FOLDED LEAF PATTERN: of the samples whose leaf frame is
# LEAF (an ERE), at least 99% have the stack PATTERN (an anchored ERE),
# and there are 100 at least (the patterns through the environment: awk
# -v would take their backslashes)
stacks_like() {
    LEAF=$2 WANT=$3 awk 'BEGIN { leaf = ENVIRON["LEAF"]; w = ENVIRON["WANT"] }
        { n = $NF; st = $0; sub(/ [0-9]+$/, "", st); k = split(st, a, ";") }
        a[k] ~ "^(" leaf ")$" { all += n; if (st ~ w) good += n; else if (bad++ < 5) print "  other: " st }
        END { printf "%s: %d of %d samples on the stack wanted\n", leaf, good, all
              exit !(all >= 100 && good >= 0.99 * all) }' "$1"
}
# stacks through libc's qsort: its merge sort calls the program's
# comparison (by_text), which calls libc's memcmp, a leaf with no frame
# record: its caller is only in x30, which .eh_frame's rules say, and a
# walk by frame records skips by_text.  The few samples in the PLT's
# stubs (no FDE: a stub saves nothing) have the program's function that
# called them, from x30, under them: by_text (memcmp, _mcount) or main
# (memcpy, malloc: 1 sample in 5 runs), never libc's frame above it.
qsort64() {
    $A64CC -O2 -g -pg "$PROGS/qsortcmp.c" -o qsortcmp && rm -f q.data* &&
        qemu64 -E LD_PRELOAD="$RT/libcgprof.so" -E CGPROF_FORMAT=cgprof -E CGPROF_OUTPUT=q.data \
            ./qsortcmp 30 >out 2>err && cat err && mv q.data.* q.data &&
        $CGPROF export -f folded -o q.folded q.data || return 1
    start="^_start;__libc_start_main \[libc.so.6\];\[libc.so.6\];main;qsort_r \[libc.so.6\](;\[libc.so.6\])*"
    stacks_like q.folded "(bcmp|memcmp) \[libc.so.6\]" "$start;by_text;(bcmp|memcmp) \[libc.so.6\]\$" &&
        awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); k = split(st, a, ";") }
            a[k] ~ /@plt$/ { all += n; if (a[k - 1] == "by_text" || a[k - 1] == "main") good += n; else print "  other: " st }
            END { printf "PLT stubs: %d of %d samples under the program%s functions\n", good, all, "\047s"
                  exit !(all >= 3 && good == all) }' q.folded
}
test_expect "AArch64 stacks through libc's qsort: main, qsort, by_text, memcmp (a leaf: its caller from x30 by .eh_frame)" \
    qsort64

# a library built without unwind tables: through() is crossed by its
# frame record, which lies at the bottom of its 240-byte frame; main's
# frame is then found from the frame record its rules say it keeps, not
# from the record + 16 (which made every stack end at main)
nocfi64() {
    $A64CC -O2 -fPIC -shared -fno-asynchronous-unwind-tables -fno-unwind-tables \
        "$PROGS/nocfilib.c" -o libnocfi.so &&
        $A64CC -O2 -g -pg "$PROGS/nocfi.c" -L. -lnocfi -Wl,-rpath,"$WORK" -o nocfi && rm -f n.data* &&
        qemu64 -E LD_PRELOAD="$RT/libcgprof.so" -E CGPROF_FORMAT=cgprof -E CGPROF_OUTPUT=n.data \
            ./nocfi 5 >out 2>err && cat err && mv n.data.* n.data &&
        $CGPROF export -f folded -o n.folded n.data &&
        stacks_like n.folded work "^_start;__libc_start_main \[libc.so.6\];\[libc.so.6\];main;through \[libnocfi.so\];work\$"
}
test_expect "AArch64: a library without unwind tables between frames with them: whole stacks" nocfi64

# the PLT's stubs named at the addresses objdump labels them, with every
# layout binutils makes on AArch64: 16-byte stubs, and 24-byte ones with
# PAC (-z pac-plt) or BTI (non-PIE): built only, not run (Debian 12's
# start files have no BTI landing pads, and its loader does not sign
# the GOT for pac-plt's autia1716)
plt64() {
    cc -std=c11 -Wall -Wextra -D_GNU_SOURCE -I"$ROOT/analysis" "$ROOT/tests/unit/plt_dump.c" \
        "$ROOT/analysis/plt.c" -lelf -o plt_dump || return 1
    for v in "" "-Wl,-z,pac-plt" "-no-pie -Wl,-z,force-bti" "-no-pie -Wl,-z,force-bti,-z,pac-plt"; do
        $A64CC -O2 -pg -mbranch-protection=standard $v "$PROGS/qsortcmp.c" -o pltv 2>/dev/null &&
            ./plt_dump pltv | sort >got.plt &&
            aarch64-linux-gnu-objdump -d -j .plt pltv | sed -n 's/^0*\([0-9a-f]*\) <\(.*@plt\)>:$/\1 \2/p' |
            sort >want.plt && echo "${v:-PIE}: $(wc -l <want.plt) stubs" && test -s want.plt &&
            diff -u want.plt got.plt || return 1
    done
}
test_expect "AArch64 PLT stubs of 16 and 24 bytes (PAC, BTI) named where objdump names them" plt64

# clang's -pg calls _mcount with nothing in x0 (glibc's runtime loses
# every arc of such a program: "gmon.out file is missing call-graph
# data"); ours reads frompc from the frame record.  Return addresses
# signed by pointer authentication (-mbranch-protection=pac-ret: qemu's
# CPU has it) are stripped, by _mcount and by the stack walk.
A64CLANG="clang --target=aarch64-linux-gnu"
if command -v clang >/dev/null && $A64CLANG -O2 -pg -pthread "$PROGS/threads.c" -o cthreads 2>cc.err; then
    test_expect "clang -pg on AArch64, 4 threads: every arc count exact, report the same bytes as gprof" '
        rm -f gmon.out && qemu64 -E LD_PRELOAD="$RT/libcgprof.so" ./cthreads >/dev/null 2>err && cat err &&
        arcs64 cthreads gmon.out >got.arcs && diff -u threads.expected got.arcs &&
        same_bytes cthreads gmon.out'
else
    cat cc.err
    test_skip "clang -pg on AArch64" "clang cannot build for aarch64-linux-gnu here (scripts/deps.sh installs clang)"
fi
# pac64 CC...: threads and qsortcmp built by CC with pac-ret: arcs exact,
# memcmp's stacks whole; and nocfi.c with through() linked in, built
# without a frame record (-fomit-frame-pointer, not -pg): work's signed
# return address into it must be stripped to find through's rules, or
# the walk goes on by frame records and main is lost
pac64() {
    "$@" -O2 -pg -mbranch-protection=pac-ret -pthread "$PROGS/threads.c" -o pthreads &&
        "$@" -O2 -g -pg -mbranch-protection=pac-ret "$PROGS/qsortcmp.c" -o pqsort &&
        "$@" -O2 -fomit-frame-pointer -c "$PROGS/nocfilib.c" -o through.o &&
        "$@" -O2 -g -pg -mbranch-protection=pac-ret "$PROGS/nocfi.c" through.o -o pnofp || return 1
    aarch64-linux-gnu-objdump -d pthreads | grep -q -E "paciasp|hint\s+#0x19" || { echo "not signed"; return 1; }
    rm -f gmon.out && qemu64 -E LD_PRELOAD="$RT/libcgprof.so" ./pthreads >/dev/null &&
        arcs64 pthreads gmon.out >got.arcs && diff -u threads.expected got.arcs &&
        rm -f p.data* && qemu64 -E LD_PRELOAD="$RT/libcgprof.so" -E CGPROF_FORMAT=cgprof -E CGPROF_OUTPUT=p.data \
            ./pqsort 20 >out 2>err && cat err && mv p.data.* p.data &&
        $CGPROF export -f folded -o p.folded p.data &&
        stacks_like p.folded "(bcmp|memcmp) \[libc.so.6\]" \
            "^_start;__libc_start_main \[libc.so.6\];\[libc.so.6\];main;qsort_r \[libc.so.6\](;\[libc.so.6\])*;by_text;(bcmp|memcmp) \[libc.so.6\]\$" &&
        rm -f n.data* && qemu64 -E LD_PRELOAD="$RT/libcgprof.so" -E CGPROF_FORMAT=cgprof -E CGPROF_OUTPUT=n.data \
            ./pnofp 4 >out 2>err && cat err && mv n.data.* n.data &&
        $CGPROF export -f folded -o n.folded n.data &&
        stacks_like n.folded work "^_start;__libc_start_main \[libc.so.6\];\[libc.so.6\];main;through;work\$"
}
test_expect "gcc -mbranch-protection=pac-ret on AArch64: arcs exact, stacks whole (signed return addresses stripped)" \
    "pac64 $A64CC"
if command -v clang >/dev/null && [ -x cthreads ]; then
    test_expect "clang -mbranch-protection=pac-ret on AArch64: the same" "pac64 $A64CLANG"
fi

# every ending leaves its profile, the program's status unchanged
$A64CC -O2 -pg -pthread -I"$PROGS" "$PROGS/endings.c" -o endings &&
    $A64CC -O2 -pthread -I"$PROGS" "$PROGS/endings.c" -o endings_plain &&
    $A64CC -O2 -pg -pthread "$PROGS/proc.c" -o proc &&
    $A64CC -O2 -pthread "$PROGS/forkthread.c" -o forkthread || exit 1
# ending64 HOW: the status with the runtime is the program's own (built
# without -pg: with glibc's runtime a SIGPROF still in flight when its
# profil stops can kill the program, which qemu's late signals made
# happen once, status 155), and gmon.out has main -> work 1000 exactly
ending64() {
    qemu64 ./endings_plain "$1" 20 >/dev/null 2>&1
    want=$?
    rm -f gmon.out
    qemu64 -E LD_PRELOAD="$RT/libcgprof.so" ./endings "$1" 20 >/dev/null 2>err
    got=$?
    echo "status $got, without the runtime $want"
    test "$got" = "$want" && arcs64 endings gmon.out | grep -x "main work 1000"
}
for how in exit sig:INT sig:TERM sig:QUIT abort segv _exit thread-exit own-exit:TERM \
    own-reraise:SEGV own-return:USR1 resethand:USR1 overflow thread-overflow; do
    test_expect "AArch64 ending '$how': the same status, the profile written, counts exact" "ending64 $how"
done
# cgprof record on this x86-64 host runs an AArch64 program under
# qemu-aarch64 with AArch64's runtime (CGPROF_LIB_AARCH64 here; by
# default build/aarch64/ beside cgprof, or lib/cgprof/aarch64/ installed)
# and qemu's prefix by default (QEMU_LD_PREFIX unset): gmon.out with
# every arc exact; the cgprof format read without QEMU_LD_PREFIX (libc
# found under /usr/aarch64-linux-gnu by its build-id); the program's
# status; perf events refused, as qemu has none
record64() {
    rm -f r.gmon r.data* &&
        env -u QEMU_LD_PREFIX CGPROF_LIB_AARCH64="$RT/libcgprof.so" \
            $CGPROF_REAL record --format gmon -o r.gmon ./threads >/dev/null 2>err && cat err &&
        arcs64 threads r.gmon >got.arcs && diff -u threads.expected got.arcs &&
        env -u QEMU_LD_PREFIX CGPROF_LIB_AARCH64="$RT/libcgprof.so" \
            $CGPROF_REAL record -o r.data ./qsortcmp 10 >out 2>err && cat err && test -s out &&
        ! grep -q "cannot be preloaded" err &&
        env -u QEMU_LD_PREFIX $CGPROF report -b -p r.data >flat 2>err && cat flat err &&
        ! grep -q "no symbols" err && grep -q -E " (bcmp|memcmp) \[libc.so.6\]$" flat &&
        grep -q " by_text$" flat || return 1
    qemu64 ./endings_plain sig:TERM 20 >/dev/null 2>&1
    want=$?
    env -u QEMU_LD_PREFIX CGPROF_LIB_AARCH64="$RT/libcgprof.so" \
        $CGPROF_REAL record -o e.data ./endings sig:TERM 20 >/dev/null 2>err
    got=$?
    echo "status $got, the program's own $want"
    test "$got" = "$want" && test -s e.data || return 1
    CGPROF_LIB_AARCH64="$RT/libcgprof.so" $CGPROF_REAL record -e cpu-clock ./qsortcmp 1 >/dev/null 2>err
    rc=$?
    cat err
    test $rc = 2 && grep -q "^cgprof record: -e cpu-clock: ./qsortcmp is an AArch64 program, run under qemu-aarch64, which has no perf_event_open" err
}
test_expect "cgprof record runs an AArch64 program under qemu-aarch64: arcs exact, libc found, the program's status, perf events refused" \
    record64

test_expect "AArch64: main ends with pthread_exit: written when the last thread exits (qemu's own thread not counted)" '
    rm -f gmon.out && qemu64 -E LD_PRELOAD="$RT/libcgprof.so" ./proc lastthread &&
    arcs64 proc gmon.out | grep -x "worker f 4"'
test_expect "AArch64: exit() from a thread, 100,000 frames of recursion, a dump on USR1" '
    rm -f gmon.*; qemu64 -E LD_PRELOAD="$RT/libcgprof.so" ./proc threadexit; test $? = 3 &&
    arcs64 proc gmon.out | grep -x "exiter f 5" &&
    rm -f gmon.* && qemu64 -E LD_PRELOAD="$RT/libcgprof.so" ./proc deep &&
    arcs64 proc gmon.out | grep -x "rec rec 100000" &&
    rm -f gmon.* && qemu64 -E LD_PRELOAD="$RT/libcgprof.so" -E CGPROF_DUMP_SIGNAL=USR1 ./proc dump &&
    arcs64 proc gmon.dump | grep -x "main f 1000" && arcs64 proc gmon.out | grep -x "main f 1500"'
test_expect "AArch64: exec: the data so far is written before the new image runs" '
    rm -f gmon.* && qemu64 -E LD_PRELOAD="$RT/libcgprof.so" ./proc exec 2>/dev/null &&
    arcs64 proc gmon.out | grep -x "main f 3"'
if qemu64 ./forkthread >/dev/null 2>&1; then
    test_expect "AArch64: fork: the child writes its own file" '
        rm -f gmon.out* && qemu64 -E LD_PRELOAD="$RT/libcgprof.so" ./proc fork >out &&
        child=$(sed -n "s/^child //p" out) &&
        arcs64 proc gmon.out | grep -x "main h 5" && arcs64 proc gmon.out.$child | grep -x "main g 7"'
else
    test_skip "AArch64: fork: the child writes its own file" \
        "this qemu-aarch64 fails when a forked child of a threaded process starts a thread (tests/progs/forkthread.c, without cgprof)"
fi

test_expect "two AArch64 profiles summed as $A64GPROF sums them" "
    cp calls0.gmon a.gmon && run calls0 &&
    $A64GPROF -b calls0 a.gmon calls0.gmon >want 2>&1 &&
    $CGPROF report -b calls0 a.gmon calls0.gmon >got 2>&1 &&
    diff -u want got"
test_done

#!/bin/sh
# t0407: kernel frames (issue 19 item 8): `record --kernel` keeps, above a
# sample taken in the kernel, the kernel's own frames (read ->
# entry_SYSCALL_64 -> ksys_read -> vfs_read -> read_zero), named from
# /proc/kallsyms; `report --kernel` and `export --kernel` show them, and
# without --kernel the report is what it was.  Checked against perf's own
# kernel call chains of the same program (perf record -g), and as an
# ordinary user where the kernel does not permit kernel samples.
. "$(dirname "$0")/lib.sh"

gcc -O2 -g -pg "$PROGS/kread.c" -o "$WORK/kread" || exit 1
cd "$WORK" || exit 1
level=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" -ne 0 ] && [ "$level" -gt 1 ]; then
    test_skip "kernel frames" "kernel samples not permitted here (perf_event_paranoid $level, not root)"
    test_done
    exit 0
fi

$CGPROF record --kernel -o k.data ./kread >/dev/null 2>rec.err || exit 1
$CGPROF report --kernel --json k.data >k.json 2>/dev/null || exit 1
$CGPROF report --json k.data >u.json 2>/dev/null || exit 1

# perf records the same run (perf record -g over cgprof record --kernel):
# the top kernel function by self time in perf's view, and its share of
# it and burn() together, in perf and in cgprof (shares of one run, so
# only sampling noise between them: some 1,500 samples each at 10 kHz)
test_expect "--kernel: the kernel function perf finds most time in, against burn(), within 6 points in cgprof" "
    perf record -q -g -F 10000 -o kp.data -- $CGPROF record -F 10000 --kernel -o k2.data ./kread >/dev/null 2>&1 &&
    perf report -i kp.data --comm kread --no-children --sort sym -g none --stdio 2>/dev/null >kp.txt &&
    top=\$(awk '\$2 == \"[k]\" { print \$3; exit }' kp.txt) && test -n \"\$top\" &&
    k=\$(awk -v s=\"\$top\" '\$2 == \"[k]\" && \$3 == s { sub(\"%\", \"\", \$1); print \$1; exit }' kp.txt) &&
    b=\$(awk '\$2 == \"[.]\" && \$3 == \"burn\" { sub(\"%\", \"\", \$1); print \$1; exit }' kp.txt) &&
    $CGPROF report --kernel --json k2.data >k2.json 2>/dev/null &&
    python3 -c 'import json,sys
top, k, b = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
j = json.load(open(\"k2.json\"))
f = {x[\"name\"]: x[\"self_seconds\"] for x in j[\"functions\"]}
ck, cb = f.get(top + \" [kernel]\", 0), f.get(\"burn\", 0)
p, c = 100 * k / (k + b), 100 * ck / (ck + cb) if ck + cb else -1
print(\"%s against burn: perf %.1f%%, cgprof %.1f%%\" % (top, p, c))
sys.exit(not abs(p - c) <= 6)' \"\$top\" \"\$k\" \"\$b\"
"
test_expect "--kernel: read's kernel frames sit under read, as system call, ksys_read, vfs_read" "
    $CGPROF export --kernel -f folded -o k.folded k.data &&
    grep -q ';readzero;read \[libc.so.6\];entry_SYSCALL_64[^;]* \[kernel\];do_syscall_64 \[kernel\];ksys_read \[kernel\];vfs_read \[kernel\]' k.folded
"
# read's own samples without --kernel are its own plus those under its
# kernel frames with --kernel; what it calls in user space (glibc's
# __pthread_disable_asynccancel, now and then) is the same in both
test_expect "without --kernel: no kernel function anywhere, read keeps its kernel time as its own" "
    $CGPROF export -f folded -o u.folded k.data && ! grep -q '\\[kernel\\]' u.folded &&
    $CGPROF export --kernel -f folded -o kk.folded k.data &&
    python3 -c 'import json,sys
u = json.load(open(\"u.json\")); k = json.load(open(\"k.json\"))
bad = [x[\"name\"] for x in u[\"functions\"] if x[\"name\"].endswith(\"[kernel]\")]
R = \"read [libc.so.6]\"
def split(path):
    own = 0; kern = 0; user = {}
    for line in open(path):
        st, n = line.rsplit(\" \", 1); fr = st.split(\";\"); n = int(n)
        if R not in fr: continue
        i = len(fr) - 1 - fr[::-1].index(R); rest = fr[i + 1:]
        if not rest: own += n
        elif rest[0].endswith(\"[kernel]\"): kern += n
        else: user[\";\".join(rest)] = user.get(\";\".join(rest), 0) + n
    return own, kern, user
uo, uk, uu = split(\"u.folded\"); ko, kk, ku = split(\"kk.folded\")
# a sample whose stack has no user frame at all (a kernel stack under a
# cut marker: the user stack could not be walked) has a place only with
# --kernel; without it, no frame holds it.  Known defect, not yet fixed:
# a page fault in the loader call_init (a constructor first touching a page)
# is in the stacks but in no user pc of the flat profile, and also counts
# only with --kernel (3 of 8 runs had one such sample): allowed, 2 at most
bare = sum(int(l.rsplit(\" \", 1)[1]) for l in open(\"kk.folded\")
           if all(f.endswith(\"[kernel]\") or f in (\"[truncated]\", \"[unknown]\") for f in l.rsplit(\" \", 1)[0].split(\";\")))
print(\"kernel names:\", bad, \"read own without:\", uo, \"with: own\", ko, \"kernel\", kk, \"user callees:\", uu, ku)
print(\"totals:\", u[\"total_seconds\"], k[\"total_seconds\"], \"kernel-only stacks:\", bare)
sys.exit(bool(bad) or uk != 0 or kk == 0 or uo != ko + kk or uu != ku or uo < 0.2 * sum(uu.values()) + 10 or
         not (-1e-9 <= k[\"total_seconds\"] - u[\"total_seconds\"] - bare / u[\"rate\"] <= 2 / u[\"rate\"] + 1e-9))'
"
test_expect "--kernel: read's inclusive time is the same with and without the kernel's frames" "
    python3 -c 'import json,sys
u = json.load(open(\"u.json\")); k = json.load(open(\"k.json\"))
a = {x[\"name\"]: x[\"inclusive_seconds\"] for x in u[\"functions\"]}
b = {x[\"name\"]: x[\"inclusive_seconds\"] for x in k[\"functions\"]}
print(a[\"read [libc.so.6]\"], b[\"read [libc.so.6]\"], a[\"burn\"], b[\"burn\"])
sys.exit(abs(a[\"read [libc.so.6]\"] - b[\"read [libc.so.6]\"]) > 1e-9 or abs(a[\"burn\"] - b[\"burn\"]) > 1e-9)'
"
# a profile of another boot: kernel addresses are not named from this one's
# kallsyms (the boot id in the KERNEL record changed)
test_expect "a profile from another boot: said once, its kernel frames named [kernel]" "
    python3 -c 'import sys
b = bytearray(open(\"k.data\", \"rb\").read())
i = b.find(open(\"/proc/sys/kernel/random/boot_id\").read().strip().encode())
assert i > 0
b[i] = ord(\"0\") if b[i] != ord(\"0\") else ord(\"1\")
open(\"other.data\", \"wb\").write(b)' &&
    $CGPROF report --kernel -p -b other.data >flat 2>err; cat err &&
    grep -q 'note: the kernel.s functions are not named: it was recorded in another boot' err &&
    test \$(grep -c 'not named' err) -eq 1 && grep -q ' \[kernel\]\$' flat && ! grep -q read_zero flat
"
test_expect "report --kernel on a profile recorded without it: said" "
    $CGPROF record -o plain.data ./kread >/dev/null 2>&1 &&
    $CGPROF report --kernel -p plain.data >/dev/null 2>err; cat err &&
    grep -q 'recorded without kernel frames' err
"
# an ordinary user where kernel samples are not permitted: record says so
if [ "$level" -gt 1 ] && [ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null 2>&1 &&
    id nobody >/dev/null 2>&1; then
    chmod 755 "$WORK" && mkdir -p nb && chmod 777 nb
    test_expect "as nobody (perf_event_paranoid $level): record --kernel says why there are no kernel frames" "
        (cd nb && runuser -u nobody -- $CGPROF_REAL record --kernel -o n.data ../kread >/dev/null 2>err); cat nb/err &&
        grep -q 'note: --kernel: no kernel frames: perf_event_paranoid is $level here' nb/err &&
        $CGPROF report --kernel -p nb/n.data >/dev/null 2>err2; cat err2 && grep -q 'has no kernel frames: the kernel did not permit' err2
    "
fi
test_done

#!/bin/sh
# t0267: inlined frames.  tests/progs/inlined.c at -O2 -g -pg does its hot
# work in inner(), inlined into middle(), inlined into work() (the DWARF
# says so: DW_TAG_inlined_subroutine entries for both, and neither is a
# symbol).  `cgprof export -f folded --inline` expands each sampled frame
# into its inline chain: work;middle;inner, outermost first, with the
# shares the program measures of itself and the shares perf's samples get
# when binutils' addr2line -i names their innermost function.  Without
# --inline, and where there is no DWARF, the stacks are as before.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { test_skip "t0267" "no python3"; test_done; exit; }
gcc -O2 -g -pg -no-pie "$PROGS/inlined.c" -o "$WORK/inlined" || exit 1
cd "$WORK" || exit 1
$CGPROF record -o in.data ./inlined >truth || exit 1
$CGPROF_REAL export -f folded in.data >plain.folded || exit 1
$CGPROF_REAL export -f folded --inline in.data >inl.folded || exit 1
cd - >/dev/null || exit 1

test_expect "the DWARF has inner and middle as inlined copies, not functions" "
    ! nm inlined | grep -Eq ' (inner|middle)\$' &&
    objdump --dwarf=info inlined | python3 -c '
import re, sys
name, origin_of, cur = {}, [], None
for l in sys.stdin:
    m = re.match(r\"\\s*<\\d+><([0-9a-f]+)>: Abbrev Number: \\d+ \\((\\w+)\\)\", l)
    if m:
        cur = (int(m.group(1), 16), m.group(2))
        continue
    m = re.search(r\"DW_AT_name\\s*:.*?(\\w+)\\s*\$\", l)
    if m and cur:
        name[cur[0]] = m.group(1)
    m = re.search(r\"DW_AT_abstract_origin: <0x([0-9a-f]+)>\", l)
    if m and cur and cur[1] == \"DW_TAG_inlined_subroutine\":
        origin_of.append(int(m.group(1), 16))
got = sorted({name.get(o, \"?\") for o in origin_of} & {\"inner\", \"middle\"})
print(got)
sys.exit(got != [\"inner\", \"middle\"])
'
"

# shares of the samples in work (and what is inlined into it), by the
# innermost frame; the program's clocks: work_ms middle_ms inner_ms total
shares_py='
import sys
def shares(path):
    c = {\"work\": 0, \"middle\": 0, \"inner\": 0}
    for l in open(path):
        stack, n = l.rsplit(\" \", 1)
        f = stack.split(\";\")
        if \"work\" in f:
            c[f[-1] if f[-1] in c else \"work\"] += int(n)
    t = sum(c.values())
    return {k: 100.0 * v / t for k, v in c.items()}, t
'

test_expect "folded --inline: work;middle;inner, each with its own time (program's clocks)" "
    python3 -c \"$shares_py
s, t = shares('inl.folded')
w, m, i, tot = [float(x) for x in open('truth').read().split()]
want = {'work': 100 * (w - m) / w, 'middle': 100 * (m - i) / w, 'inner': 100 * i / w}
print(s, want, t)
bad = [k for k in want if abs(s[k] - want[k]) > 5]
chains = [l.rsplit(' ', 1)[0] for l in open('inl.folded') if 'inner' in l]
bad += [c for c in chains if not c.endswith(';main;work;middle;inner')]
print(bad)
sys.exit(1 if bad or t < 200 else 0)
\"
"

# (libc6-dbg, where installed, gives libc's own frames inline chains too:
# the stacks compared frame by frame are those through work)
test_expect "folded --inline: the same samples as without it, in the same outer stacks" "
    python3 -c \"
import sys
def outer(path):
    d, t = {}, 0
    for l in open(path):
        stack, n = l.rsplit(' ', 1)
        t += int(n)
        f = [x for x in stack.split(';') if x not in ('middle', 'inner')]
        if f[-1] == 'work':
            d[';'.join(f)] = d.get(';'.join(f), 0) + int(n)
    return d, t
(a, ta), (b, tb) = outer('plain.folded'), outer('inl.folded')
print(a, b, ta, tb)
sys.exit(a != b or ta != tb or sum(a.values()) < 200)
\" &&
    ! grep -Eq 'middle|inner' plain.folded
"

if command -v perf >/dev/null && command -v addr2line >/dev/null &&
    (cd "$WORK" && perf record -q -e cpu-clock:u -o perf.data ./inlined >/dev/null 2>&1); then
    test_expect "folded --inline agrees with perf's samples named by addr2line -i (5 points)" "
        perf script -i perf.data -F ip --comm inlined 2>/dev/null | sed 's/^ */0x/' >ips &&
        addr2line -a -f -i -e inlined \$(cat ips) >a2l &&
        python3 -c \"$shares_py
inner_of = {}
fn = []
for l in open('a2l').read().split('\\n'):
    if l.startswith('0x'):
        fn = inner_of.setdefault(l, [])
    elif l and ':' not in l:
        fn.append(l)
# addr2line -i: innermost function first, then those it is inlined into
c = {'work': 0, 'middle': 0, 'inner': 0}
for ip in open('ips').read().split():
    names = inner_of.get('0x%016x' % int(ip, 16), [])
    if names and names[-1] == 'work' and names[0] in c:
        c[names[0]] += 1
t = sum(c.values())
p = {k: 100.0 * v / t for k, v in c.items()}
s, n = shares('inl.folded')
print('perf', p, t, 'cgprof', s, n)
sys.exit(1 if t < 200 or any(abs(p[k] - s[k]) > 5 for k in c) else 0)
\"
    "
else
    test_skip "folded --inline agrees with perf's samples named by addr2line -i" "perf cannot record here"
fi

if command -v go >/dev/null; then
    # go tool pprof -top: flat and cum in milliseconds, 1 ms a sample here
    test_expect "pprof --inline: go tool pprof -top gives folded's inner, middle, work exactly" "
        $CGPROF_REAL export -f pprof --inline -o inl.pb.gz in.data &&
        go tool pprof -top -unit=ms inl.pb.gz >top &&
        python3 -c \"
import re, sys
f = {}
for l in open('inl.folded'):
    stack, n = l.rsplit(' ', 1)
    fr = stack.split(';')
    for k in ('work', 'middle', 'inner'):
        if k in fr:
            f.setdefault(k, [0, 0])[1] += int(n)
            if fr[-1] == k:
                f[k][0] += int(n)
got = {}
for l in open('top'):
    m = re.match(r'\\s*([\\d.]+)ms\\s+\\S+\\s+\\S+\\s+([\\d.]+)ms\\s+\\S+\\s+(\\w+)( \\(inline\\))?\\s*\$', l)
    if m and m.group(3) in f:
        got[m.group(3)] = [float(m.group(1)), float(m.group(2)), bool(m.group(4))]
want = {k: [float(v[0]), float(v[1]), k != 'work'] for k, v in f.items()}
print(got, want)
sys.exit(got != want)
\"
    "
    test_expect "pprof --inline: go tool pprof -lines names inner's and middle's own lines" "
        go tool pprof -top -lines inl.pb.gz >lines &&
        ir=\$(awk '/inner\(long n\)/ { s = NR } s && /^}/ { print s \"-\" NR; exit }' $PROGS/inlined.c) &&
        mr=\$(awk '/middle\(long n\)/ { s = NR } s && /^}/ { print s \"-\" NR; exit }' $PROGS/inlined.c) &&
        echo \$ir \$mr && grep -E ' (inner|middle) ' lines >il &&
        test \$(grep -c 'inner .*inlined.c:' il) -ge 1 && test \$(grep -c 'middle .*inlined.c:' il) -ge 1 &&
        awk -v ir=\$ir -v mr=\$mr '{
            split(\$NF == \"(inline)\" ? \$(NF-1) : \$NF, a, \":\"); split(\$6 == \"inner\" ? ir : mr, r, \"-\")
            if (\$NF != \"(inline)\" || a[2] + 0 < r[1] + 0 || a[2] + 0 > r[2] + 0) { print \"bad: \" \$0; bad = 1 }
        } END { exit bad }' il
    "
else
    test_skip "pprof --inline checked with go tool pprof" "no go"
fi

test_expect "no DWARF: --inline changes nothing" "
    strip -g inlined -o inlined.nodw &&
    $CGPROF record -o nodw.data ./inlined.nodw >/dev/null &&
    $CGPROF_REAL export -f folded nodw.data >nodw.plain &&
    $CGPROF_REAL export -f folded --inline nodw.data >nodw.inl &&
    grep ';work [0-9]*\$' nodw.plain >a && grep ';work [0-9]*\$' nodw.inl >b &&
    test \$(wc -l <a) -gt 0 && diff a b && ! grep -Eq 'middle|inner' nodw.inl
"

test_expect "--inline with another format: a clear usage error" "
    ! $CGPROF_REAL export -f dot --inline -o x.out in.data 2>err &&
    grep -q 'inline.*folded, pprof, callgrind and html' err && ! test -e x.out
"

test_done

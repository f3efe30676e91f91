#!/bin/sh
# t0268: inlined frames in the callgrind and html exports.  tests/progs/inlined.c at
# -O2 -g -pg: inner() inlined into middle() inlined into work();
# tests/progs/inlhdr.c: hdr_sum() of inlhdr.h inlined into outer().  With
# `cgprof export -f callgrind --inline` each inlined function is an fn=
# of its own file, called from where the DWARF says it was inlined, and
# callgrind_annotate gives it the samples folded --inline gives it (and
# the shares the programs measure of themselves); the -pg calls made from
# inlined code are the inlined function's.  The html page's data has the
# same functions, marked inlined, and the same calls; Chromium's flat
# profile shows them.  report --json gives each stack frame the inline
# chain binutils' addr2line -i gives its address.  Without DWARF nothing changes
# (libc6-dbg, where installed, gives libc's own code inline chains: the
# program's functions are compared).
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { test_skip "t0268" "no python3"; test_done; exit; }
command -v callgrind_annotate >/dev/null || { test_skip "t0268" "no callgrind_annotate"; test_done; exit; }
gcc -O2 -g -pg -no-pie "$PROGS/inlined.c" -o "$WORK/inlined" || exit 1
gcc -O2 -g -pg -no-pie -I"$PROGS" "$PROGS/inlhdr.c" -o "$WORK/inlhdr" || exit 1
cd "$WORK" || exit 1
$CGPROF record -o in.data ./inlined >truth || exit 1
$CGPROF_REAL export -f folded --inline in.data >inl.folded || exit 1
$CGPROF_REAL export -f callgrind --inline -o inl.cg in.data || exit 1
$CGPROF_REAL export -f callgrind -o plain.cg in.data || exit 1
cd - >/dev/null || exit 1
# the lines where middle and inner are inlined
ml=$(grep -n 's += middle(n);' "$PROGS/inlined.c" | cut -d: -f1)
il=$(grep -n 's += inner(2 \* n);' "$PROGS/inlined.c" | cut -d: -f1)

# self and inclusive samples per function from callgrind_annotate
ca_py='
import re, subprocess, sys
def annotate(path, incl):
    out = subprocess.run([\"callgrind_annotate\", \"--inclusive=\" + (\"yes\" if incl else \"no\"),
                          \"--threshold=100\", path], capture_output=True, text=True).stdout
    d = {}
    for l in out.split(\"\\n\"):
        m = re.match(r\"\\s*([\\d,]+)\\s.*?:(\\w+)( \\[.*\\])?\\s*\$\", l)
        if m and \"file:function\" not in l:
            d[m.group(2)] = int(m.group(1).replace(\",\", \"\"))
    return d
def folded(path, names):
    s, c = {k: 0 for k in names}, {k: 0 for k in names}
    for l in open(path):
        stack, n = l.rsplit(\" \", 1)
        fr = stack.split(\";\")
        for k in names:
            if k in fr:
                c[k] += int(n)
        if fr[-1] in s:
            s[fr[-1]] += int(n)
    return s, c
'

test_expect "callgrind --inline: callgrind_annotate's self and inclusive are folded --inline's, exactly" "
    python3 -c \"$ca_py
names = ('work', 'middle', 'inner')
s, c = folded('inl.folded', names)
a, i = annotate('inl.cg', False), annotate('inl.cg', True)
got = ({k: a.get(k) for k in names}, {k: i.get(k) for k in names})
print(got, (s, c))
sys.exit(got != (s, c) or c['work'] < 200)
\"
"

test_expect "callgrind --inline: inner, middle, work self shares as the program's clocks (5 points)" "
    python3 -c \"$ca_py
a = annotate('inl.cg', False)
w, m, i, tot = [float(x) for x in open('truth').read().split()]
want = {'work': 100 * (w - m) / w, 'middle': 100 * (m - i) / w, 'inner': 100 * i / w}
t = sum(a[k] for k in want)
got = {k: 100.0 * a[k] / t for k in want}
print(got, want)
sys.exit(any(abs(got[k] - want[k]) > 5 for k in want))
\"
"

test_expect "callgrind --inline: same total; inlined functions on their own lines, called at their call sites" "
    grep -q '^summary: ' inl.cg && test \"\$(grep '^summary: ' inl.cg)\" = \"\$(grep '^summary: ' plain.cg)\" &&
    ir=\$(awk '/inner\(long n\)/ { s = NR } s && /^}/ { print s \"-\" NR; exit }' $PROGS/inlined.c) &&
    mr=\$(awk '/middle\(long n\)/ { s = NR } s && /^}/ { print s \"-\" NR; exit }' $PROGS/inlined.c) &&
    python3 -c \"
import sys
fn, cfn, after_calls, bad, lines = None, None, False, [], {}
ml, il = \$ml, \$il
lo, hi = [int(x) for x in '\$ir'.split('-')]
mlo, mhi = [int(x) for x in '\$mr'.split('-')]
for l in open('inl.cg').read().split('\\n'):
    if l.startswith('fn='):
        fn, cfn = l[3:], None
    elif l.startswith('cfn='):
        cfn = l[4:]
    elif l.startswith('calls='):
        after_calls = True
        # the callee's first line: in its own body
        r = {'inner': (lo, hi), 'middle': (mlo, mhi)}.get(cfn)
        if r and not r[0] <= int(l.split()[1]) <= r[1]:
            bad.append((cfn, 'first line', l))
    elif l and l[0].isdigit():
        pos = int(l.split()[0])
        if after_calls and (fn, cfn) in (('work', 'middle'), ('middle', 'inner')):
            want = ml if cfn == 'middle' else il
            if pos != want:
                bad.append((fn, cfn, pos, want))
            lines[(fn, cfn)] = pos
        elif not after_calls and fn == 'inner' and int(l.split()[1]) > 0 and not lo <= pos <= hi:
            bad.append(('inner line', pos))
        after_calls = False
print(lines, bad)
sys.exit(bad or len(lines) != 2)
\"
"

test_expect "callgrind --inline: cpu_ms's -pg calls 16 from work and 16 from inlined middle (32 in all)" "
    python3 -c \"
import sys
def calls(path):
    fn, cfn, d = None, None, {}
    for l in open(path).read().split('\\n'):
        if l.startswith('fn='):
            fn = l[3:]
        elif l.startswith('cfn='):
            cfn = l[4:]
        elif l.startswith('calls=') and cfn == 'cpu_ms':
            d[fn] = int(l[6:].split()[0])
    return d
a, b = calls('plain.cg'), calls('inl.cg')
print(a, b)
sys.exit(a.get('work') != 32 or b.get('work') != 16 or b.get('middle') != 16 or a.get('main') != b.get('main'))
\"
"

test_expect "callgrind --inline: a header's inline function is an fn= of the header, on its own lines" "
    cd $WORK && $CGPROF record -o h.data ./inlhdr >htruth &&
    $CGPROF_REAL export -f callgrind --inline -o h.cg h.data && cd - >/dev/null &&
    hr=\$(awk '/hdr_sum\(long n\)/ { s = NR } s && /^}/ { print s \"-\" NR; exit }' $PROGS/inlhdr.h) &&
    python3 -c \"$ca_py
import os
lo, hi = [int(x) for x in '\$hr'.split('-')]
fl, fn, bad, self = None, None, [], 0
for l in open('h.cg').read().split('\\n'):
    if l.startswith('fl='):
        fl = l[3:]
    elif l.startswith('fn='):
        fn = l[3:]
        if fn == 'hdr_sum' and os.path.basename(fl) != 'inlhdr.h':
            bad.append(('file', fl))
    elif l.startswith('c'):
        fn = None if fn == 'hdr_sum' else fn
    elif fn == 'hdr_sum' and l and l[0].isdigit():
        pos, n = [int(x) for x in l.split()[:2]]
        self += n
        if n and not lo <= pos <= hi:
            bad.append(('line', pos))
o, h = [float(x) for x in open('htruth').read().split()]
a = annotate('h.cg', True)
share, want = 100.0 * a['hdr_sum'] / a['outer'], 100 * h / o
print(self, a, share, want, bad)
sys.exit(bad or self != a['hdr_sum'] or self < 100 or abs(share - want) > 5)
\"
"

test_expect "html --inline: the page's data has folded's inner, middle, work, marked inlined, and the calls moved" "
    $CGPROF_REAL export -f html --inline -o inl.html in.data &&
    python3 -c \"$ca_py
import json, re
d = json.loads(re.search(r'<script id=\\\"cgprof-data\\\" type=\\\"application/json\\\">(.*?)</script>',
                         open('inl.html').read(), re.S).group(1))
F = d['f']
names = ('work', 'middle', 'inner')
s, c = folded('inl.folded', names)
got = {x[0]: (x[1], x[2], len(x) > 6 and x[6] == 1) for x in F if x[0] in names}
want = {k: (s[k], c[k], k != 'work') for k in names}
a = d['a']
calls = {(F[a[i]][0], F[a[i + 1]][0]): a[i + 2] for i in range(0, len(a), 4)}
cm = (calls.get(('work', 'cpu_ms')), calls.get(('middle', 'cpu_ms')), calls.get(('work', 'middle')))
tot = sum(l.rsplit(' ', 1)[1] and int(l.rsplit(' ', 1)[1]) for l in open('inl.folded'))
print(got, want, cm, d['total'], tot, sum(x[1] for x in F))
sys.exit(got != want or cm != (16, 16, None) or d['total'] != tot or sum(x[1] for x in F) != tot)
\"
"

if command -v chromium >/dev/null; then
    test_expect "html --inline: Chromium's flat profile lists inner and middle as inlined" "
        cd $WORK && chromium --headless --no-sandbox --disable-gpu --window-size=1200,800 \
            --dump-dom \"file://\$PWD/inl.html#view=flat\" 2>/dev/null >dom && cd - >/dev/null &&
        grep -q '<tr data-fn=\"inner\"><td class=\"name\"><a href=\"#\" data-id=\"[0-9]*\">inner</a><span class=\"inl\"> (inlined)</span></td>' $WORK/dom &&
        grep -q '<tr data-fn=\"middle\"><td class=\"name\"><a [^>]*>middle</a><span class=\"inl\"> (inlined)</span></td>' $WORK/dom &&
        grep -q '<tr data-fn=\"work\"><td class=\"name\"><a [^>]*>work</a></td>' $WORK/dom
    "
else
    test_skip "html --inline: Chromium's flat profile" "no chromium"
fi

test_expect "report --json: each stack frame's inline chain is addr2line -i's, and inner, middle, work get folded's samples" "
    cd $WORK && $CGPROF_REAL report --json in.data >in.json && cd - >/dev/null &&
    python3 -c \"
import json, subprocess, sys
d = json.load(open('in.json'))
nodes = [n for n in d['stacks']['nodes'] if n.get('function') == 'work']
addrs = sorted({n['address'] for n in nodes})
out = subprocess.run(['addr2line', '-a', '-f', '-i', '-e', 'inlined'] + addrs, capture_output=True,
                     text=True).stdout.split('\\n')
a2l, cur = {}, None
for l in out:
    if l.startswith('0x'):
        cur = a2l.setdefault(int(l, 16), [])
    elif l and ':' not in l:
        cur.append(l)
bad, c = [], {'work': 0, 'middle': 0, 'inner': 0}
for n in nodes:
    got = [x['function'] for x in n.get('inlined', [])][::-1] + ['work']
    if got != a2l[int(n['address'], 16)]:
        bad.append((n['address'], got, a2l[int(n['address'], 16)]))
    c[got[0]] += n['count']
    calls = [(x['function'], x['call_line']) for x in n.get('inlined', [])]
    if calls and calls[0] != ('middle', \$ml) or len(calls) > 1 and calls[1] != ('inner', \$il):
        bad.append(calls)
want = {}
for l in open('inl.folded'):
    stack, k = l.rsplit(' ', 1)
    f = stack.split(';')
    if 'work' in f and f[-1] in c:
        want[f[-1]] = want.get(f[-1], 0) + int(k)
print(c, want, len(nodes), bad[:5])
sys.exit(bad or c != want or sum(1 for n in nodes if n.get('inlined')) < 3)
\"
"

test_expect "no DWARF: callgrind --inline is callgrind without it" "
    strip -g inlined -o inlined.nodw &&
    $CGPROF record -o nodw.data ./inlined.nodw >/dev/null &&
    $CGPROF_REAL export -f callgrind -o nodw.plain nodw.data &&
    $CGPROF_REAL export -f callgrind --inline -o nodw.inl nodw.data &&
    grep -q 'fn=work' nodw.inl && ! grep -Eq 'middle|inner' nodw.inl &&
    awk -v RS= '/\\nfn=(main|work|cpu_ms)\\n/' nodw.plain >a && awk -v RS= '/\\nfn=(main|work|cpu_ms)\\n/' nodw.inl >b &&
    test \$(grep -c '^fn=' a) = 3 && grep '^summary' nodw.plain >>a && grep '^summary' nodw.inl >>b && diff a b
"

test_done

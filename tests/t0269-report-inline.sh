#!/bin/sh
# t0269: report --inline (issue 19 item 6): the functions inlined into
# sampled code are entries of the flat profile and the call graph, NAME
# [inlined].  tests/progs/inlined.c at -O2 -g -pg: inner() inlined into
# middle() inlined into work(); the program measures each one's CPU time
# itself, and its structure fixes the calls: 8 work() calls, each calling
# cpu_ms() twice itself and twice from the inlined middle(); main calls it
# 18 times.  Truths: the program's clocks (shares within 5 points), its
# known call counts, and folded --inline (the export's samples per
# function, which t0267 checks against perf and addr2line -i).  Without
# --inline, and without DWARF, the program's functions are as before.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { test_skip "t0269" "no python3"; test_done; exit; }
gcc -O2 -g -pg -no-pie "$PROGS/inlined.c" -o "$WORK/inlined" || exit 1
gcc -O2 -pg -no-pie "$PROGS/inlined.c" -o "$WORK/nodwarf" || exit 1
cd "$WORK" || exit 1
$CGPROF record -o in.data ./inlined >truth || exit 1
$CGPROF record -o nd.data ./nodwarf 3000000 >/dev/null || exit 1
$CGPROF report --inline in.data >inl.txt 2>inl.err || exit 1
$CGPROF report in.data >plain.txt 2>/dev/null || exit 1
$CGPROF_REAL export -f folded --inline in.data >inl.folded || exit 1
cd - >/dev/null || exit 1
PY="import sys; sys.path.insert(0, '$ROOT/tests'); import report_inline as r"

test_expect "flat profile: inner, middle [inlined] and work with the program's shares (5 points)" "
    python3 -c \"$PY
f = r.flat('inl.txt')
w, m, i, tot = [float(x) for x in open('truth').read().split()]
got = {k: f.get(k + n, (0, 0, 0))[0] for k, n in (('work', ''), ('middle', ' [inlined]'), ('inner', ' [inlined]'))}
s = sum(got.values())
got = {k: 100 * v / s for k, v in got.items()}
want = {'work': 100 * (w - m) / w, 'middle': 100 * (m - i) / w, 'inner': 100 * i / w}
print(got, want, s)
sys.exit(1 if s < 90 or any(abs(got[k] - want[k]) > 5 for k in want) else 0)
\"
"

test_expect "flat profile's % time per function is folded --inline's self samples (to the last digit)" "
    python3 -c \"$PY
f = r.flat('inl.txt')
s, i, t = r.folded('inl.folded')
bad = []
for k in ('work', 'middle', 'inner', 'main', 'cpu_ms'):
    name = k + (' [inlined]' if k in ('middle', 'inner') else '')
    pct = f.get(name, (0.0,))[0]
    want = 100.0 * s.get(k, 0) / t
    if abs(pct - want) > 0.006:
        bad.append((name, pct, want))
print(bad, t)
sys.exit(1 if bad or t < 200 else 0)
\"
"

test_expect "call graph: work -> middle [inlined] -> inner [inlined], % time = inclusive samples of folded --inline" "
    python3 -c \"$PY
g = r.graph('inl.txt')
s, i, t = r.folded('inl.folded')
mid, inn = g['middle [inlined]'], g['inner [inlined]']
print(mid, inn, i.get('middle'), i.get('inner'), t)
ok = [p for p, _ in mid['parents']] == ['work'] and [p for p, _ in inn['parents']] == ['middle [inlined]']
ok = ok and ('inner [inlined]', None) in mid['children']
ok = ok and abs(mid['pct'] - 100.0 * i['middle'] / t) <= 0.06 and abs(inn['pct'] - 100.0 * i['inner'] / t) <= 0.06
ok = ok and abs(g['work']['pct'] - 100.0 * i['work'] / t) <= 0.06
sys.exit(0 if ok else 1)
\"
"

test_expect "call graph: cpu_ms's calls, 16 from middle [inlined], 16 from work, 18 from main (the program's structure)" "
    python3 -c \"$PY
g = r.graph('inl.txt')
p = dict(g['cpu_ms']['parents'])
print(p)
sys.exit(p != {'middle [inlined]': '16/50', 'work': '16/50', 'main': '18/50'})
\" &&
    grep -Eq '^ +[0-9.]+ +[0-9.]+ +[0-9.]+ +8 +[0-9.]+ +[0-9.]+ +work\$' inl.txt
"

test_expect "without --inline: work holds middle's and inner's time, no [inlined] entry" "
    ! grep -q '\[inlined\]' plain.txt &&
    python3 -c \"$PY
f = r.flat('plain.txt')
s, i, t = r.folded('inl.folded')
w = f['work'][0]
want = 100.0 * (s['work'] + s['middle'] + s['inner']) / t
print(w, want)
sys.exit(abs(w - want) > 0.006)
\"
"

# (libc6-dbg, where installed, gives libc's and the loader's own code
# inlined functions: the program's functions are compared)
test_expect "without DWARF: the program's functions are as without --inline" "
    $CGPROF_REAL report -b --inline nd.data >nd-inl.txt 2>nd.err &&
    $CGPROF_REAL report -b nd.data >nd.txt 2>/dev/null &&
    ! grep -Eq 'middle|inner' nd-inl.txt &&
    sed '/Call graph/q' nd.txt | grep -E ' (work|main|cpu_ms)\$' >a &&
    sed '/Call graph/q' nd-inl.txt | grep -E ' (work|main|cpu_ms)\$' >b &&
    [ \$(wc -l <a) -eq 3 ] && cmp a b
"

# the same code in a -pg shared library: its inlined functions are named
# for their module, as its other functions are ("NAME [libinl.so]"), in
# the report and in the exports, and keep the program's shares
test_expect "in a shared library: middle [inlined] [libinl.so], inner [inlined] [libinl.so], with the program's shares; folded: middle [libinl.so]" "
    gcc -O2 -g -pg -fPIC -shared -Dmain=inl_main '$PROGS/inlined.c' -o libinl.so &&
    printf 'int inl_main(int, char **);\\nint main(int c, char **v) { return inl_main(c, v); }\\n' >drv.c &&
    gcc -O2 -g -pg drv.c -o drv -L. -linl -Wl,-rpath,\\\$ORIGIN &&
    $CGPROF record -o lib.data ./drv >ltruth && $CGPROF_REAL report --inline lib.data >lib.txt 2>/dev/null &&
    $CGPROF_REAL export -f folded --inline lib.data >lib.folded &&
    ! grep -Eq '(middle|inner) \\[inlined\\]\$' lib.txt &&
    python3 -c \"$PY
f = r.flat('lib.txt')
g = r.graph('lib.txt')
s, i, t = r.folded('lib.folded')
w, m, n, tot = [float(x) for x in open('ltruth').read().split()]
L = ' [libinl.so]'
got = {k: f.get(k + x + L, (0, 0, 0))[0] for k, x in (('work', ''), ('middle', ' [inlined]'), ('inner', ' [inlined]'))}
u = sum(got.values())
got = {k: 100 * v / u for k, v in got.items()}
want = {'work': 100 * (w - m) / w, 'middle': 100 * (m - n) / w, 'inner': 100 * n / w}
par = [p for p, _ in g['inner [inlined]' + L]['parents']]
print(got, want, u, par, s.get('middle' + L), s.get('inner' + L))
ok = u >= 90 and all(abs(got[k] - want[k]) <= 5 for k in want) and par == ['middle [inlined]' + L]
ok = ok and s.get('inner' + L, 0) > 0 and s.get('middle' + L, 0) > 0 and 'inner' not in s and 'middle' not in s
sys.exit(0 if ok else 1)
\"
"

test_expect "--inline with -l or --json: a one-line error, exit 2" "
    { $CGPROF_REAL report --inline -l in.data >o 2>e; [ \$? -eq 2 ]; } && [ \$(wc -l <e) -eq 1 ] &&
    grep -q -- '--inline' e && [ ! -s o ] &&
    { $CGPROF_REAL report --inline --json in.data >o 2>e; [ \$? -eq 2 ]; } && [ \$(wc -l <e) -eq 1 ]
"

test_expect "--inline on a gmon.out: a note, and the report as without it" "
    gcc -O2 -g -pg -no-pie '$PROGS/inlined.c' -o gi && ./gi 2000000 >/dev/null &&
    $CGPROF_REAL report -b --inline gi gmon.out >g1 2>ge && $CGPROF_REAL report -b gi gmon.out >g2 &&
    cmp g1 g2 && grep -q 'note: --inline' ge
"

test_done

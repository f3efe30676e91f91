#!/bin/sh
# t0262: with sampled stacks, cgprof report measures the call graph's times
# instead of estimating them from call counts.  The profiles are written by
# tests/unit/stackgen.c for the real -pg program tests/progs/stacks.c, with
# stacks and counts chosen here, so every expected time is exact by
# construction (1 sample = 1 ms):
#   mid: 10 samples under cheap, 90 + 5 (a cut stack) under dear -- a
#   10/95 split the call counts (100/100) cannot show; cmp under libc's
#   qsort (no -pg: the sorter -> qsort arc has no count); a ping/pong
#   cycle with leafwork below pong; fact recursing into itself; a counted
#   call from libc's qsort_r, never sampled.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { test_skip "t0262" "no python3"; test_done; exit; }
LIBC=$(ldd /bin/true | awk '$1 == "libc.so.6" { print $3 }')
cc -std=c11 -O2 -Wall -Wextra "$ROOT/tests/unit/stackgen.c" -o "$WORK/stackgen" &&
gcc -O2 -pg -no-pie "$PROGS/stacks.c" -o "$WORK/stacks" || exit 1

cd "$WORK" || exit 1
{
    echo "module 1 1 $WORK/stacks"
    echo "module 2 0 $LIBC"
    nm --defined-only stacks | awk '$2 ~ /^[tT]$/ { print "sym 1", $3, $1 }'
    nm -D --defined-only "$LIBC" | awk '{ sub(/@.*/, "", $3) } $3 == "qsort" || $3 == "qsort_r" { print "sym 2", $3, $1 }'
    cat <<'EOF'
depth 64
arc main cheap 100
arc main dear 100
arc cheap mid 100
arc dear mid 100
arc main sorter 1
arc 2:qsort cmp 5000
arc main ping 10
arc ping pong 30
arc pong ping 20
arc pong leafwork 10
arc 2:qsort_r leafwork 2
arc main fact 1
arc fact fact 9
stack 10 mid cheap main
stack 90 mid dear main
stack 5 cheap main
stack 5 dear main
stack 40 cmp 2:qsort sorter main
stack 10 2:qsort sorter main
stack 10 sorter main
stack 20 ping pong ping main
stack 10 pong ping main
stack 10 ping main
stack 10 leafwork pong ping main
stack 30 fact fact fact main
stack 10 fact main
stack 10 main
stack 5 mid dear cut
EOF
} >spec
cd - >/dev/null || exit 1

# json_check PYTHON: runs PYTHON with d = the report's JSON; it prints what
# differs and exits non-zero on a mismatch.  ms(x) turns seconds to samples.
json_check() {
    $CGPROF report --json s.data >j 2>/dev/null && python3 -c "
import json, sys
d = json.load(open('j'))
ms = lambda x: round(x * 1000)
fn = {f['name']: f for f in d['functions']}
arc = {(a['caller'], a['callee']): a for a in d['arcs']}
bad = []
def want(what, got, exp):
    if got != exp:
        bad.append('%s: got %r, want %r' % (what, got, exp))
$1
print('\n'.join(bad)); sys.exit(1 if bad else 0)
"
}

# The spec's stacks (innermost first) folded outermost first, as
# tests/stacks.py -- a reader independent of cgprof's, naming frames with
# nm; libc has only dynamic symbols, so its frames are [libc.so.6] -- must
# find them in the written profile, and none in the one without stacks.
awk '$1 == "stack" { s = ""; for (i = NF; i >= 3; i--) { f = $i; sub(/^2:.*/, "[libc.so.6]", f);
        if (f == "cut") f = "[cut]"; s = s (s == "" ? "" : ";") f } n[s] += $2 }
     END { for (k in n) print k, n[k] }' "$WORK/spec" | sort >"$WORK/spec.folded"
test_expect "the profiles are written: the independent reader finds exactly the spec's stacks" "
    ./stackgen s.data <spec && ./stackgen n.data nostacks <spec &&
    python3 $ROOT/tests/stacks.py s.data >s.folded && grep -v '^#' s.folded | sort >s.sorted &&
    diff -u spec.folded s.sorted &&
    python3 $ROOT/tests/stacks.py n.data >n.folded && cat n.folded &&
    test \"\$(cat n.folded)\" = '# no stacks'
"

test_expect "inclusive time: each function's samples, once per stack (recursion included)" "
    json_check \"
want('times', d['times'], 'measured')
for name, incl in [('main', 270), ('mid', 105), ('dear', 100), ('cheap', 15), ('sorter', 60),
                   ('qsort [libc.so.6]', 50), ('cmp', 40), ('ping', 50), ('pong', 40),
                   ('leafwork', 10), ('fact', 40)]:
    want(name + ' inclusive', ms(fn[name]['inclusive_seconds']), incl)
\"
"

test_expect "caller split measured: mid 10 under cheap, 95 under dear (counts say 100/100)" "
    json_check \"
want('cheap->mid', (ms(arc['cheap','mid']['self_seconds']), ms(arc['cheap','mid']['child_seconds'])), (10, 0))
want('dear->mid', (ms(arc['dear','mid']['self_seconds']), ms(arc['dear','mid']['child_seconds'])), (95, 0))
want('main->dear', (ms(arc['main','dear']['self_seconds']), ms(arc['main','dear']['child_seconds'])), (5, 90))
want('main->ping (into the cycle)', (ms(arc['main','ping']['self_seconds']), ms(arc['main','ping']['child_seconds'])), (40, 10))
\" &&
    $CGPROF report -b s.data >out 2>/dev/null &&
    grep -E '^ +0\.01 +0\.00 +100/200 +cheap \[' out &&
    grep -E '^ +0\.10 +0\.00 +100/200 +dear \[' out &&
    grep -E '^\[[0-9]+\] +36\.4 +0\.01 +0\.10 +100 +dear \[' out
"

test_expect "code without -pg: qsort has measured callers and callees and no invented count" "
    json_check \"
a = arc['sorter', 'qsort [libc.so.6]']
want('sorter->qsort counted', a.get('counted'), False)
want('sorter->qsort count', 'count' in a, False)
want('sorter->qsort', (ms(a['self_seconds']), ms(a['child_seconds'])), (10, 40))
want('qsort calls', (fn['qsort [libc.so.6]'].get('counted'), 'calls' in fn['qsort [libc.so.6]']), (False, False))
want('qsort->cmp count', arc['qsort [libc.so.6]', 'cmp']['count'], 5000)
\" &&
    $CGPROF report -b s.data >out 2>/dev/null &&
    awk -v RS='-----------------------------------------------\n' \
        '/\n\[[0-9]+\][^\n]* qsort \[libc.so.6\] \[/' out >entry &&
    cat entry &&
    grep -E '^ +0\.01 +0\.04 +sorter \[[0-9]+\]$' entry &&
    grep -E '^\[[0-9]+\] +18\.2 +0\.01 +0\.04 +qsort \[libc.so.6\] \[[0-9]+\]$' entry &&
    ! grep spontaneous entry &&
    grep -E '^ +0\.01 +0\.04 +qsort \[libc.so.6\] \[[0-9]+\]$' out
"

test_expect "cycle keeps gprof's numbering and layout, with measured times" "
    json_check \"
c = d['cycles'][0]
want('cycle', (c['number'], c['members'], c['calls'], c['internal_calls']), (1, ['ping', 'pong'], 10, 50))
want('cycle times', (ms(c['self_seconds']), ms(c['child_seconds']), ms(c['inclusive_seconds'])), (40, 10, 50))
want('ping in cycle', (ms(fn['ping']['self_seconds']), ms(fn['ping']['child_seconds'])), (30, 0))
want('pong in cycle', (ms(fn['pong']['self_seconds']), ms(fn['pong']['child_seconds'])), (10, 10))
\" &&
    $CGPROF report -b s.data >out 2>/dev/null &&
    grep -E '^\[[0-9]+\] +18\.2 +0\.04 +0\.01 +10\+50 +<cycle 1 as a whole> \[' out &&
    grep -E '^ +0\.03 +0\.00 +30 +ping <cycle 1> \[' out &&
    grep -E '^ +0\.01 +0\.01 +30 +pong <cycle 1> \[' out
"

test_expect "% time is inclusive time over all samples" "
    $CGPROF report -b s.data >out 2>/dev/null &&
    grep -E '^\[[0-9]+\] +98\.2 +0\.01 +0\.26 +main \[' out &&
    grep -E '^\[[0-9]+\] +21\.8 +0\.01 +0\.05 +1 +sorter \[' out &&
    grep -E '^\[[0-9]+\] +14\.5 +0\.04 +0\.00 +1\+9 +fact \[' out
"

test_expect "every index printed refers to an entry printed" "
    $CGPROF report -b -q s.data >out 2>/dev/null &&
    grep -o '\[[0-9]*\]\$' out | sort -u >refs &&
    grep -o '^\[[0-9]*\]' out | sort -u >entries &&
    test -s refs && comm -23 refs entries >dangling && cat dangling && test ! -s dangling
"

test_expect "--propagate=counts: gprof's estimate, as the profile without stacks reports" "
    $CGPROF report --propagate=counts s.data >counts.txt 2>/dev/null &&
    $CGPROF report n.data >nostacks.txt &&
    diff -u nostacks.txt counts.txt &&
    grep -E '^ +0\.05 +0\.00 +100/200 +dear \[' counts.txt &&
    $CGPROF report --propagate=counts --json s.data | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if d[\"times\"] == \"estimated\" and \"stacks\" in d else 1)'
"

test_expect "cut stacks: the report says how many samples" "
    $CGPROF report -b s.data >/dev/null 2>err && cat err &&
    grep -q 'note: 5 samples had stacks deeper than 64 frames' err
"

test_expect "--json carries the stacks, symbolized with their modules" "
    $CGPROF report --json s.data >j 2>/dev/null &&
    python3 -c '
import json, os
d = json.load(open(\"j\"))
nodes = d[\"stacks\"][\"nodes\"]
got = []
for i, n in enumerate(nodes):
    if not n[\"count\"]:
        continue
    frames, k = [], i
    while k is not None:
        x = nodes[k]
        frames.append(\"cut\" if x.get(\"cut\") else
                      (\"2:\" if os.path.basename(x[\"module\"]) == \"libc.so.6\" else \"\") +
                      x[\"function\"].replace(\" [libc.so.6]\", \"\"))
        k = x[\"parent\"]
    got.append(\"stack %d %s\" % (n[\"count\"], \" \".join(frames)))
want = [l.strip() for l in open(\"spec\") if l.startswith(\"stack \")]
print(\"\\n\".join(sorted(got))); print(\"--\"); print(\"\\n\".join(sorted(want)))
assert sorted(got) == sorted(want)
assert d[\"stacks\"][\"cut_samples\"] == 5 and d[\"stacks\"][\"depth_limit\"] == 64
'
"

test_expect "samples without a stack: said, and left out of the measured times only" "
    (cat spec && echo 'lost 7 cheap') >lost.spec && ./stackgen lost.data <lost.spec &&
    $CGPROF report -b lost.data >out 2>err && cat err &&
    grep -q 'warning: 7 samples have no stack' err && ! grep -q 'stacks hold' err &&
    grep -E '^ +[0-9.]+ +[0-9.]+ +0\.01 +100 +0\.12 +0\.22 +cheap\$' out &&
    grep -E '^\[[0-9]+\] +98\.2 +0\.01 +0\.26 +main \[' out
"

test_expect "a stack deeper than the depth limit: the file is refused in one line" "
    (grep -v '^stack' spec && printf 'stack 1' &&
        for i in \$(seq 1100); do printf ' fact'; done && echo ' main') >deep.spec &&
    ./stackgen deep.data <deep.spec &&
    $CGPROF report deep.data >out 2>err; test \$? -eq 1 && cat err &&
    test \$(wc -l <err) -eq 1 && grep -q 'deep.data: a stack of more than 1025 frames' err
"

test_expect "--propagate with another value: usage error, one line" "
    $CGPROF report --propagate=bogus s.data >out 2>err; test \$? -eq 2 &&
    test \$(wc -l <err) -eq 1 && grep -q bogus err && test ! -s out
"
test_done

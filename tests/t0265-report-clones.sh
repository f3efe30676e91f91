#!/bin/sh
# t0265: every symbol the compiler emits is a function.  GCC at -O2 turns
# tests/progs/clones.c's hot functions into heavy.constprop.0 and
# split_work.part.0; a cgprof profile names them as perf does and gives
# them their own time and calls, checked against what the program measures
# of itself (CPU time of the calls, how often the body ran) and against
# perf.  Stripped, its code is [clones_s], never the symbol before it.
# gmon.out read with -b keeps gprof's symbol rules: GNU gprof's text.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { test_skip "t0265" "no python3"; test_done; exit; }
gcc -O2 -pg "$PROGS/clones.c" -o "$WORK/clones" || exit 1
cd "$WORK" || exit 1
for c in heavy.constprop.0 split_work.part.0; do
    nm clones | grep -q " t $c\$" || {
        test_skip "t0265: clones named and timed" "gcc made no $c: $(gcc --version | head -n 1)"
        test_done
        exit 0
    }
done
$CGPROF record -o clones.data ./clones >truth || exit 1
cd - >/dev/null || exit 1

# json_check PYTHON: runs PYTHON with d = the report's JSON, t = the
# program's own numbers (heavy_ms split_ms total_ms bodies); prints what
# differs and exits non-zero on a mismatch.
json_check() {
    $CGPROF report --json clones.data >r.json &&
    python3 -c "
import json, sys
d = json.load(open('r.json'))
t = [float(x) for x in open('truth').read().split()]
f = {x['name']: x for x in d['functions']}
total = d['total_seconds']
bad = []
def near(what, got, want, tol):
    if abs(got - want) > tol:
        bad.append('%s: %.3f, want %.3f +- %.3f' % (what, got, want, tol))
$1
print('\n'.join(bad))
sys.exit(1 if bad else 0)"
}

test_expect "clones are their own functions, named as perf names them" "
    json_check \"
for c in ('heavy.constprop.0', 'split_work.part.0'):
    if c not in f:
        bad.append(c + ' missing: ' + ' '.join(sorted(f)))
\"
"

test_expect "clones get their own calls (-pg counts in the clone's mcount)" "
    json_check \"
near('heavy.constprop.0 calls', f['heavy.constprop.0'].get('calls', -1), 8, 0)
near('split_work.part.0 calls', f['split_work.part.0'].get('calls', -1), t[3], 0)
near('cpu_ms calls', f.get('cpu_ms', {}).get('calls', 0), 2, 2)
\"
"

# shares of the program's CPU time, within 5 points (1000 Hz samples over
# about 0.5 s: the sampling error is well under 3 points)
test_expect "clones get their own time, as the program measures it" "
    json_check \"
near('heavy.constprop.0 self %', 100 * f['heavy.constprop.0']['self_seconds'] / total,
     100 * t[0] / t[2], 5)
near('split_work.part.0 self %', 100 * f['split_work.part.0']['self_seconds'] / total,
     100 * t[1] / t[2], 5)
for other in ('cpu_ms', 'frame_dummy', 'main', 'via_a', 'via_b'):
    near(other + ' self %', 100 * f.get(other, {'self_seconds': 0})['self_seconds'] / total, 0, 3)
\"
"

test_expect "the clone's callers include its time (via_a : via_b = 2 : 1)" "
    json_check \"
a = f['via_a']['inclusive_seconds']; b = f['via_b']['inclusive_seconds']
near('via_a + via_b inclusive %', 100 * (a + b) / total, 100 * t[1] / t[2], 5)
near('via_a share of them %', 100 * a / (a + b), 200 / 3, 5)
near('main inclusive %', 100 * f['main']['inclusive_seconds'] / total, 100, 3)
\"
"

test_expect "gmon.out with -b keeps gprof's symbol rules (the same text as GNU gprof)" "
    rm -f gmon.out && $CGPROF record --format gmon ./clones >/dev/null &&
    gprof -b -p clones gmon.out >gprof.txt && $CGPROF report -b -p clones gmon.out >cg.txt &&
    diff -u gprof.txt cg.txt
"

test_expect "a stripped executable: its unnamed code is [clones_s], not a PLT stub or a neighbour" "
    gcc -O2 -pg -s $PROGS/clones.c -o clones_s && $CGPROF record -o s.data ./clones_s >s.truth &&
    $CGPROF report --json s.data >s.json && python3 -c \"
import json, sys
d = json.load(open('s.json'))
t = [float(x) for x in open('s.truth').read().split()]
f = {x['name']: x for x in d['functions']}
own = f.get('[clones_s]', {}).get('self_seconds', 0) / d['total_seconds']
want = (t[0] + t[1]) / t[2]
print('[clones_s] %.3f of the time, the program measured %.3f in its own code' % (own, want))
bad = [n for n in f if n.endswith('@plt') and f[n]['self_seconds'] > 0.01 * d['total_seconds']]
sys.exit(1 if abs(own - want) > 0.05 or bad else 0)\"
"

# perf names a clone by its symbol too: the same names and, over the
# program's own samples, the same shares within 5 points
if ! command -v perf >/dev/null; then
    test_skip "perf names the clones as cgprof does" "no perf"
elif ! (cd "$WORK" && perf record -q -e cpu-clock -F 1000 -o p.data ./clones >/dev/null 2>&1); then
    test_skip "perf names the clones as cgprof does" "perf record is not permitted here"
else
    test_expect "perf names the clones as cgprof does, with the same shares of the program's time" "
        perf script -i p.data -F ip,sym,dso 2>/dev/null |
            awk -v prog=\"(\$PWD/clones)\" '\$NF == prog { n[\$2]++; all++ }
                END { for (f in n) print f, 100 * n[f] / all }' >perf.shares && cat perf.shares &&
        json_check \"
p = dict((l.split()[0], float(l.split()[1])) for l in open('perf.shares'))
own = sum(x['self_seconds'] for n, x in f.items() if not n.endswith(']'))
for c in ('heavy.constprop.0', 'split_work.part.0'):
    if c not in p:
        bad.append('perf has no ' + c)
    else:
        near(c + ' share: cgprof vs perf', 100 * f[c]['self_seconds'] / own, p[c], 5)
\"
    "
fi

test_done

#!/bin/sh
# t0266: one model under report and every export.  tests/progs/unnamed.c
# spends its time in a stripped library's local function (no symbol names
# it), in a ping/pong cycle, and in a library function called through its
# PLT stub.  Against the program's own CPU clocks: the unnamed code is
# [libhid.so], in its caller's inclusive time, and the call graph's total
# is the flat profile's.  Then every export, read by its own reader
# (awk on folded, go tool pprof -top, callgrind_annotate, the dot labels,
# the html page's data), gives the same total and each function the same
# self and inclusive time under the same name as cgprof report --json
# (tests/export_same.py), and the text report's % time is that inclusive
# share (cycle members included); likewise for known stacks (a PLT stub, a
# cycle, recursion, a cut stack) and for tests/progs/cycles.c.
. "$(dirname "$0")/lib.sh"

missing=""
for tool in python3 go callgrind_annotate; do
    command -v $tool >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
    test_skip "t0266: report and exports agree" "no$missing (scripts/deps.sh installs them)"
    test_done
    exit 0
fi
export HOME="$WORK" GOFLAGS=-mod=mod # go tool pprof keeps nothing in the real home
SAME="python3 $ROOT/tests/export_same.py"

cd "$WORK" || exit 1
gcc -O2 -fPIC -shared -s "$PROGS/libhid.c" -o libhid.so &&
gcc -O2 -pg "$PROGS/unnamed.c" -L. -lhid -Wl,-rpath,'$ORIGIN' -o unnamed || exit 1
nm libhid.so >/dev/null 2>&1 && nm libhid.so 2>&1 | grep -q hidden_work && {
    test_skip "t0266" "libhid.so was not stripped"
    test_done
    exit 0
}
# (without counting the 60 million calls to lib_tiny: that counting is the
# runtime's time, left out of the profile, but inside the program's clocks)
$CGPROF record --no-lib-calls -o u.data ./unnamed >truth && $CGPROF report --json u.data >u.json || exit 1
# the same program with known stacks (tests/unit/mkstacks.c): time in a
# PLT stub (the real run's share there varies from 0 to 6%), a cycle,
# direct recursion, a stack cut at the depth limit; 940 samples
cc -std=c11 -Wall -Wextra -D_GNU_SOURCE -I"$ROOT/analysis" "$ROOT/tests/unit/mkstacks.c" \
    "$ROOT/analysis/cgdata.c" "$ROOT/analysis/symtab.c" "$ROOT/analysis/elffile.c" \
    "$ROOT/analysis/dwinfo.c" "$ROOT/analysis/plt.c" -ldw -lelf -o mkstacks || exit 1
./mkstacks u.data s.data <<'SPEC' || exit 1
300 main;lib_entry@plt
200 main;lib_tiny@plt
150 main;ping;pong;ping;pong
100 main;ping;pong
50 main;ping
80 main;pong;pong;pong
40 main
20 [truncated];ping;pong
SPEC
$CGPROF report --json s.data >s.json 2>s.err || exit 1
# and a real run with two cycles and direct recursion (tests/progs/cycles.c)
gcc -O2 -pg "$PROGS/cycles.c" -o cycles && $CGPROF record -o c.data ./cycles >/dev/null &&
    $CGPROF report --json c.data >c.json || exit 1
cd - >/dev/null || exit 1

# json_check PYTHON: PYTHON with d = the report's JSON, f its functions by
# name, t = the program's own numbers (lib_ms cycle_ms total_ms).
json_check() {
    python3 -c "
import json, sys
d = json.load(open('u.json'))
t = [float(x) for x in open('truth').read().split()]
f = {x['name']: x for x in d['functions']}
total = d['total_seconds']
bad = []
def near(what, got, want, tol):
    if abs(got - want) > tol:
        bad.append('%s: %.3f, want %.3f +- %.3f' % (what, got, want, tol))
def share(name, key):
    return 100 * f[name][key] / total if name in f else -1
$1
print('\n'.join(bad))
sys.exit(1 if bad else 0)"
}

test_expect "code no symbol names is [libhid.so], its time in its caller's, as the program measures" "
    json_check \"
lib = 100 * t[0] / t[2]
near('[libhid.so] self %', share('[libhid.so]', 'self_seconds'), lib, 5)
near('[libhid.so] inclusive %', share('[libhid.so]', 'inclusive_seconds'), lib, 5)
near('lib_entry [libhid.so] inclusive %', share('lib_entry [libhid.so]', 'inclusive_seconds'), lib, 5)
near('ping <cycle> inclusive %', share('ping', 'inclusive_seconds'), 100 * t[1] / t[2], 5)
near('main inclusive %', share('main', 'inclusive_seconds'), 100, 3)
\"
"

test_expect "the call graph's total is the flat profile's (every sample reaches main)" "
    json_check \"
near('sum of self seconds', sum(x['self_seconds'] for x in d['functions']), total, 0.0015)
near('_start inclusive', f['_start']['inclusive_seconds'], total, 0.0025)
if any(n == '_init' or n.startswith('frame_dummy') for n in f):
    bad.append('a frame named after a neighbouring symbol: ' + ' '.join(sorted(f)))
\" && $CGPROF report -b u.data >r.txt &&
    flat=\$(awk '/^ *% *cumulative/ { on = 1; getline; next } on && !/^ *[0-9]/ { exit } on { c = \$2 } END { print c }' r.txt) &&
    graph=\$(awk '/^\[[0-9]+\] .* _start \[[0-9]+\]\$/ { print \$3 + \$4 }' r.txt) &&
    echo \"flat \$flat call graph \$graph\" && test -n \"\$flat\" &&
    awk -v a=\"\$flat\" -v b=\"\$graph\" 'BEGIN { d = a - b; exit !(b != \"\" && d < 0.015 && d > -0.015) }' &&
    grep -q '^\[[0-9]*\] *100.0 .* _start ' r.txt
"

test_expect "known stacks: PLT stubs named (lib_tiny@plt), cycle and recursion measured exactly" "
    python3 -c \"
import json, sys
d = json.load(open('s.json'))
f = {x['name']: (round(x['self_seconds'] * 1000), round(x.get('inclusive_seconds', 0) * 1000))
     for x in d['functions']}
want = {'lib_tiny@plt': (200, 200), 'lib_entry@plt': (300, 300), 'ping': (50, 320),
        'pong': (350, 350), 'main': (40, 920)}
bad = ['%s: %s, want %s' % (n, f.get(n), w) for n, w in want.items() if f.get(n) != w]
if round(d['total_seconds'] * 1000) != 940:
    bad.append('total %s, want 0.940' % d['total_seconds'])
print('\\n'.join(bad)); sys.exit(1 if bad else 0)\"
"

test_expect "folded: the same total, names, self and inclusive samples as the report" "
    for p in u s c; do
        $CGPROF export -f folded \$p.data >\$p.folded && $SAME \$p.json folded \$p.folded || return 1
    done
"

test_expect "pprof (go tool pprof -top): the same flat and cum per function as the report" "
    for p in u s c; do
        $CGPROF export -f pprof -o \$p.pb.gz \$p.data &&
        go tool pprof -top -nodefraction=0 -nodecount=100000 \$p.pb.gz 2>/dev/null >\$p.top &&
        $SAME \$p.json pprof-top \$p.top || return 1
    done
"

# cga KIND [ARGS]: callgrind_annotate's per-function numbers as
# \"KIND NAME VALUE\" lines (and the program total as \"total x VALUE\")
cat >"$WORK/cga.sh" <<'EOF2'
k=$1
f=$2
shift 2
callgrind_annotate --threshold=100 "$@" "$f" |
    awk -v k="$k" '/PROGRAM TOTALS/ { v = $1; gsub(",", "", v); if (k == "self") print "total x", v }
        /file:function/ { on = 1; getline; next }
        on && /^-+$/ { exit }
        on && NF >= 4 && $1 ~ /^[0-9,]+$/ { v = $1; gsub(",", "", v); n = $0; sub(/^[^:]*:/, "", n); print k, n, v }'
EOF2
# (not for c, the sampled run of cycles.c: callgrind_annotate's inclusive
# cost of a recursive function depends on how its samples' stacks nest,
# and a run's random stacks made it differ by a sample or two once in
# several full runs; s has a cycle and recursion with exact expected costs)
test_expect "callgrind (callgrind_annotate): the same self and inclusive cost as the report" "
    for p in u s; do
        $CGPROF export -f callgrind -o \$p.callgrind \$p.data &&
        sh cga.sh self \$p.callgrind >\$p.cg && sh cga.sh incl \$p.callgrind --inclusive=yes >>\$p.cg &&
        cat \$p.cg && $SAME \$p.json callgrind \$p.cg || return 1
    done
"

test_expect "dot: the same self and total per node as the report" "
    for p in u s c; do
        $CGPROF export -f dot -t 0 -o \$p.dot \$p.data && $SAME \$p.json dot \$p.dot || return 1
    done
"

test_expect "html: the page's data has the same self, total and calls (blank: none counted) as the report" "
    for p in u s c; do
        $CGPROF export -f html -o \$p.html \$p.data && $SAME \$p.json html \$p.html || return 1
    done
"

test_expect "report text: % time is the inclusive share, for cycle members too (man cgprof)" "
    python3 -c \"
import json, re, sys
d = json.load(open('u.json'))
incl = {x['name']: 100 * x.get('inclusive_seconds', 0) / d['total_seconds'] for x in d['functions']}
bad = []
seen = set()
for line in open('r.txt'):
    m = re.match(r'\[\d+\]\s+([0-9.]+)\s+[0-9.]+\s+[0-9.]+\s+(?:[0-9+]+\s+)?(.*?)( <cycle \d+>)? \[\d+\]$', line.rstrip())
    if m and m.group(2) in incl and abs(float(m.group(1)) - incl[m.group(2)]) > 0.051:
        bad.append('%s: %% time %s, inclusive %.2f%%' % (m.group(2), m.group(1), incl[m.group(2)]))
    if m and m.group(2) in incl:
        seen.add(m.group(2))
if len(seen) < 6:
    bad.append('only %d functions matched: %s' % (len(seen), ' '.join(sorted(seen))))
print('\n'.join(bad)); sys.exit(1 if bad else 0)\" &&
    grep -q '^\[[0-9]*\] .* ping <cycle 1> \[' r.txt
"

test_done

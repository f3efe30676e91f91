#!/bin/sh
# t0506: names and paths from a profile never reach the terminal or a file
# format raw.  A symbol name holding newlines (tests/progs/evilname.c, its
# '#'s turned into newlines in the binary) and a program path holding
# ESC[2J (clear screen) are printed with their control characters as \xHH:
# the warnings hold no ESC byte, callgrind_annotate sees no forged function
# or cost, folded lines each end in their count, dot parses the graph, and
# the JSON keeps the true name (its own quoting).
. "$(dirname "$0")/lib.sh"

ESC=$(printf '\033')
EVIL="e${ESC}[2Jvil"
gcc -O1 -pg "$PROGS/evilname.c" -o "$WORK/evilname" &&
    python3 -c "
import sys; p = sys.argv[1]; d = open(p, 'rb').read(); k = b'evil#fn=(99) fake#0 999999#'
assert d.count(k) == 1; open(p, 'wb').write(d.replace(k, k.replace(b'#', b'\n')))" "$WORK/evilname" &&
    (cd "$WORK" && cp evilname "./$EVIL" && $CGPROF record -o ev.data "./$EVIL" >/dev/null) || exit 1

test_expect "a module path holding ESC[2J: the warning shows it escaped, no ESC byte" "
    mv \"./$EVIL\" gone && $CGPROF report -b ev.data >out 2>err; mv gone \"./$EVIL\" &&
    cat err && grep -qF 'no symbols for' err && grep -qF 'e\\x1b[2Jvil' err && ! grep -q \"\$ESC\" err
"

test_expect "report: the name with newlines is one line of the flat profile, escaped" "
    $CGPROF report -b -p ev.data >flat && cat flat &&
    test \$(grep -c 'fn=(99) fake' flat) -eq 1 && grep -qF 'evil\\x0afn=(99) fake\\x0a0 999999\\x0a' flat &&
    ! grep -q '^0 999999' flat
"

if command -v callgrind_annotate >/dev/null 2>&1; then
    test_expect "callgrind: no forged function or cost; callgrind_annotate's total is the profile's" "
        $CGPROF export -f callgrind -o ev.cg ev.data && ! grep -q '^fn=(99)' ev.cg && ! grep -q '^0 999999' ev.cg &&
        callgrind_annotate ev.cg >ann && cat ann && ! grep -q '999,999' ann &&
        total=\$(sed -n 's/^summary: \\([0-9]*\\).*/\\1/p' ev.cg) &&
        $CGPROF export -f folded ev.data | awk -v t=\"\$total\" '{ s += \$NF } END { exit s != t }'
    "
else
    test_skip "callgrind: no forged function or cost" "no callgrind_annotate"
fi

test_expect "folded: every line is frames and a count; the name is one frame" "
    $CGPROF export -f folded ev.data >f && cat f && test -s f &&
    ! grep -Ev '^.+ [0-9]+\$' f && grep -qF 'evil\\x0afn=(99) fake' f
"

if command -v dot >/dev/null 2>&1; then
    test_expect "dot: the graph parses and its label shows the name escaped" "
        $CGPROF export -f dot -t 0 ev.data >g.dot && dot -Tsvg g.dot >g.svg &&
        grep -qF 'evil\\\\x0afn=(99) fake' g.dot && ! grep -q \"\$ESC\" g.dot
    "
else
    test_skip "dot: the graph parses" "no dot"
fi

# has_string FILE: the decoded JSON holds the true name as one string
cat >"$WORK/has_string.py" <<'PY'
import json, sys
def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
sys.exit("evil\nfn=(99) fake\n0 999999\n" not in set(strings(json.load(open(sys.argv[1])))))
PY
test_expect "json: the true name, newlines and all, by JSON's own quoting" "
    $CGPROF report --json ev.data >j && python3 has_string.py j
"

test_done

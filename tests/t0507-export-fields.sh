#!/bin/sh
# t0507: the exports and the JSON field by field, each read by its own
# reader, against the profile's known content: tests/progs/fields.c's exact
# calls and call lines (one call the last instruction of main), the
# DWARF and ELF as binutils read them (addr2line, nm, readelf), GNU gprof
# of the same run's gmon.out, and the report's own numbers.  Checkers:
# tests/export_fields.py, tests/json_fields.py, tests/html_fields.py (the html
# export as headless Chromium shows it).
. "$(dirname "$0")/lib.sh"

HZ=500
gcc -O2 -g -pg "$PROGS/fields.c" -o "$WORK/fields" &&
    printf 'main hot 3\nmain warm 1\nhot leaf 600\nwarm leaf 100\nmain finish 1\nhot spin 3\nwarm spin 1\n' >"$WORK/fields.arcs" &&
    (cd "$WORK" && $CGPROF record -F $HZ -o f.data ./fields >/dev/null &&
        $CGPROF report --json f.data >f.json && $CGPROF report -b -q f.data >f.q) || exit 1

test_expect "json: every field of docs/json-schema.md against its meaning, the text report and the known calls" "
    python3 $ROOT/tests/json_fields.py f.json f.q $HZ $PROGS/fields.c fields.arcs
"

test_expect "json: a call that is the last instruction of main is main's, at its line" "
    line=\$(grep -n 'finish(0); /[*] SITE_FINISH' $PROGS/fields.c | cut -d: -f1) &&
    jq -e --argjson l \$line '[.arcs[] | select(.callee == \"finish\")] |
        length == 1 and .[0].caller == \"main\" and .[0].count == 1 and .[0].sites[0].line == \$l' f.json
"

if go version >/dev/null 2>&1; then
    test_expect "pprof (go tool pprof -raw): types, period, locations as addr2line, build-id, values per stack, calls" "
        $CGPROF export -f pprof -o f.pb f.data && go tool pprof -raw fields f.pb >f.raw 2>err &&
        python3 $ROOT/tests/export_fields.py pprof f.raw fields f.json $HZ fields.arcs
    "
    test_expect "pprof (go tool pprof -traces): each stack's time is its samples times the period" "
        $CGPROF export -f pprof -o f.pb f.data &&
        go tool pprof -traces -sample_index=samples fields f.pb >t.samples 2>err &&
        go tool pprof -traces -sample_index=cpu-clock fields f.pb >t.ns 2>err &&
        grep -qx 'Type: cpu-clock' t.ns && grep -qx 'Type: samples' t.samples &&
        awk '/^-+[+]-+\$/ { getline; if (\$1 ~ /^[0-9]+\$/) print \$1 }' t.samples >n.samples &&
        awk '/^-+[+]-+\$/ { getline; if (\$1 == 0) print 0; else if (\$1 ~ /ms\$/) { sub(/ms/, \"\", \$1); print \$1 } else if (\$1 ~ /s\$/) { sub(/s/, \"\", \$1); print \$1 * 1000 } }' t.ns >n.ms &&
        test -s n.samples && paste n.samples n.ms | awk -v p=$((1000 / HZ)) '\$1 * p != \$2 { bad++; print } END { exit bad > 0 }'
    "
else
    test_skip "pprof (go tool pprof -raw): types, period, locations as addr2line, build-id, values per stack, calls" "no go"
fi

test_expect "callgrind: positions, events, summary, fn/cfn/calls= and their lines, self costs (own parse)" "
    $CGPROF export -f callgrind -o f.cg f.data &&
    python3 $ROOT/tests/export_fields.py callgrind f.cg fields f.json $HZ fields.arcs
"

test_expect "callgrind_annotate --inclusive=yes: each function's inclusive samples are the report's" "
    $CGPROF export -f callgrind -o f.cg f.data && callgrind_annotate --inclusive=yes f.cg >ann 2>&1 &&
    for f in main hot warm spin; do
        want=\$(jq --arg f \$f '.functions[] | select(.name == \$f) | .inclusive_seconds * $HZ | round' f.json) &&
        got=\$(awk -v f=\$f '\$NF ~ (\":\" f \"\$\") { gsub(/,/, \"\", \$1); print \$1; exit }' ann) &&
        echo \"\$f \$got \$want\" && test \"\$got\" = \"\$want\" || return 1
    done
"

test_expect "dot of a gmon.out: every edge's calls and time are gprof -q's, no other edge" "
    $CGPROF record --format gmon -o g.out ./fields >/dev/null &&
    gprof -b -q fields g.out >g.q && $CGPROF export -f dot -t 0 -o g.dot fields g.out &&
    python3 $ROOT/tests/export_fields.py dot g.dot g.q
"

test_expect "dot node labels: self and total seconds and calls are the report's" "
    $CGPROF export -f dot -t 0 -o f.dot f.data &&
    for f in hot warm spin leaf; do
        want=\$(jq -r --arg f \$f '.functions[] | select(.name == \$f) |
            \"\\(.self_seconds) \\(.inclusive_seconds) \\(.calls)\"' f.json) &&
        got=\$(sed -n \"s/.*label=\\\"\$f\\\\\\\\nself \\([0-9.]*\\)s ([0-9.]*%)\\\\\\\\ntotal \\([0-9.]*\\)s ([0-9.]*%)\\\\\\\\n\\([0-9]*\\) calls.*/\\1 \\2 \\3/p\" f.dot) &&
        echo \"\$f got '\$got' want '\$want'\" &&
        echo \"\$got \$want\" | awk '{ exit !(\$1 == \$4 && \$2 == \$5 && \$3 == \$6) }' || return 1
    done
"

# export -a leaves out static functions as report -a does: spin (static in
# fields.c, nm's 't') names no frame, and each leaf's samples are the self
# samples report -a --json gives that name
test_expect "export -a (folded): no static function's frame; leaves' samples are report -a's self samples" "
    nm fields | grep -q ' t spin\$' &&
    $CGPROF export -f folded -a -o fa.folded f.data && $CGPROF report -a --json f.data >fa.json 2>/dev/null &&
    cat fa.folded && ! grep -E '(^|;)spin( |;)' fa.folded &&
    python3 -c 'import json, sys
r = json.load(open(\"fa.json\"))
want = dict((f[\"name\"], round(f[\"self_seconds\"] * r[\"rate\"])) for f in r[\"functions\"] if f[\"self_seconds\"] > 0)
got = {}
for ln in open(\"fa.folded\"):
    path, n = ln.rsplit(\" \", 1)
    leaf = path.split(\";\")[-1]
    got[leaf] = got.get(leaf, 0) + int(n)
print(\"folded\", got, \"report -a\", want)
sys.exit(0 if got == want and \"spin\" not in want and got else 1)'
"

# cycles[] of docs/json-schema.md against the text report of the same
# profile (its "<cycle K as a whole>" entries: index, calls+internal,
# self and child time) and tests/progs/cycles.c's known cycles
gcc -O2 -pg "$PROGS/cycles.c" -o "$WORK/cycles" &&
    (cd "$WORK" && $CGPROF record -o cy.data ./cycles >/dev/null &&
        $CGPROF report --json cy.data >cy.json 2>/dev/null && $CGPROF report -b -q cy.data >cy.q 2>/dev/null) || exit 1
test_expect "json cycles[]: number, index, calls, internal calls, times, members as the text report's cycle entries" "
    python3 -c 'import json, re, sys
r = json.load(open(\"cy.json\"))
text = open(\"cy.q\").read()
bad = []
members = {}
for m in re.finditer(r\"^\\[\\d+\\].*\\s(\\S+) <cycle (\\d+)> \\[\\d+\\]\$\", text, re.M):
    members.setdefault(int(m.group(2)), set()).add(m.group(1))
for c in r[\"cycles\"]:
    m = re.search(r\"^\\[(\\d+)\\]\\s+[0-9.]+\\s+([0-9.]+)\\s+([0-9.]+)\\s+(\\d+)\\+(\\d+)\\s+<cycle %d as a whole> \\[(\\d+)\\]\$\" % c[\"number\"], text, re.M)
    if not m:
        bad.append(\"cycle %d: no entry in the text report\" % c[\"number\"])
        continue
    got = (c[\"index\"], \"%.2f\" % c[\"self_seconds\"], \"%.2f\" % c[\"child_seconds\"], c[\"calls\"], c[\"internal_calls\"], set(c[\"members\"]))
    want = (int(m.group(1)), m.group(2), m.group(3), int(m.group(4)), int(m.group(5)), members.get(c[\"number\"]))
    print(got, want)
    if got != want or int(m.group(6)) != c[\"index\"]:
        bad.append(\"cycle %d: json %r, text %r\" % (c[\"number\"], got, want))
known = sorted([[\"even\", \"odd\"], [\"ring_a\", \"ring_b\", \"ring_c\"]])
if sorted(sorted(c[\"members\"]) for c in r[\"cycles\"]) != known:
    bad.append(\"cycles %r, cycles.c has %r\" % ([c[\"members\"] for c in r[\"cycles\"]], known))
print(\"\\n\".join(bad))
sys.exit(1 if bad else 0)'
"

if command -v chromium >/dev/null 2>&1; then
    CHROME="chromium --headless --no-sandbox --disable-gpu --window-size=1200,800"
    test_expect "html (Chromium's DOM): summary, flat rows, call graph views, flame frames, lines are the JSON's and the known calls" "
        $CGPROF export -f html -o f.html f.data && \$CHROME --dump-dom file://\$PWD/f.html 2>/dev/null >dom &&
        for f in main hot warm leaf spin finish _start; do
            \$CHROME --dump-dom \"file://\$PWD/f.html#view=graph&fn=\$f\" 2>/dev/null >dom.\$f || return 1
        done &&
        python3 $ROOT/tests/html_fields.py f.json fields.arcs dom dom.main dom.hot dom.warm dom.leaf dom.spin dom.finish dom._start
    "
else
    test_skip "html (Chromium's DOM): summary, flat rows, call graph views, flame frames, lines are the JSON's and the known calls" "no chromium (scripts/deps.sh installs it)"
fi

test_done

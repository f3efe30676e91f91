#!/bin/sh
# t0500: cgprof export -- every format opened in its real reader (go tool
# pprof, callgrind_annotate, dot, headless Chromium; folded summed by awk)
# and its numbers checked against the truth: the call counts calls.c makes,
# the stacks of a profile made with known stacks (tests/unit/mkstacks.c),
# and the CPU splits split.c and callers.c measure themselves.
. "$(dirname "$0")/lib.sh"

missing=""
for tool in go callgrind_annotate dot chromium; do
    command -v $tool >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
    test_skip "cgprof export in its readers" "no$missing (scripts/deps.sh installs them)"
    test_done
    exit 0
fi
export HOME="$WORK" GOFLAGS=-mod=mod # go tool pprof keeps nothing in the real home

gcc -O2 -pg "$PROGS/calls.c" -o "$WORK/calls" &&
gcc -O2 -pg "$PROGS/split.c" -o "$WORK/split" &&
gcc -O2 -pg "$PROGS/callers.c" -o "$WORK/callers" &&
gcc -O2 -pg "$PROGS/cycles.c" -o "$WORK/cycles" &&
cc -std=c11 -Wall -Wextra -D_GNU_SOURCE -I"$ROOT/analysis" "$ROOT/tests/unit/mkstacks.c" \
    "$ROOT/analysis/cgdata.c" "$ROOT/analysis/symtab.c" "$ROOT/analysis/elffile.c" \
    "$ROOT/analysis/dwinfo.c" "$ROOT/analysis/plt.c" -ldw -lelf \
    -o "$WORK/mkstacks" || exit 1

# The known stacks (outermost first) and their samples: 1070 in all, one
# cut at the depth limit, one call (c -> s) that has no -pg arc.  With
# 1000 Hz samples, 1 sample = 1 ms.
#   self:      s 570, c 300, b 100, a 50, main 50
#   inclusive: main 1030, a 650, b 640, s 570, c 330
cat >"$WORK/spec" <<'SPEC'
500 main;a;b;s
100 main;a;b
50 main;a
200 main;c;c;c;c
100 main;c
50 main
40 [truncated];b;s
30 main;c;c;s
SPEC
# (calls.c's -pg arcs only: its library calls, printf, are not in the spec)
(cd "$WORK" && $CGPROF record --no-lib-calls ./calls >/dev/null && mv cgprof.data calls.data &&
    ./mkstacks calls.data stacks.data <spec &&
    rm -f gmon.out && $CGPROF record --format gmon ./calls >/dev/null) || exit 1

# pprof_top FILE [ARGS]: "name flat cum" per function (values in ms or counts)
pprof_top() {
    f=$1
    shift
    go tool pprof -top "$@" "$f" 2>/dev/null |
        awk '/flat%/ { on = 1; next } on { n = $6; for (i = 7; i <= NF; i++) n = n " " $i;
             sub(/ms$/, "", $1); sub(/ms$/, "", $4); print n, $1, $4 }'
}
# expect_lines EXPECTED GOT: every expected line is in GOT
expect_lines() {
    printf '%s\n' "$1" | while IFS= read -r l; do
        grep -qxF "$l" "$2" || { echo "missing: '$l'"; cat "$2"; return 1; }
    done
}

test_expect "pprof, stacks: go tool pprof -top gives every function's flat and cum time" "
    $CGPROF export -f pprof -o st.pb.gz stacks.data && pprof_top st.pb.gz >top &&
    expect_lines 's 570 570
c 300 330
b 100 640
a 50 650
main 50 1030
[truncated] 0 40' top &&
    go tool pprof -top st.pb.gz 2>/dev/null | grep -q 'of 1070ms total'
"

test_expect "pprof, stacks: go tool pprof -traces shows each known stack with its time" "
    go tool pprof -traces st.pb.gz 2>/dev/null |
        awk '/^-+\+/ { if (s != \"\") print s; s = \"\"; next }
             /ms / { s = \$1; sub(/ms\$/, \"\", s); s = s \" \" \$2; next }
             s != \"\" && NF { s = s \";\" \$1 } END { if (s != \"\") print s }' |
        awk '{ n = split(\$2, f, \";\"); r = f[n]; for (i = n - 1; i >= 1; i--) r = r \";\" f[i];
               print \$1, r }' | sort >got &&
    sort spec >want && diff -u want got
"

test_expect "pprof: exact call counts (sample_index=calls) and the executable's build-id" "
    pprof_top st.pb.gz -sample_index=calls >calls.top &&
    expect_lines 'b 100 200
s 100 100
c 15 15
a 10 110' calls.top &&
    go tool pprof -raw st.pb.gz 2>/dev/null >raw &&
    bid=\$(readelf -n calls | awk '/Build ID/ { print \$3 }') && grep -q \"calls \$bid\" raw
"

test_expect "pprof, no stacks (gmon.out): exact calls; each function's time as GNU gprof reads it" "
    $CGPROF export -f pprof -o g.pb.gz calls gmon.out && pprof_top g.pb.gz -sample_index=calls >gc &&
    expect_lines 'b 100 200
s 100 100
c 15 15
a 10 110' gc &&
    go tool pprof -traces -sample_index=calls g.pb.gz 2>/dev/null | grep -A2 '^ *100 ' | grep -qx ' *b' &&
    $CGPROF record --format gmon -o split.gmon ./split 1000000 >/dev/null &&
    $CGPROF export -f pprof -o gs.pb.gz split split.gmon && pprof_top gs.pb.gz >gs.top &&
    gprof -b -p split split.gmon >gs.gprof && cat gs.top gs.gprof &&
    for f in f60 f30 f10; do
        awk -v f=\$f 'NR == FNR { if (\$NF == f) t = \$3 * 1000; next }
            \$1 == f { d = \$2 - t; if (d < 0) d = -d; ok = d <= 5 } END { exit !ok }' gs.gprof gs.top ||
            return 1
    done
"

test_expect "pprof, no stacks (record --no-stacks): the 60/30/10 CPU split split.c measures" "
    $CGPROF record --no-stacks -o split.data ./split 2000000 >split.truth &&
    $CGPROF export -f pprof -o sp.pb.gz split.data && go tool pprof -top sp.pb.gz 2>/dev/null >sp.top &&
    n=\$(awk '/ total\$/ { for (i = 1; i <= NF; i++) if (\$(i+1) == \"total\") {
            v = \$i; if (v ~ /ms\$/) { sub(/ms\$/, \"\", v); print v + 0 } else if (v ~ /s\$/) { sub(/s\$/, \"\", v); print v * 1000 } } }' sp.top) &&
    cat split.truth sp.top && test \"\$n\" -gt 1000 &&
    for f in f60 f30 f10; do
        awk -v f=\$f -v n=\$n 'NR == FNR { for (i = 1; i < NF; i++) if (\$i == f) t = \$(i + 1); next }
            \$NF == f { g = \$2; sub(/%/, \"\", g); p = t / 100;
                tol = 400 * sqrt(p * (1 - p) / n) + 1; d = g - t; if (d < 0) d = -d;
                print f, \"pprof\", g, \"truth\", t, \"tolerance\", tol; ok = d <= tol }
            END { exit !ok }' split.truth sp.top || return 1
    done
"

# near_truth WHO SHARE N: SHARE (percent of N samples) is within 4 standard
# deviations (+1 point for the program's own measurement) of WHO's share
# in ./truth ("name percent ..." as the program printed it).
near_truth() {
    awk -v f="$1" -v g="$2" -v n="$3" '{ for (i = 1; i < NF; i++) if ($i == f) t = $(i + 1) }
        END { p = t / 100; tol = 400 * sqrt(p * (1 - p) / n) + 1; d = g - t; if (d < 0) d = -d;
              print f, "export", g, "truth", t, "tolerance", tol; exit !(t != "" && d <= tol) }' truth
}

test_expect "recorded stacks: every export splits work by caller as callers.c measured it" "
    rm -f cgprof.data && $CGPROF record ./callers 1500000 >truth && cat truth &&
    $CGPROF export -f folded >cr.folded &&
    h=\$(awk '/;heavy;work\$|;heavy;work / { s += \$NF } END { print s + 0 }' cr.folded) &&
    l=\$(awk '/;light;work / { s += \$NF } END { print s + 0 }' cr.folded) &&
    n=\$((h + l)) && test \$n -gt 500 &&
    near_truth heavy \$(awk -v a=\$h -v n=\$n 'BEGIN { print 100 * a / n }') \$n &&
    $CGPROF export -f callgrind -o cr.cg &&
    callgrind_annotate --inclusive=yes --tree=caller cr.cg >cr.tree &&
    grep -q '< ???:heavy (100x)' cr.tree && grep -q '< ???:light (100x)' cr.tree &&
    ch=\$(awk '/< \?\?\?:heavy \(100x\)/ { v = \$1; gsub(/,/, \"\", v); print v }' cr.tree) &&
    cl=\$(awk '/< \?\?\?:light \(100x\)/ { v = \$1; gsub(/,/, \"\", v); print v }' cr.tree) &&
    test \$((ch + cl)) -eq \$n && near_truth heavy \$(awk -v a=\$ch -v n=\$n 'BEGIN { print 100 * a / n }') \$n &&
    $CGPROF export -f pprof -o cr.pb.gz && go tool pprof -peek '^work\$' cr.pb.gz 2>/dev/null >cr.peek &&
    ph=\$(awk '\$NF == \"heavy\" && \$3 == \"|\" { v = \$2; sub(/%/, \"\", v); print v }' cr.peek) &&
    cat cr.peek && near_truth heavy \$ph \$n
"

test_expect "callgrind, stacks: callgrind_annotate --inclusive=yes gives the measured totals" "
    $CGPROF export -f callgrind -o st.cg stacks.data &&
    callgrind_annotate --inclusive=yes st.cg >incl 2>err && test ! -s err &&
    awk '\$NF ~ /^\?\?\?:/ { n = \$NF; sub(/^\?\?\?:/, \"\", n); v = \$1; gsub(/,/, \"\", v); print n, v }' incl >got &&
    expect_lines 'main 1030
a 650
b 640
s 570
c 330' got
"

test_expect "callgrind, stacks: --tree=caller splits each function by caller, with exact calls" "
    callgrind_annotate --inclusive=yes --tree=caller st.cg |
        awk '/< / { v = \$1; gsub(/,/, \"\", v); c = \$0; sub(/.*< \?\?\?:/, \"\", c); sub(/ \[\]\$/, \"\", c);
                    pend = pend v \" \" c \"|\"; next }
             /\* / { n = \$0; sub(/.*\* +\?\?\?:/, \"\", n); m = split(pend, p, \"|\");
                     for (i = 1; i < m; i++) print n \" <- \" p[i]; pend = \"\" }' >tree &&
    expect_lines 'a <- 650 main (10x)
b <- 600 a (100x)
b <- 40 [truncated] (1x)
s <- 540 b (100x)
s <- 30 c (1x)
c <- 330 main (3x)
c <- 0 c (12x)' tree
"

test_expect "callgrind, no stacks (gmon.out): exact calls= per caller" "
    $CGPROF export -f callgrind -o g.cg calls gmon.out &&
    grep -c '^calls=' g.cg >/dev/null &&
    awk '/^fn=/ { f = substr(\$0, 4) } /^cfn=/ { c = substr(\$0, 5) }
         /^calls=/ { split(substr(\$0, 7), x, \" \"); print f, c, x[1] }' g.cg | sort >got &&
    grep -v '^__libc\|^_start' got >got2 && sort $PROGS/calls.arcs >want && diff -u want got2
"

test_expect "folded: the known stacks, one line each, adding up to the profile" "
    $CGPROF export -f folded stacks.data | sort >got && sort spec | awk '{ print \$2, \$1 }' | sort >want &&
    diff -u want got && awk '{ s += \$NF } END { if (s != 1070) { print s; exit 1 } }' got
"

test_expect "folded, no stacks: one frame per function, its share of split.c's measured split" "
    $CGPROF export -f folded split.data >sp.folded && cat sp.folded &&
    n=\$(awk '{ s += \$NF } END { print s }' sp.folded) && test \"\$n\" -gt 1000 &&
    ! grep -q ';' sp.folded &&
    for f in f60 f30 f10; do
        awk -v f=\$f -v n=\$n 'NR == FNR { for (i = 1; i < NF; i++) if (\$i == f) t = \$(i + 1); next }
            \$1 == f { g = 100 * \$2 / n; p = t / 100; tol = 400 * sqrt(p * (1 - p) / n) + 1;
                d = g - t; if (d < 0) d = -d; print f, g, t, tol; ok = d <= tol }
            END { exit !ok }' split.truth sp.folded || return 1
    done
"

test_expect "dot: dot -Tsvg renders the call graph with calls and times; -t prunes" "
    $CGPROF export -f dot -t 0 stacks.data >all.dot && dot -Tsvg all.dot >all.svg &&
    grep -q '<svg' all.svg && grep -q '>100 calls<' all.svg && grep -q '>0.540s<' all.svg &&
    grep -q '>total 0.640s (59.8%)<' all.svg && grep -q 'cycle\\|>12 calls<' all.svg &&
    $CGPROF export -f dot -t 50 stacks.data >half.dot && dot -Tsvg half.dot >half.svg &&
    grep -q '>main<' half.svg && grep -q '>s<' half.svg && ! grep -q '>c<' half.svg
"

# dot_node NAME FILE: the dot node id of function NAME
dot_node() {
    awk -v n="$1" 'index($0, "[label=\"" n "\\n") { print $1; exit }' "$2"
}
# cycle_boxes SVG: "box N" for each cycle cluster Graphviz drew with its label
cycle_boxes() {
    awk '/<title>cluster_cycle[0-9]+</ { c = $0; sub(/.*cluster_cycle/, "", c); sub(/<.*/, "", c) }
         c != "" && />cycle [0-9]+</ { print "box", c; c = "" }' "$1" | sort -u
}
test_expect "dot: each cycle of cycles.c is a box with its members, calls within it drawn bold" "
    $CGPROF record -o cy.data ./cycles >/dev/null && $CGPROF export -f dot -t 0 cy.data >cy.dot &&
    dot -Tsvg cy.dot >cy.svg && cycle_boxes cy.svg >boxes && printf 'box 1\nbox 2\n' | diff - boxes &&
    for m in even:odd odd:even ring_a:ring_b ring_b:ring_c ring_c:ring_a; do
        a=\$(dot_node \${m%:*} cy.dot) && b=\$(dot_node \${m#*:} cy.dot) &&
        grep \"^  \$a -> \$b \" cy.dot | grep -q 'style=bold' || { echo \"no bold \$m\"; return 1; }
    done &&
    ! grep \"^  \$(dot_node main cy.dot) -> \" cy.dot | grep -q bold
"

CHROME="chromium --headless --no-sandbox --disable-gpu --window-size=1200,800"
test_expect "html: after its scripts ran, Chromium's DOM has the functions, counts and flame graph" "
    $CGPROF export -f html -o st.html stacks.data && test \$(wc -c <st.html) -lt 5000000 &&
    ! grep -q 'src=\"http\\|href=\"http' st.html &&
    $CHROME --dump-dom file://\$PWD/st.html 2>/dev/null >dom &&
    grep -q '<tr data-fn=\"s\"><td class=\"name\"><a href=\"#\" data-id=\"[0-9]*\">s</a></td><td>0.570 s</td><td>53.27%</td><td>0.570 s</td><td>53.27%</td><td>100</td><td>0</td></tr>' dom &&
    grep -q '<tr data-fn=\"c\">.*<td>0.330 s</td><td>30.84%</td><td>3</td><td>12</td></tr>' dom &&
    grep -q 'data-name=\"main\"><title>main: 1.030 s (96.26%) with callees' dom &&
    test \$(grep -o '<g class=\"fr' dom | wc -l) -eq 13
"

test_expect "html: search and zoom, driven through the page's own events" "
    $CHROME --dump-dom \"file://\$PWD/st.html#search=%5Es%24&zoom=a\" 2>/dev/null >dom2 &&
    grep -q 'id=\"matched\">matched: 0.570 s (53.27%)<' dom2 &&
    grep -q 'id=\"zoomed\">zoomed into a (60.75%)<' dom2 &&
    grep -q 'class=\"fr match\" data-n=\"[0-9]*\" data-name=\"s\"' dom2 &&
    ! grep -q 'data-name=\"c\"' dom2 &&
    $CHROME --dump-dom \"file://\$PWD/st.html#view=graph&fn=b\" 2>/dev/null >dom3 &&
    sed 's/<[^>]*>/ /g' dom3 | tr -s ' ' >text3 &&
    grep -q 'b : self 0.100 s (9.35%), total 0.640 s (59.81%), 100 calls Callers' text3 &&
    grep -q 'a 100 0.600 s 56.07%' text3 && grep -q 'Callees function calls time in these calls % s 100 0.540 s' text3
"

test_expect "html: the flat profile sorts by the column clicked" "
    $CHROME --dump-dom \"file://\$PWD/st.html#view=flat&sort=calls\" 2>/dev/null >dom4 &&
    grep -o '<table id=\"flat\">.*</table>' dom4 | grep -o 'tr data-fn=\"[^\"]*\"' | tr '\\n' ' ' >order &&
    cat order && test \"\$(cat order)\" = 'tr data-fn=\"s\" tr data-fn=\"b\" tr data-fn=\"a\" tr data-fn=\"c\" tr data-fn=\"main\" ' &&
    $CHROME --dump-dom \"file://\$PWD/st.html#view=flat&sort=name\" 2>/dev/null >dom5 &&
    grep -o '<table id=\"flat\">.*</table>' dom5 | grep -o 'tr data-fn=\"[^\"]*\"' | tr '\\n' ' ' >order2 &&
    cat order2 && test \"\$(cat order2)\" = 'tr data-fn=\"a\" tr data-fn=\"b\" tr data-fn=\"c\" tr data-fn=\"main\" tr data-fn=\"s\" '
"

# tests/pngwarm.py counts the screenshot's pixels in the flame graph's warm
# colours: the page without its script (nothing drawn) has none.
test_expect "html: a screenshot shows the flame graph drawn (its warm-coloured frames)" "
    $CHROME --screenshot=\$PWD/st.png file://\$PWD/st.html 2>/dev/null &&
    python3 $ROOT/tests/pngwarm.py st.png >warm && cat warm &&
    awk '\$1 == 1200 && \$2 == 800 && \$3 > 10000 { ok = 1 } END { exit !ok }' warm &&
    if [ -n \"\${CGPROF_SHOT:-}\" ]; then cp st.png \"\$CGPROF_SHOT\"; fi
"

test_expect "help: cgprof --help lists every subcommand; export --help every option" "
    $CGPROF --help >h && grep -q '^  record ' h && grep -q '^  report ' h && grep -q '^  export ' h &&
    $CGPROF export --help >eh && for o in -f -o -t -a --no-demangle -h; do grep -q -- \"\$o\" eh || return 1; done &&
    for f in pprof callgrind folded dot html; do grep -q \"\$f\" eh || return 1; done &&
    $CGPROF record --help >rh && for o in -e -F -c -o --format; do grep -q -- \"\$o\" rh || return 1; done &&
    grep -q '^\\.SH.*EXPORT\\|cgprof export' $ROOT/man/cgprof.1
"

test_expect "errors: unknown format, unwritable output: one line, non-zero, no file left" "
    ! $CGPROF export -f svg stacks.data 2>e1 && test \$(wc -l <e1) -eq 1 && grep -q \"unknown format 'svg'\" e1 &&
    ! $CGPROF export -f pprof -o nodir/p.pb.gz stacks.data 2>e2 && test \$(wc -l <e2) -eq 1 &&
    grep -q 'nodir/p.pb.gz' e2 && mkdir adir &&
    ! $CGPROF export -f html -o adir stacks.data 2>e3 && test \$(wc -l <e3) -eq 1 &&
    test -z \"\$(ls adir)\" && ! ls adir.tmp.* 2>/dev/null &&
    ! $CGPROF export -f folded stacks.data >/dev/full 2>e4 && test \$(wc -l <e4) -eq 1 &&
    ! $CGPROF export 2>e5 && grep -q 'which format' e5
"
# Source lines: callsites.c's lines() runs a HOT loop with three times the
# work of a COLD one, each on a line of its own.  go tool pprof -lines and
# callgrind_annotate's annotated source each give the HOT line about 3/4
# of the two lines' samples (the program's own split of work; 8 points
# are some 5 deviations for its ~300 samples), and name the file.
gcc -O0 -g -pg "$PROGS/callsites.c" -o "$WORK/callsites" &&
    (cd "$WORK" && $CGPROF record -o cs.data ./callsites >/dev/null) || exit 1
hot=$(grep -n 'HOT \*/' "$PROGS/callsites.c" | cut -d: -f1)
cold=$(grep -n 'COLD \*/' "$PROGS/callsites.c" | cut -d: -f1)
# share HOT COLD: HOT's percent of the two, from "line value" pairs
share() {
    awk -v h="$hot" -v c="$cold" '$1 == h { a += $2 } $1 == c { b += $2 }
        END { if (a + b == 0) { print "no samples on either line"; exit 1 }
              s = 100 * a / (a + b); printf "HOT %d COLD %d: %.1f%%\n", a, b, s; exit !(s >= 67 && s <= 83) }'
}
test_expect "pprof: locations carry source lines (go tool pprof -lines)" "
    $CGPROF export -f pprof -o cs.pb.gz cs.data &&
    go tool pprof -lines -top -nodecount=1000 cs.pb.gz 2>/dev/null >lines.top && cat lines.top &&
    grep -q 'callsites.c:'\$hot lines.top &&
    awk '\$NF ~ /callsites\\.c:[0-9]+\$/ { n = split(\$NF, p, \":\"); v = \$1;
        if (v ~ /ms\$/) { sub(/ms\$/, \"\", v); v /= 1000 } else sub(/s\$/, \"\", v); print p[n], v }' lines.top | share
"
test_expect "callgrind: fl= the source file, costs by line (callgrind_annotate --auto)" "
    $CGPROF export -f callgrind -o cs.cg cs.data && grep -q '^fl=.*/callsites.c\$' cs.cg &&
    callgrind_annotate --auto=yes cs.cg 2>&1 >ann.txt; sed -n '1,200p' ann.txt | grep -E 'HOT|COLD' &&
    awk '/HOT \\*\\/|COLD \\*\\// { v = \$1; gsub(/,/, \"\", v); if (v ~ /^[0-9]+\$/) print (/HOT/ ? h : c), v }' h=\$hot c=\$cold ann.txt | share
"
test_expect "html: a Source lines view, HOT's line first with its share" "
    $CGPROF export -f html -o cs.html cs.data &&
    $CHROME --dump-dom \"file://\$PWD/cs.html#view=lines\" 2>/dev/null >dom6 &&
    sed 's/<tr /\\n<tr /g' dom6 | grep '^<tr data-line=' | head -2 | sed 's/<[^>]*>/ /g' >top2 &&
    cat top2 &&
    head -1 top2 | grep -q \"callsites.c:\$hot .* lines \" &&
    sed -n 2p top2 | grep -q \"callsites.c:\$cold .* lines \" &&
    awk -v h=\$hot -v c=\$cold '{ print (NR == 1 ? h : c), \$NF + 0 }' top2 | share
"
test_done

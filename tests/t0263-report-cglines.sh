#!/bin/sh
# t0263: -l, -A and -x on cgprof profiles.  tests/progs/hotlines.c spends
# its time on three marked lines (about 60/30/10) and, with -DLIB, a
# fourth in a shared library built with -g; it measures each loop's CPU
# time by its own thread clock.  cgprof report -l gives each line the
# share of the samples the program's clocks say it used, names the line
# as gprof -l names it (the same "func (file:line @ address)" for the same
# address, binutils' addr2line agreeing for the library's), and its
# counts of calls from each line are gprof -l's on a gmon.out of the same
# program.  -A and -A -x print the annotated source gprof prints for that
# gmon.out.  A clone (heavy.constprop.0 of clones.c) has its lines too.
. "$(dirname "$0")/lib.sh"

cd "$WORK" || exit 1
gcc -O0 -g -pg "$PROGS/hotlines.c" -o hot &&
    gcc -O0 -g -pg -fPIC -shared "$PROGS/hotlineslib.c" -o libhotlineslib.so &&
    gcc -O0 -g -pg -DLIB "$PROGS/hotlines.c" -o hotlib -L. -lhotlineslib -Wl,-rpath,"$WORK" ||
    exit 1
$CGPROF record -o hotlib.data ./hotlib 15000000 >hotlib.truth &&
    $CGPROF record -o hot.data ./hot 3000000 >hot.truth &&
    rm -f gmon.out && ./hot 3000000 >/dev/null && mv gmon.out hot.glibc.gmon &&
    LD_PRELOAD=$LIBSO ./hot 3000000 >/dev/null && mv gmon.out hot.cgprof.gmon || exit 1

# line_of MARKER FILE: the line number of the marked line
line_of() {
    grep -n "/\* $1 \*/" "$2" | cut -d: -f1
}

# shares: the seconds -l gives each marked line (all its line symbols
# summed), against the program's own clock of its loop: within 4 points
# of the four lines' total.
test_expect "-l: each hot line's share of the samples is its share by the program's clocks" "
    $CGPROF report -b -l -p hotlib.data >flat 2>err &&
    l60=\$(line_of L60 '$PROGS/hotlines.c') && l30=\$(line_of L30 '$PROGS/hotlines.c') &&
    l10=\$(line_of L10 '$PROGS/hotlines.c') && llib=\$(line_of LIBHOT '$PROGS/hotlineslib.c') &&
    awk -v a=\"(hotlines.c:\$l60\" -v b=\"(hotlines.c:\$l30\" -v c=\"(hotlines.c:\$l10\" \
        -v d=\"(hotlineslib.c:\$llib\" '
        NR == FNR { t[1] = \$1; t[2] = \$2; t[3] = \$3; t[4] = \$4; next }
        / @ [0-9a-f]+\)\$/ && \$1 ~ /^[0-9.]+\$/ {
            for (k = 1; k <= 4; k++) {
                m = k == 1 ? a : k == 2 ? b : k == 3 ? c : d
                if (index(\$0, m \" @ \")) s[k] += \$3
            }
        }
        END {
            for (k = 1; k <= 4; k++) { ts += t[k]; ss += s[k] }
            if (ss < 0.5) { print \"only \" ss \" s on the marked lines\"; exit 1 }
            for (k = 1; k <= 4; k++) {
                printf \"line %d: %.3f of the samples, %.3f by the clocks\\n\", k, s[k] / ss, t[k] / ts
                if (s[k] / ss - t[k] / ts > 0.04 || t[k] / ts - s[k] / ss > 0.04) bad = 1
            }
            exit bad
        }' hotlib.truth flat
"

# the library's hot line is named as its functions are, and its address
# is the library's own: addr2line finds the same line there
test_expect "-l: a library's line is 'func [lib.so] (file:line @ address)', addr2line agreeing" "
    $CGPROF report -b -l -p hotlib.data >flat 2>err &&
    llib=\$(line_of LIBHOT '$PROGS/hotlineslib.c') &&
    addr=\$(grep -o \"lib_spin \\[libhotlineslib.so\\] (hotlineslib.c:\$llib @ [0-9a-f]*)\" flat |
        head -n 1 | sed 's/.* @ //; s/)//') &&
    test -n \"\$addr\" &&
    addr2line -e libhotlineslib.so 0x\$addr | grep -q \"hotlineslib.c:\$llib\\\$\" &&
    l60=\$(line_of L60 '$PROGS/hotlines.c') &&
    addr=\$(grep -o \"spin60 (hotlines.c:\$l60 @ [0-9a-f]*)\" flat | head -n 1 | sed 's/.* @ //; s/)//') &&
    addr2line -e hotlib 0x\$addr | grep -q \"hotlines.c:\$l60\\\$\"
"

# gprof -l -z lists every line symbol of the executable: cgprof's are the
# same names at the same addresses (its PLT stubs aside, which gprof
# leaves out)
test_expect "-l -z: the executable's line symbols are gprof -l's, name and address" "
    gprof -b -l -p -z hot hot.glibc.gmon | awk 'NF >= 4 && / @ [0-9a-f]+\)\$/' |
        sed 's/^.*  \\([^ ].* (.* @ [0-9a-f]*)\\)\$/\\1/' | sort >want &&
    $CGPROF report -b -l -p -z hot.data 2>err | awk '/ @ [0-9a-f]+\)\$/ && !/\\[/' |
        sed 's/^.*  \\([^ ].* (.* @ [0-9a-f]*)\\)\$/\\1/' | sort >got &&
    test \$(wc -l <want) -gt 10 && diff -u want got
"

# calls by line: gprof -l on libcgprof's gmon.out of the same program
# (same counts) shows each of them; the cgprof profile adds the calls
# made from and into libc, which a gmon.out cannot hold
test_expect "-l -q: the calls from each line are gprof -l's on the same program's gmon.out" "
    gprof -b -l -q hot hot.cgprof.gmon | awk -f '$ROOT/tests/arcs.awk' | sort -u >want &&
    $CGPROF report -b -l -q hot.data 2>err | awk -f '$ROOT/tests/arcs.awk' | sort -u >got &&
    test \$(wc -l <want) -ge 4 && comm -23 want got >missing && ! test -s missing &&
    grep -q '^cpu_ms .* 4\$' got
"

# -A: the annotated source of the same program, as gprof annotates it
# from libcgprof's gmon.out (-m 2: main's one call, from libc, is only in
# the cgprof profile); the listing is compared up to its summary
for opts in "-A -m 2" "-A -x -m 2" "-l -A -m 2" "-l -A -x -m 2" "-b -A -x -m 2"; do
    test_expect "$opts: gprof's annotated source of the same program" "
        gprof $opts hot hot.cgprof.gmon | sed '/Top 10 Lines/,\$d' >want &&
        $CGPROF report $opts hot.data 2>err | sed '/Top 10 Lines/,\$d' >got &&
        grep -q ' -> ' want && diff -u want got
    "
done
test_expect "-A: main's line shows its one call (from libc's start-up)" "
    $CGPROF report -A hot.data 2>err >ann &&
    l=\$(awk '/^int main/ { print NR + 1; exit }' '$PROGS/hotlines.c') &&
    awk -v l=\$l '/^\\*\\*\\* File .*hotlines.c:/ { f = 1; n = 0; next } f { n++ } f && n == l' ann |
        grep -q '^ *1 -> {'
"

# a clone: heavy.constprop.0's lines are named for heavy (as DWARF and
# gprof name them) at addresses inside the clone, and hold its time
test_expect "-l: the lines of a clone (heavy.constprop.0) hold its time" "
    gcc -O2 -g -pg '$PROGS/clones.c' -o clones &&
    { nm clones | grep -q ' t heavy.constprop.0\$' || { echo 'no clone: skipped'; exit 0; }; } &&
    $CGPROF record -o clones.data ./clones >clones.truth &&
    $CGPROF report -b -l -p clones.data >flat 2>err &&
    lo=\$(nm -S clones | awk '\$4 == \"heavy.constprop.0\" { print \$1 }') &&
    sz=\$(nm -S clones | awk '\$4 == \"heavy.constprop.0\" { print \$2 }') &&
    grep -q 'heavy.constprop.0 (clones.c:[0-9]* @ ' flat &&
    awk -v lo=\$((0x\$lo)) -v hi=\$((0x\$lo + 0x\$sz)) '
        NR == FNR { heavy = \$1; total = \$3; next }
        / @ [0-9a-f]+\)\$/ && \$1 ~ /^[0-9.]+\$/ {
            a = \$NF; sub(/\\)/, \"\", a); v = 0
            for (i = 1; i <= length(a); i++) v = v * 16 + index(\"0123456789abcdef\", substr(a, i, 1)) - 1
            all += \$3
            if (v >= lo && v < hi) { in_clone += \$3; if (\$0 !~ / heavy(\\.constprop\\.0)? \\(/) bad = 1 }
        }
        END {
            printf \"clone lines %.3f of %.3f s; its clock %.1f of %.1f ms\\n\", in_clone, all, heavy, total
            if (bad || all == 0) exit 1
            d = in_clone / all - heavy / total
            exit d > 0.05 || d < -0.05
        }' clones.truth flat
"

test_expect "-l on a cgprof profile of a program without -g: functions without lines, no error" "
    gcc -O0 -pg '$PROGS/hotlines.c' -o nog && $CGPROF record -o nog.data ./nog 300000 >/dev/null &&
    $CGPROF report -b -l nog.data >out 2>err && grep -q ' spin60\$' out
"
test_expect "-i is still only for gmon.out" "
    ! $CGPROF report -i hot.data 2>err && grep -q 'only for gmon.out' err
"
test_done

#!/bin/sh
# t0260: source lines from DWARF.  For programs built with -g (C and C++,
# -O0 and -O2 with inlining, gcc and clang, DWARF 4 and 5, compressed
# sections), cgprof report prints what GNU gprof 2.40 prints, byte for
# byte: the source file of each static function in the index, and the
# line-by-line tables of -l.  Debug information in a separate file (by
# .gnu_debuglink or build-id) is found; a stripped program and a corrupt
# .debug_line give the report without lines and one line on stderr.  -A
# (annotated source), -C (execution counts), basic-block counts, symbol
# specs with files and lines, and -i (what each gmon.out holds) are here too.
. "$(dirname "$0")/lib.sh"

cd "$WORK" || exit 1
build() { # NAME COMPILER FLAGS... SOURCE
    name=$1 cc=$2
    shift 2
    $cc -pg "$@" -o "$name" 2>"$name.cc.log" || { cat "$name.cc.log"; return 1; }
    rm -f gmon.out && ./"$name" >/dev/null && mv gmon.out "$name.glibc.gmon" &&
    LD_PRELOAD=$LIBSO ./"$name" >/dev/null && mv gmon.out "$name.cgprof.gmon"
}
build cycles0 gcc -O0 -g "$PROGS/cycles.c" &&
build cycles2 gcc -O2 -g "$PROGS/cycles.c" &&
build calls2 gcc -O2 -g "$PROGS/calls.c" &&
build cxx0 g++ -O0 -g "$PROGS/cxx.cc" &&
build cxx2 g++ -O2 -g "$PROGS/cxx.cc" &&
build cycles2dw4 gcc -O2 -gdwarf-4 "$PROGS/cycles.c" &&
build cxx2z g++ -O2 -g -gz "$PROGS/cxx.cc" || exit 1
progs="cycles0 cycles2 calls2 cxx0 cxx2 cycles2dw4 cxx2z"
if command -v clang++ >/dev/null && build cxx2clang clang++ -O2 -g "$PROGS/cxx.cc"; then
    progs="$progs cxx2clang"
else
    test_skip "clang++ -O2 -g program" "no clang++"
fi

# same OPTS PROG GMON: cgprof report prints what gprof prints.
same() {
    gprof $1 "$2" "$3" >want 2>/dev/null && $CGPROF report $1 "$2" "$3" >got 2>err &&
        diff -u want got
}

for prog in $progs; do
    for rt in glibc cgprof; do
        for opts in "-b" "-b -l" "-b -l -p" "-b -l -q" "-b -l -z"; do
            test_expect "$prog ($rt runtime), $opts: identical to gprof" "
                same '$opts' $prog $prog.$rt.gmon
            "
        done
    done
done

for opts in "-b -l -a" "-b -l -T" "-b -l -E burn" "-b -l -f ring_a" "-b -l -N burn" \
    "-b -l -k ring_a/ring_b" "-b -l -pring_a" "-b -l -c" "-b -l -w 60"; do
    test_expect "cycles2, $opts: identical to gprof" "
        same '$opts' cycles2 cycles2.glibc.gmon
    "
done

# Independent of gprof: the static ring_b of cycles.c is named with its
# file, and -l puts its first line (its opening brace, in cycles.c) beside it.
line=$(awk '/^static.*ring_b\(/ { f = 1 } f && /^{/ { print NR; exit }' "$PROGS/cycles.c")
test_expect "static functions named with their file; -l names ring_b's line ($line)" "
    $CGPROF report -b -q cycles0 cycles0.glibc.gmon | grep -q ' ring_b (cycles.c) ' &&
    $CGPROF report -b -l -q cycles0 cycles0.glibc.gmon | grep -q 'ring_b (cycles.c:$line @ '
"

# symbol specs with a file or a line, with and without -l
for opts in "-b -pcycles.c:burn" "-b -qcycles.c:$line" "-b -Pcycles.c" "-b -e 19" \
    "-b -E cycles.c:burn" "-b -F cycles.c:even" "-b -pnosuch.c" "-b -p:main" \
    "-b -l -pcycles.c:$line" "-b -l -qcycles.c:ring_b" "-b -l -Pcycles.c:20" \
    "-b -l -N cycles.c:19" "-b -l -pburn -pcycles.c:27" "-b -l -qcycles.c"; do
    test_expect "cycles2, $opts: identical to gprof" "
        same '$opts' cycles2 cycles2.glibc.gmon && test -s got
    "
done

# -A: annotated source, with -x, -l, -m, -t, and tables before it
for prog in cycles0 cycles2 cxx0 cxx2 calls2; do
    for opts in "-A" "-A -x" "-b -A -l" "-b -A -l -x" "-b -p -A -m 100 -t 3"; do
        test_expect "$prog, $opts: identical to gprof" "
            same '$opts' $prog $prog.glibc.gmon && grep -q '^\*\*\* File /.*:\$' got
        "
    done
done
test_expect "-A -y writes FILE-ann files as gprof does" "
    mkdir -p ya yb && (cd ya && gprof -b -A -y ../cxx2 ../cxx2.glibc.gmon >out) &&
    (cd yb && $CGPROF report -b -A -y ../cxx2 ../cxx2.glibc.gmon >out) &&
    diff -r ya yb && test -s yb/cxx.cc-ann
"
test_expect "-A -I: a moved source is found by its base name" "
    mkdir -p mv/src && cp $PROGS/calls.c mv/src/ && (cd mv/src && gcc -O1 -g -pg calls.c -o ../calls) &&
    (cd mv && ./calls >/dev/null) && mv mv/src mv/moved && cd mv &&
    $CGPROF report -b -A calls gmon.out >got 2>err && test ! -s got && grep -q 'could not locate' err &&
    gprof -b -A -I moved calls gmon.out >want && $CGPROF report -b -A -I /nonexistent:moved calls gmon.out >got &&
    diff -u want got && grep -q '^\*\*\* File ' got
"

# Basic-block counts (gmon.out tag 2; gcc no longer makes them): a file
# made for the purpose, 300 blocks 16 bytes apart from the histogram's
# start with counts 1, 2, ... (tests/unit/gmon_tool.c), then 5 more.
cc -std=c11 -O1 -D_GNU_SOURCE -I"$ROOT/analysis" "$ROOT/tests/unit/gmon_tool.c" \
    "$ROOT/analysis/gmon.c" "$ROOT/analysis/gmon_write.c" -lm -o gmon_tool &&
    ./gmon_tool edit cycles2.glibc.gmon bb1.gmon bb=300 && ./gmon_tool edit bb1.gmon bb.gmon bb=5 ||
    exit 1
for opts in "-b -l -C" "-b -l -C -z" "-b -l -A" "-b -l -A -x" "-b -l -C -A -p" "-b -C" "-b -A -x"; do
    test_expect "cycles2 with basic-block counts, $opts: identical to gprof" "
        same '$opts' cycles2 bb.gmon
    "
done
test_expect "basic-block counts show in -l -C and -A -x; without -l, one warning" "
    $CGPROF report -b -l -C cycles2 bb.gmon | grep -q '^/.*cycles.c:[0-9]*: (burn:0x[0-9a-f]*) [0-9]* executions' &&
    $CGPROF report -b -l -A -x cycles2 bb.gmon | grep -q '^ *[0-9]*,[0-9]* -> ' &&
    $CGPROF report -b -C cycles2 bb.gmon 2>err >/dev/null && test \$(wc -l <err) -eq 1 &&
    grep -q 'ignoring basic-block exec counts' err
"
for opts in "-b -C" "-b -C -z" "-b -l -C -q"; do
    test_expect "cxx2, $opts (execution counts): identical to gprof" "
        same '$opts' cxx2 cxx2.glibc.gmon && test -s got
    "
done

for opts in "-i" "-i -b -p" "-b -i -l -q"; do
    test_expect "$opts on two gmon.out files: identical to gprof" "
        gprof $opts cycles2 cycles2.glibc.gmon cycles2.cgprof.gmon >want &&
        $CGPROF report $opts cycles2 cycles2.glibc.gmon cycles2.cgprof.gmon >got &&
        diff -u want got && grep -q '^File .cycles2.cgprof.gmon. (version 1) contains:' got
    "
done

# cgprof profiles: the PLT stubs are named as perf names them; gmon.out
# reports keep gprof's way (identical above), where their time goes to _init.
test_expect "cgprof profile: PLT stubs named like printf@plt, none in gmon.out reports" "
    want=\$(objdump -d cycles2 | sed -n 's/^[0-9a-f]* <\\(.*@plt\\)>:\$/\\1/p' | sort -u) &&
    test -n \"\$want\" && $CGPROF record -o c.data ./cycles2 >/dev/null &&
    $CGPROF report -b -z -p c.data 2>/dev/null | grep -o '[^ ]*@plt\$' | sort -u >got &&
    echo \"\$want\" | diff - got &&
    ! $CGPROF report -b -z -p cycles2 cycles2.glibc.gmon | grep -q '@plt'
"

# --json of a cgprof profile: samples by source line; cycles.c's burn loop
# (its two lines, found in the source) has the most.
loop=$(awk '/^static NOINLINE void burn/ { f = 1 } f && /for \(int i/ { print NR; exit }' "$PROGS/cycles.c")
test_expect "cgprof profile --json: samples by line, burn's loop ($loop, $((loop + 1))) first" "
    $CGPROF report --json c.data >j.json 2>/dev/null &&
    python3 -c 'import json, sys; d = json.load(open(\"j.json\")); l = d[\"lines\"]; t = l[0]; print(t)
assert t[\"file\"].endswith(\"/cycles.c\") and t[\"module\"] == \"cycles2\" and t[\"line\"] in ($loop, $loop + 1), t
assert sum(x[\"samples\"] for x in l) <= round(d[\"total_seconds\"] * d[\"rate\"]) * 1.3 + 5'
"

test_expect "--json with -l: one 'not supported yet' line, status 2" "
    $CGPROF report --json -l cycles2 cycles2.glibc.gmon >out 2>err; test \$? -eq 2 &&
    test ! -s out && test \$(wc -l <err) -eq 1 && grep -q 'not supported yet' err
"

test_expect "debug information by .gnu_debuglink: the same report" "
    cp cycles2 linked && objcopy --only-keep-debug linked linked.debug && strip -g linked &&
    objcopy --add-gnu-debuglink=linked.debug linked &&
    same '-b -l' linked cycles2.glibc.gmon && cmp want got &&
    gprof -b -l cycles2 cycles2.glibc.gmon | cmp - got && test ! -s err
"

test_expect "debug information by build-id (CGPROF_DEBUG_DIR): the report of the unstripped program" "
    cp cycles2 byid && objcopy --only-keep-debug byid byid.debug && strip -g byid &&
    id=\$(readelf -n byid | awk '/Build ID/ { print \$3 }') && test -n \"\$id\" &&
    mkdir -p dbg/.build-id/\$(echo \$id | cut -c1-2) &&
    mv byid.debug dbg/.build-id/\$(echo \$id | cut -c1-2)/\$(echo \$id | cut -c3-).debug &&
    gprof -b -l cycles2 cycles2.glibc.gmon >want &&
    CGPROF_DEBUG_DIR=\$PWD/dbg $CGPROF report -b -l byid cycles2.glibc.gmon >got &&
    diff -u want got
"

test_expect "a stripped program: the report without lines, as gprof's, and one note" "
    cp cycles2 stripped && strip -g stripped &&
    same '-b -l' stripped cycles2.glibc.gmon && ! grep -q 'cycles.c' got &&
    test \$(wc -l <err) -eq 1 && grep -q 'no debugging information' err
"

# corrupt FILL: cycles2 with its .debug_line overwritten from offset 4 by
# the bytes FILL prints (the unit length stays).
corrupt() {
    cp cycles2 bad &&
    set -- $(readelf -S -W bad | awk '$2 == ".debug_line" { print $5, $6 }') &&
    off=$(printf %d 0x$1) size=$(printf %d 0x$2) &&
    $FILL | head -c $((size - 4)) | dd of=bad bs=1 seek=$((off + 4)) conv=notrunc 2>/dev/null
}
for FILL in "cat /dev/zero" "yes 0123456789abcdef" "printf \\377\\377"; do
    test_expect "corrupt .debug_line ($FILL): the report goes on, as gprof's, one warning" "
        corrupt && same '-b -l' bad cycles2.glibc.gmon && same '-b' bad cycles2.glibc.gmon &&
        test \$(wc -l <err) -eq 1 && grep -q 'bad: debugging information unreadable' err
    "
done
# Each arc's call sites in --json: which line of the caller made how many
# of the calls (main calls work() 3, 5 and 7 times from three lines).
# The lines are found in the source by their markers, the counts are the
# program's own.
call_sites() {
    gcc -O0 -g -pg "$PROGS/callsites.c" -o callsites && rm -f cs.data &&
        $CGPROF record -F 0 -o cs.data ./callsites >/dev/null &&
        $CGPROF report --json cs.data >cs.json || return 1
    for s in A B C; do
        grep -n "SITE_$s \\*/" "$PROGS/callsites.c" | cut -d: -f1
    done >lines && cat lines &&
        python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
lines = [int(x) for x in open(sys.argv[2])]
arc = [a for a in j["arcs"] if a["caller"] == "main" and a["callee"] == "work"][0]
got = sorted((s["line"], s["count"]) for s in arc["sites"])
print("main -> work:", arc["count"], "calls from", got)
assert all(s["file"].endswith("/callsites.c") for s in arc["sites"]), arc["sites"]
assert got == list(zip(lines, [3, 5, 7])), (got, lines)
leaf = [a for a in j["arcs"] if a["caller"] == "work" and a["callee"] == "leaf"][0]
print("work -> leaf:", leaf["sites"])
assert len(leaf["sites"]) == 1 and leaf["sites"][0]["count"] == 15' cs.json lines
}
test_expect "--json: each arc's call sites, file:line and exact counts" call_sites

test_done

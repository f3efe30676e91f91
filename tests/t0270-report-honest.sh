#!/bin/sh
# t0270: every number cgprof report prints is one the profile supports
# (issue 13): names and files intact, no nan for an unsampled profile, an
# entry for every [N], library symbols only over their own bytes, corrupt
# counts refused, every input used or refused.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg "$PROGS/calls.c" -o "$WORK/calls" &&
gcc -O2 -pg -pthread "$PROGS/threads.c" -o "$WORK/threads" &&
g++ -O0 -g -pg "$PROGS/cxx.cc" -o "$WORK/cxx" || exit 1
(cd "$WORK" && $CGPROF record -o calls.data ./calls >/dev/null &&
    $CGPROF record -o threads.data ./threads >/dev/null &&
    $CGPROF record -o cxx.data ./cxx >/dev/null) || exit 1

# cgdata_record FILE TAG: "OFFSET SIZE" of the payload of FILE's first
# record TAG (docs/profile-format.md), read with od.
cgdata_record() {
    _size=$(wc -c <"$1") _pos=16
    while [ $((_pos + 16)) -le "$_size" ]; do
        _tag=$(od -An -t u4 -j $_pos -N 4 "$1" | tr -d ' ')
        _len=$(od -An -t u8 -j $((_pos + 8)) -N 8 "$1" | tr -d ' ')
        [ "$_tag" -eq "$2" ] && { echo "$((_pos + 16)) $_len"; return 0; }
        _pos=$((_pos + 16 + _len))
    done
    return 1
}

# entries_dense REPORT: the call graph's entries are [1]..[N], each once,
# and every [N] printed has its entry (tests/check-report.sh).
entries_dense() {
    sed -n 's/^\[\([0-9]*\)\].*/\1/p' "$1" | sort -n >entries &&
    seq 1 "$(wc -l <entries)" | diff - entries >/dev/null ||
        { echo "entries of $1 are not 1..N:"; tr '\n' ' ' <entries; echo; return 1; }
    sh "$ROOT/tests/check-report.sh" "$1"
}

# --- 1: names and files outlive the symbol tables they came from
test_expect "C++ -O0 -g: each static function's file is a source file's name (index and --json)" "
    $CGPROF report -b cxx.data >rep &&
    sed -n '/^Index by function name/,\$p' rep | grep -o ') ([^()]*)' | sed 's/^) (//; s/)\$//' >files &&
    $CGPROF report --json cxx.data | grep -o '\"file\": \"[^\"]*\"' | cut -d'\"' -f4 >>files &&
    grep -q cxx.cc files &&
    # a source file's name (the index, as gprof prints it) or the path of a
    # source file that exists (--json, from DWARF): never garbage
    while read -r f; do
        case \$f in
        /*) [ -f \"\$f\" ] || { echo \"not a source file: \$f\"; exit 1; } ;;
        # a relative path from DWARF (in a library, relative to where it was
        # built, as its line table gives it, e.g. ../sysdeps/x86/libc-start.c)
        */*) echo \"\$f\" | grep -qxE '[A-Za-z0-9_.+/-]+/[A-Za-z0-9_+-][A-Za-z0-9_.+-]*\\.(c|cc|cpp|cxx|h|hpp|S|s)' ||
            { echo \"not a source file path: \$f\"; exit 1; } ;;
        *) echo \"\$f\" | grep -qxE '[A-Za-z0-9_+-][A-Za-z0-9_.+-]*\\.(c|cc|cpp|cxx|h|hpp|S|s)' ||
            { echo \"not a source file name: \$f\"; exit 1; } ;;
        esac
    done <files
"

# --- 2: a profile without samples
test_expect "-F 0: 'no time accumulated', the call counts, no nan, the file's rate in --json" "
    $CGPROF record -F 0 -o f0.data ./calls >/dev/null && $CGPROF report -b f0.data >rep &&
    grep -q '^ no time accumulated' rep &&
    awk '\$NF == \"a\" && NF == 7 { a = \$4 } \$NF == \"b\" && NF == 7 { b = \$4 }
         END { if (a != 10 || b != 100) { print \"calls: a\", a, \"b\", b; exit 1 } }' rep &&
    ! grep -n -i nan rep && entries_dense rep &&
    $CGPROF report --json f0.data >j && grep -q '\"rate\": 1000,' j &&
    sh $ROOT/tests/check-report.sh j
"

# --- 5: an entry for every [N], numbered without gaps
for opts in '-b' '-b -E work' '-b -n hot' '-b -N work' '-b -e hot' '-b -z'; do
    test_expect "threads, report $opts: entries [1]..[N], an entry for each [N] printed" "
        $CGPROF report $opts threads.data >rep && entries_dense rep
    "
done
test_expect "C++ -O0, report -b: entries [1]..[N], an entry for each [N] printed" "
    $CGPROF report -b cxx.data >rep && entries_dense rep
"

# --- 6: a stripped library's symbols own only their own bytes
test_expect "stripped library: a local function's time goes to [libhidden.so], not to the symbol before it" "
    gcc -O2 -fno-toplevel-reorder -shared -fPIC $PROGS/libhidden.c -o libhidden.so &&
    nm libhidden.so | grep -q ' t hidden_work' && strip --strip-all libhidden.so &&
    ! nm libhidden.so 2>/dev/null | grep -q hidden_work &&
    gcc -O2 $PROGS/usehidden.c -L. -lhidden -o usehidden &&
    LD_LIBRARY_PATH=. $CGPROF record -o hidden.data ./usehidden &&
    $CGPROF report -b -p hidden.data >flat &&
    awk '\$NF == \"[libhidden.so]\" && \$(NF - 1) ~ /^[0-9.]+\$/ { lib = \$1 } NF > 1 && \$(NF - 1) == \"tiny\" { tiny = \$1 }
         END { print \"[libhidden.so]\", lib + 0, \"% tiny\", tiny + 0, \"%\";
               exit !(lib >= 90 && tiny + 0 <= 5) }' flat
"

# --- 12: -z lists the program's unused functions, not every library's
test_expect "-z on a cgprof profile: the executable's unused functions; of libraries only those the report shows anyway" "
    $CGPROF report -b calls.data >plain && $CGPROF report -b -z -p calls.data >flat &&
    grep -o '[^ ]* \\[lib[^]]*\\]\$' flat | sort -u >zlib &&
    grep -o '[^ ]* \\[lib[^]]*\\]' plain | sort -u >shown &&
    { ! comm -23 zlib shown | grep . || { echo \"(\$(comm -23 zlib shown | wc -l) more with -z)\"; false; }; } &&
    grep -q ' main\$' flat && grep -q ' frame_dummy\$' flat
"

# --- 9: every input is used, or refused
test_expect "PROG with a cgprof profile: the symbols come from PROG (a moved program)" "
    mkdir -p elsewhere && mv calls elsewhere/moved &&
    $CGPROF report -b -p elsewhere/moved calls.data >flat 2>err; rc=\$?; mv elsewhere/moved calls &&
    test \$rc -eq 0 && ! grep -q 'no symbols' err &&
    awk '\$NF == \"b\" && \$4 == 100 { b = 1 } \$NF == \"a\" && \$4 == 10 { a = 1 } END { exit !(a && b) }' flat ||
        { cat err flat; false; }
"
test_expect "gmon.out files with a cgprof profile: refused, status 2, both named" "
    LD_PRELOAD=$LIBSO ./calls >/dev/null && $CGPROF report calls gmon.out calls.data >out 2>err
    test \$? -eq 2 && test \$(wc -l <err) -eq 1 && grep -q 'calls.data' err && grep -q 'gmon.out' err
"
test_expect "-k LIBFUNC/main: a library function is named without its [library]" "
    $CGPROF report -b -q -k __libc_start_call_main/main calls.data >graph &&
    grep -B1 '^\[[0-9]*\].* main \[' graph | grep -q '<spontaneous>'
"
test_expect "-e LIBFUNC: its entry is left out" "
    $CGPROF report -b -q calls.data | grep -q '^\[[0-9]*\].*__libc_start_call_main' &&
    $CGPROF report -b -q -e __libc_start_call_main calls.data >graph &&
    ! grep '^\[[0-9]*\].*__libc_start_call_main' graph
"
test_expect "a function name that matches nothing: a warning naming it" "
    $CGPROF report -b -p -e no_such_function calls.data >out 2>err &&
    grep -q \"no function is named 'no_such_function'\" err
"

# --- 10: counts near 2^64 are refused, never summed into a wrong graph
# (from a profile that says the runtime lost samples, as one recorded on a
# busy machine may: that warning comes after a report, never before an
# error, which stays one line)
test_expect "arc counts near 2^64 (each arc's callee made another's): status 1 and one line, never a crash" "
    cp calls.data lost.data && set -- \$(cgdata_record calls.data 5) &&
    printf '\\002\\000\\000\\000\\000\\000\\000\\000' |
        dd of=lost.data bs=1 seek=\$((\$1 + 8)) conv=notrunc 2>/dev/null &&
    $CGPROF report -b lost.data >/dev/null 2>err && grep -q '2 samples were lost' err &&
    set -- \$(cgdata_record calls.data 4) && off=\$1 &&
    n=\$(od -An -t u8 -j \$off -N 8 calls.data | tr -d ' ') && test \$n -ge 3 &&
    t=0 && while [ \$t -lt \$n ]; do j=0; while [ \$j -lt \$n ]; do
        [ \$t -eq \$j ] && { j=\$((j + 1)); continue; }
        cp lost.data big.data && i=0 && while [ \$i -lt \$n ]; do
            printf '\\000\\000\\000\\000\\000\\000\\000\\300' |
                dd of=big.data bs=1 seek=\$((off + 8 + i * 32 + 24)) conv=notrunc 2>/dev/null
            i=\$((i + 1)); done
        dd if=calls.data of=big.data bs=1 skip=\$((off + 12 + t * 32)) seek=\$((off + 12 + j * 32)) \
            count=4 conv=notrunc 2>/dev/null &&
        dd if=calls.data of=big.data bs=1 skip=\$((off + 24 + t * 32)) seek=\$((off + 24 + j * 32)) \
            count=8 conv=notrunc 2>/dev/null &&
        timeout 10 $CGPROF report -b big.data >out 2>err; rc=\$?
        [ \$rc -eq 1 ] && [ \$(wc -l <err) -eq 1 ] && grep -q 'big.data: .*2^64' err ||
            { echo \"callee of arc \$t given to arc \$j: status \$rc\"; cat err; exit 1; }
        j=\$((j + 1)); done; t=\$((t + 1)); done
"
test_done

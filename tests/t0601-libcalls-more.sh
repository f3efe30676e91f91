#!/bin/sh
# t0601: library calls, more of them (issue 20's "Must show", beside
# t0600): the program sees nothing of the counting (pointer identity,
# dlsym, errno, longjmp out of a callback of a counted call, variadic calls
# with doubles, exit and vfork through the PLT, an LD_PRELOADed malloc);
# known counts from a thread, a signal handler, a constructor, an atexit
# handler, a forked child and C++ calling libstdc++, checked against
# ltrace -c and uftrace; and every output carries the same exact counts
# (report, --propagate=counts, --json, pprof, callgrind, dot, html), while
# --format gmon stays as GNU gprof reads it.  The same built -fno-plt
# (C and C++), and through an executable's .plt.got.  Programs:
# tests/progs/libcalls_more.c, libcalls_malloc.c, libcalls_cxx.cc.
. "$(dirname "$0")/lib.sh"

N=1000
ARCS="python3 $ROOT/tests/libcalls_arcs.py"
cd "$WORK" &&
gcc -O1 -fPIC -shared "$PROGS/libcalls_ptr.c" -o liblcp.so &&
gcc -O1 -fPIC -shared "$PROGS/libcalls_malloc.c" -o liblcmalloc.so &&
for b in lazy now; do
    f=
    [ $b = now ] && f="-Wl,-z,now -Wl,-z,relro"
    gcc -O1 -pg -pthread "$PROGS/libcalls_more.c" -o $b -ldl -L. -llcp -Wl,-rpath,'$ORIGIN' $f &&
    gcc -O1 -pg -pthread -DTAKE_ADDRESS "$PROGS/libcalls_more.c" -o $b.addr -ldl -L. -llcp \
        -Wl,-rpath,'$ORIGIN' $f || exit 1
done &&
g++ -O1 -pg "$PROGS/libcalls_cxx.cc" -o cxx || exit 1
cd - >/dev/null || exit 1

# lib_arcs PROFILE: the report's arcs, IFUNC strlen named strlen
lib_arcs() {
    "$CGPROF" report -b -q "$@" | awk -f "$ROOT/tests/arcs.awk" | sort -u |
        sed 's/ __strlen_[a-z0-9_]* / strlen /'
}

# -- the program sees nothing -------------------------------------------
# the counted calls of "see" (the check that they were hooked at all)
cat >"$WORK/want.see" <<EOF
main exit 1
see free 1000
see malloc 1000
see open 1
see printf 1
see qsort 1
see snprintf 1
see vfork 1
EOF
for b in lazy now; do
    test_expect "$b binding: pointers, dlsym, errno, longjmp, variadic doubles, exit, vfork: same status and output as without" "
        ./$b.addr see >out0; a=\$?; $CGPROF record -o a.data ./$b.addr see >out1; c=\$?;
        echo \"\$a \$c\"; test \$a -eq 42 && test \$c -eq 42 && diff out0 out1 &&
        grep -q '^printf 0.25 -1.75 3\$' out1 &&
        ./$b see >/dev/null; a=\$?; $CGPROF record -o s.data ./$b see >/dev/null; c=\$?;
        test \$a -eq 42 && test \$c -eq 42 &&
        lib_arcs s.data | grep -E '^(see|main) (exit|free|malloc|open|printf|qsort|snprintf|vfork) ' >got.see &&
        diff -u want.see got.see
    "
    test_expect "$b binding: an LD_PRELOADed malloc still gets the program's calls, counted to it" "
        LD_PRELOAD=\$PWD/liblcmalloc.so ./$b see >/dev/null 2>err0; test \$? -eq 42 &&
        n0=\$(sed -n 's/^interposed malloc //p' err0) && test \$n0 -ge 1000 &&
        LD_PRELOAD=\$PWD/liblcmalloc.so $CGPROF record -o m.data ./$b see >/dev/null 2>err1; test \$? -eq 42 &&
        n1=\$(sed -n 's/^interposed malloc //p' err1) && echo \"\$n0 \$n1\" && test \$n1 -ge \$n0 &&
        $CGPROF report -b -q m.data >m.txt &&
        grep -E '^ +[0-9.]+ +[0-9.]+ +1000/1000 +malloc \\[liblcmalloc.so\\]' m.txt &&
        grep -E '^\\[[0-9]+\\].* 1000 +malloc \\[liblcmalloc.so\\]' m.txt
    "
done

# -- known counts: thread, signal handler, constructor, atexit, child ------
cat >"$WORK/want" <<EOF
counts raise 1000
early strlen 5
late getuid 7
on_usr2 strlen 1000
worker strlen 1000
EOF
pick='^(counts|early|late|on_usr2|worker) (strlen|raise|getuid) '
for b in lazy now; do
    test_expect "$b binding: known counts from a thread, a signal handler, a constructor, an atexit handler, a forked child" "
        rm -f $b.data*; $CGPROF record -o $b.data ./$b counts $N; test \$? -eq 43 &&
        lib_arcs $b.data | grep -E '$pick' >got && diff -u want got &&
        ls $b.data.* >child && test \$(wc -l <child) -eq 1 &&
        lib_arcs \$(cat child) | grep getegid >got.child && echo 'counts getegid 13' | diff -u - got.child
    "
done

# -- every output: the same exact counts ------------------------------------
test_expect "flat profile and --propagate=counts: the library functions' called column" "
    $CGPROF report -b -p now.data >flat && $CGPROF report -b -p --propagate=counts now.data >flatp &&
    for f in flat flatp; do
        awk '\$NF ~ /^\\[/ && \$(NF-1) ~ /^(strlen|__strlen_[a-z0-9_]+|raise|getuid)\$/ { print \$(NF-1), \$4 }' \$f |
            sed 's/^__strlen_[a-z0-9_]* /strlen /' | sort >got.\$f &&
        printf 'getuid 7\\nraise 1000\\nstrlen 2005\\n' | diff -u - got.\$f || return 1
    done &&
    $CGPROF report -b -q --propagate=counts now.data | awk -f $ROOT/tests/arcs.awk | sort -u |
        sed 's/ __strlen_[a-z0-9_]* / strlen /' | grep -E '$pick' >got.prop && diff -u want got.prop
"
test_expect "--json: the arcs carry the library calls' exact counts" "
    $CGPROF report --json now.data >now.json && $ARCS json now.json | grep -E '$pick' >got.json &&
    diff -u want got.json
"
if command -v go >/dev/null 2>&1; then
    test_expect "pprof: go tool pprof -raw has the library calls' exact counts" "
        $CGPROF export -f pprof -o now.pb.gz now.data && go tool pprof -raw now.pb.gz >now.raw &&
        $ARCS pprof now.raw | grep -E '$pick' >got.pprof && diff -u want got.pprof
    "
else
    test_skip "pprof: go tool pprof -raw has the library calls' exact counts" "no go"
fi
test_expect "callgrind, dot, html: the library calls' exact counts" "
    $CGPROF export -f callgrind -o now.cg now.data && $ARCS callgrind now.cg | grep -E '$pick' >got.cg &&
    diff -u want got.cg &&
    $CGPROF export -f dot -t 0 -o now.dot now.data && $ARCS dot now.dot | grep -E '$pick' >got.dot &&
    diff -u want got.dot &&
    $CGPROF export -f html -o now.html now.data && $ARCS html now.html | grep -E '$pick' >got.html &&
    diff -u want got.html
"
test_expect "--format gmon: GNU gprof reads it, the -pg arcs and no library function" "
    rm -f g.out*; $CGPROF record --format gmon -o g.out ./lazy counts $N; test \$? -eq 43 &&
    gprof -b -q lazy g.out >g.txt && ! grep -wE 'strlen|__strlen_[a-z0-9_]+|raise|getuid' g.txt &&
    arcs_gprof lazy g.out >g.arcs && cat g.arcs &&
    grep -x 'main counts 1' g.arcs
"

# -- C++ calling libstdc++ ----------------------------------------------------
test_expect "C++: operator new/delete and std::string::_M_append counted exactly, names demangled" "
    $CGPROF record -o x.data ./cxx $N && $CGPROF report -b -p x.data >x.flat && head -12 x.flat &&
    grep -E '^ *[0-9.]+ .* 1001 +.* operator new\\(unsigned long\\) \\[libstdc\\+\\+\\.so\\.6\\]\$' x.flat &&
    grep -E '^ *[0-9.]+ .* 1001 +.* operator delete\\(void\\*, unsigned long\\) \\[libstdc\\+\\+\\.so\\.6\\]\$' x.flat &&
    grep -E '^ *[0-9.]+ .* 1000 +.* std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_append\\(char const\\*, unsigned long\\) \\[libstdc\\+\\+\\.so\\.6\\]\$' x.flat &&
    $CGPROF report -b -q x.data >x.cg &&
    grep -E '^ +[0-9.]+ +[0-9.]+ +1000/1001 +churn\\(long\\) \\[' x.cg
"

# -- calls through the GOT: -fno-plt, and .plt.got --------------------------
# The same programs built -fno-plt (their call sites patched, the GOT
# slots untouched, docs/libcalls.md), and the PLT build that takes &strlen
# (its strlen calls go through a .plt.got entry): the same known counts,
# the same checks of what the program sees.  Neither ltrace nor uftrace
# sees a call that bypasses the PLT (both tried: ltrace -c finds only
# __monstartup and __cxa_atexit, uftrace none of them), so the programs'
# own numbers are the truth here.
cd "$WORK" &&
for b in lazy now; do
    f=
    [ $b = now ] && f="-Wl,-z,now -Wl,-z,relro"
    gcc -O1 -pg -fno-plt -pthread "$PROGS/libcalls_more.c" -o np.$b -ldl -L. -llcp \
        -Wl,-rpath,'$ORIGIN' $f &&
    gcc -O1 -pg -fno-plt -pthread -DTAKE_ADDRESS "$PROGS/libcalls_more.c" -o np.$b.addr -ldl \
        -L. -llcp -Wl,-rpath,'$ORIGIN' $f || exit 1
done &&
g++ -O1 -pg -fno-plt "$PROGS/libcalls_cxx.cc" -o cxx.np || exit 1
cd - >/dev/null || exit 1

for b in lazy now; do
    test_expect "-fno-plt, $b binding: pointers, dlsym, errno, longjmp, variadic doubles, exit, vfork as without; the same calls counted" "
        ./np.$b.addr see >out0; a=\$?; $CGPROF record -o npa.data ./np.$b.addr see >out1; c=\$?;
        echo \"\$a \$c\"; test \$a -eq 42 && test \$c -eq 42 && diff out0 out1 &&
        grep -q '^printf 0.25 -1.75 3\$' out1 &&
        $CGPROF record -o nps.data ./np.$b see >/dev/null; test \$? -eq 42 &&
        lib_arcs nps.data | grep -E '^(see|main) (exit|free|malloc|open|printf|qsort|snprintf|vfork) ' >got.npsee &&
        diff -u want.see got.npsee
    "
    test_expect "-fno-plt, $b binding: known counts from a thread, a signal handler, a constructor, an atexit handler, a forked child" "
        objdump -d np.$b | grep -qE 'call +\\*0x[0-9a-f]+\\(%rip\\) +# [0-9a-f]+ <strlen@' &&
        rm -f np.$b.data*; $CGPROF record -o np.$b.data ./np.$b counts $N; test \$? -eq 43 &&
        lib_arcs np.$b.data | grep -E '$pick' >got.np && diff -u want got.np &&
        ls np.$b.data.* >child.np && test \$(wc -l <child.np) -eq 1 &&
        lib_arcs \$(cat child.np) | grep getegid >got.npc && echo 'counts getegid 13' | diff -u - got.npc
    "
done

test_expect ".plt.got: the calls of a function whose address the executable takes are counted, its address unchanged" "
    objdump -d -j .plt.got lazy.addr | grep -q '<strlen@plt>:' &&
    rm -f pg.data*; $CGPROF record -o pg.data ./lazy.addr counts $N; test \$? -eq 43 &&
    lib_arcs pg.data | grep -E '$pick' >got.pg && diff -u want got.pg &&
    $CGPROF record -o pgs.data ./lazy.addr see >/dev/null; test \$? -eq 42
"

test_expect "C++ -fno-plt: operator new/delete and std::string::_M_append counted exactly, names demangled" "
    objdump -d cxx.np | grep -qE 'call +\\*0x[0-9a-f]+\\(%rip\\) +# [0-9a-f]+ <_Znwm@' &&
    $CGPROF record -o xn.data ./cxx.np $N && $CGPROF report -b -p xn.data >xn.flat && head -12 xn.flat &&
    grep -E '^ *[0-9.]+ .* 1001 +.* operator new\\(unsigned long\\) \\[libstdc\\+\\+\\.so\\.6\\]\$' xn.flat &&
    grep -E '^ *[0-9.]+ .* 1001 +.* operator delete\\(void\\*, unsigned long\\) \\[libstdc\\+\\+\\.so\\.6\\]\$' xn.flat &&
    grep -E '^ *[0-9.]+ .* 1000 +.* std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_append\\(char const\\*, unsigned long\\) \\[libstdc\\+\\+\\.so\\.6\\]\$' xn.flat &&
    $CGPROF report -b -q xn.data >xn.cg &&
    grep -E '^ +[0-9.]+ +[0-9.]+ +1000/1001 +churn\\(long\\) \\[' xn.cg
"

# -- a real program: Lua 5.4 built -fno-plt ----------------------------------
# Its ~1000 calls through the GOT patched at start-up: the same output, and
# every arc (library calls and -pg calls) with the count its PLT build
# gives.  Both built with a fixed string-hash seed (Lua's is made from the
# time and addresses) and a one-entry string cache (Lua's is indexed by the
# C string's address): else a few counts change from run to run.
SRC=$ROOT/bench/out/lua-src
if ! sh "$ROOT/bench/fetch-lua.sh" "$SRC" >"$WORK/fetch.log" 2>&1; then
    test_skip "Lua 5.4 built -fno-plt" "cannot fetch lua5.4 with apt-get source"
else
    LUA=$(ls -d "$SRC"/lua5.4-*/src)
    mkdir -p "$WORK/inc" &&
        echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' >"$WORK/inc/lua5.4-deb-multiarch.h" &&
        for v in plt noplt; do
            f=
            [ $v = noplt ] && f=-fno-plt
            gcc -O2 -pg $f -DLUA_USE_LINUX '-Dluai_makeseed(L)=0u' -DSTRCACHE_N=1 -DSTRCACHE_M=1 \
                -I"$WORK/inc" -o "$WORK/lua.$v" \
                $(ls "$LUA"/*.c | grep -v -e /luac.c -e /onelua.c) -lm -ldl || exit 1
        done
    test_expect "Lua 5.4 built -fno-plt: the same output, and the arcs and counts of its PLT build" "
        test \$(objdump -d lua.noplt | grep -cE 'call +\\*0x[0-9a-f]+\\(%rip\\)') -gt 500 &&
        ./lua.noplt $ROOT/bench/workload.lua >out.l0 &&
        $CGPROF record -o lnp.data ./lua.noplt $ROOT/bench/workload.lua >out.l1 && cmp out.l0 out.l1 &&
        $CGPROF record -o lp.data ./lua.plt $ROOT/bench/workload.lua >/dev/null &&
        lib_arcs lnp.data >lnp.arcs && lib_arcs lp.data >lp.arcs && wc -l lp.arcs &&
        test \$(wc -l <lp.arcs) -gt 700 &&
        grep -E '^(l_alloc free|luaM_malloc_ realloc|str_format snprintf|luaO_pushvfstring strchr) ' lp.arcs >libs &&
        test \$(wc -l <libs) -eq 4 && diff -u lp.arcs lnp.arcs
    "
fi

# -- independent counts: ltrace -c and uftrace (slow: N = 100) --------------
# totals per function over the process and its forked child
sum_cgprof() {
    for p in "$@"; do "$CGPROF" report -b -p "$p"; done |
        sed 's/ __strlen_[a-z0-9_]* \[/ strlen [/' |
        awk 'NF >= 7 && $NF ~ /^\[/ { c[$(NF-1)] += $4 } END { for (f in c) print f, c[f] }' |
        grep -E '^(strlen|raise|getuid|getegid) ' | sort
}
if ! command -v ltrace >/dev/null 2>&1 || ! ltrace -c true >/dev/null 2>&1; then
    test_skip "ltrace -c counts the same library calls" "no ltrace, or ptrace refused"
else
    for b in lazy now; do
        test_expect "$b binding: ltrace -c counts the same library calls (thread, handler, constructor, atexit, child)" "
            ltrace -c -f -e '*@MAIN' -o lt.$b ./$b counts 100 >/dev/null;
            awk '\$NF ~ /^(strlen|raise|getuid|getegid)\$/ { print \$NF, \$4 }' lt.$b | sort >lt.want &&
            rm -f ltc.$b*; $CGPROF record -o ltc.$b ./$b counts 100; test \$? -eq 43 &&
            sum_cgprof ltc.$b ltc.$b.* >lt.got &&
            cat lt.want && test \$(wc -l <lt.want) -eq 4 && diff -u lt.want lt.got
        "
    done
    test_expect "C++: ltrace -c counts the same calls into libstdc++" "
        ltrace -c -e '*@MAIN' -o lt.cxx ./cxx 100 &&
        awk '\$NF ~ /^(_Znwm|_ZdlPvm|.*_M_appendEPKcm)\$/ { print \$4 }' lt.cxx | sort -n | tr '\\n' ' ' >lt.cw &&
        $CGPROF record -o ltx.data ./cxx 100 && $CGPROF report -b -p ltx.data |
            grep -E ' (operator new\\(unsigned long\\)|operator delete\\(void\\*, unsigned long\\)|.*::_M_append\\(char const\\*, unsigned long\\)) \\[' |
            awk '{ print \$4 }' | sort -n | tr '\\n' ' ' >lt.cg &&
        cat lt.cw && echo && test \"\$(cat lt.cw)\" = '100 101 101 ' && test \"\$(cat lt.cg)\" = \"\$(cat lt.cw)\"
    "
fi
if ! command -v uftrace >/dev/null 2>&1; then
    test_skip "uftrace counts the same library calls" "no uftrace (scripts/deps.sh installs it)"
else
    for b in lazy now; do
        test_expect "$b binding: uftrace counts the same library calls (thread, handler, constructor, atexit, child)" "
            uftrace record -d ut.$b ./$b counts 100 >/dev/null;
            uftrace report -d ut.$b -f call >ut.rep &&
            awk '\$2 ~ /^(strlen|raise|getuid|getegid)\$/ && NF == 2 { print \$2, \$1 }' ut.rep | sort >ut.want &&
            rm -f utc.$b*; $CGPROF record -o utc.$b ./$b counts 100; test \$? -eq 43 &&
            sum_cgprof utc.$b utc.$b.* >ut.got &&
            cat ut.want && test \$(wc -l <ut.want) -eq 4 && diff -u ut.want ut.got
        "
    done
fi

test_done

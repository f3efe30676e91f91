#!/bin/sh
# t0600: library calls -- the calls -pg code makes through its PLT into
# shared libraries are counted exactly, per caller, in every thread (and
# constructors, signal handlers, forked children), with
# lazy binding and with -z now (full RELRO), and built -fno-plt (call
# sites patched), against the numbers the program makes
# (tests/progs/libcalls.c) and against ltrace -c; and the program sees
# nothing of it.  The call-site finder's instruction decoder against
# capstone.
. "$(dirname "$0")/lib.sh"

N=1000
cd "$WORK" &&
gcc -O1 -pg -fPIC -shared "$PROGS/libcalls_lib.c" -o liblcl.so &&
gcc -O1 -fPIC -shared "$PROGS/libcalls_ptr.c" -o liblcp.so &&
gcc -O1 -fPIC -shared "$PROGS/libcalls_interpose.c" -o liblci.so &&
gcc -O1 -pg -pthread "$PROGS/libcalls.c" -o lazy -ldl -L. -llcl -llcp -Wl,-rpath,'$ORIGIN' &&
gcc -O1 -pg -pthread "$PROGS/libcalls.c" -o now -ldl -L. -llcl -llcp -Wl,-rpath,'$ORIGIN' \
    -Wl,-z,now -Wl,-z,relro || exit 1
cd - >/dev/null || exit 1

# The arcs the program makes, "caller callee count", N = 1000; strlen as
# the name its IFUNC chose (strlen, __strlen_avx2, __strlen_evex...).
# In a thread (worker), a constructor (early), a signal handler (on_usr1).
cat >"$WORK/want" <<EOF
do_malloc free 2000
do_malloc malloc 2000
do_qsort qsort 1000
do_strlen strlen 3000
early getuid 11
lc_lib_strlen strlen 7000
main fork 1
main lc_lib_strlen 1
main lc_lib_strlen_ptr 2
main raise 1000
main waitpid 1
msort_with_tmp.part.0 cmp 12005
on_usr1 getppid 1000
worker getpid 5000
EOF

# lib_arcs PROFILE: those arcs of the profile, IFUNC names made strlen
lib_arcs() {
    "$CGPROF" report -b -q "$1" | awk -f "$ROOT/tests/arcs.awk" | sort -u |
        sed 's/ __strlen_[a-z0-9_]* / strlen /' |
        grep -E ' (free|malloc|qsort|strlen|getpid|lc_lib_strlen|lc_lib_strlen_ptr|cmp|getuid|fork|raise|waitpid|getppid|getegid) '
}

for b in lazy now; do
    test_expect "$b binding: each library call counted exactly, per caller, in a thread, constructor, signal handler" "
        rm -f $b.data* && $CGPROF record -o $b.data ./$b $N; test \$? -eq 42 &&
        lib_arcs $b.data >got && diff -u want got
    "
    test_expect "$b binding: a forked child's library calls, in its own profile" "
        ls $b.data.* >child && test \$(wc -l <child) -eq 1 &&
        lib_arcs \$(cat child) >got.child && echo 'main getegid 13' | diff -u - got.child
    "
done

# the program's own check of its GOT page (exit 6: writable) must be able
# to fail: a lazy build's PLT slots are writable
test_expect "-z now: the GOT, opened to hook it, is read-only again" "
    readelf -lW now | grep -q GNU_RELRO &&
    ./now 10 relro; test \$? -eq 42 && ./lazy 10 relro; test \$? -eq 6 &&
    $CGPROF record -o r.data ./now 10 relro; test \$? -eq 42 &&
    lib_arcs r.data | grep -q '^worker getpid 50\$'
"

test_expect "the program sees the same exit status, pointers, errno and variadic output with and without" "
    ./lazy 100; a=\$?; $CGPROF record -o p.data ./lazy 100; b=\$?;
    echo \"\$a \$b\"; test \$a -eq 42 && test \$b -eq 42 &&
    ./now 100; a=\$?; $CGPROF record -o p.data ./now 100; b=\$?;
    echo \"\$a \$b\"; test \$a -eq 42 && test \$b -eq 42
"

# An LD_PRELOADed getpid without versions: the loader binds the program's
# getpid@GLIBC_2.2.5 to it, so must the hook -- counted to it, and reaching
# it (its own count; the runtime's own getpid calls reach it too: at least)
for b in lazy now; do
    test_expect "$b binding: a call to an LD_PRELOADed interposer still reaches it, counted to it" "
        LD_PRELOAD=\$PWD/liblci.so $CGPROF record -o i.data ./$b $N 2>err; test \$? -eq 42 &&
        cat err && n=\$(sed -n 's/^interposed getpid //p' err) && test \$n -ge 5000 &&
        $CGPROF report -b -q i.data >i.txt &&
        grep -E '^ +[0-9.]+ +[0-9.]+ +5000/5000 +getpid \\[liblci.so\\]' i.txt
    "
done

test_expect "--no-lib-calls and CGPROF_LIBCALLS=0: only the -pg arcs" "
    $CGPROF record --no-lib-calls -o off.data ./lazy $N; test \$? -eq 42 &&
    lib_arcs off.data >got.off && cat got.off &&
    printf 'main lc_lib_strlen 1\\nmsort_with_tmp.part.0 cmp 12005\\n' >want.off &&
    diff -u want.off got.off &&
    CGPROF_LIBCALLS=0 $CGPROF record -o off2.data ./now $N; test \$? -eq 42 &&
    lib_arcs off2.data >got.off2 && diff -u want.off got.off2
"

test_expect "--format gmon: no arcs into other objects (gprof reads it as before)" "
    $CGPROF record --format gmon -o g.out ./lazy $N; test \$? -eq 42 &&
    gprof -b -q lazy g.out >g.txt && ! grep -wE 'strlen|malloc|free|getpid|qsort' g.txt &&
    grep -q do_strlen g.txt
"

# ltrace -c counts the same calls with a breakpoint each (slow: N = 100):
# every library call of the executable (@MAIN) and the library's strlen.
# Its totals per function are compared with cgprof's, summed over callers.
if ! command -v ltrace >/dev/null 2>&1; then
    test_skip "ltrace -c counts the same library calls" "no ltrace (scripts/deps.sh installs it)"
elif ! ltrace -c true >/dev/null 2>&1; then
    test_skip "ltrace -c counts the same library calls" "ltrace cannot trace here (ptrace refused)"
else
    for b in lazy now; do
        test_expect "$b binding: ltrace -c counts the same library calls" "
            ltrace -c -f -e '*@MAIN' -e 'strlen@liblcl.so' -o lt.$b ./$b 100 &&
            awk '\$NF ~ /^(strlen|malloc|free|qsort|getpid)\$/ { print \$NF, \$4 }' lt.$b | sort >lt.want &&
            $CGPROF record -o lt.data ./$b 100; test \$? -eq 42 &&
            $CGPROF report -b -p lt.data | sed 's/ __strlen_[a-z0-9_]* \\[/ strlen [/' |
                awk 'NF >= 7 && \$(NF-1) ~ /^(strlen|malloc|free|qsort|getpid)\$/ && \$NF ~ /^\\[/ { print \$(NF-1), \$4 }' |
                sort >lt.got &&
            cat lt.want && test \$(wc -l <lt.want) -eq 5 && diff -u lt.want lt.got
        "
    done
fi

# A -pg module loaded by dlopen (tests/progs/libcalls_dl.c): hooked when it
# is loaded, while a thread makes library calls of its own; closed, loaded
# again (lazy) and hooked again -- every call counted once, none stale.
cd "$WORK" &&
gcc -O1 -pg -fPIC -shared "$PROGS/libcalls_plugin.c" -o libcalls_plugin.so &&
gcc -O1 -pg -pthread "$PROGS/libcalls_dl.c" -o dl -ldl -Wl,-rpath,'$ORIGIN' || exit 1
cd - >/dev/null || exit 1
# (the second load is a module of its own where it lands elsewhere; where
# it lands at the same address, the same file there is the same module
# (runtime/modules.c), whose counts go on: 3 runs of 16 on a busy machine.
# So the counts are summed per caller and callee, exact either way.)
cat >"$WORK/want.dl" <<EOF
lc_plugin_malloc free $N
lc_plugin_malloc malloc $N
lc_plugin_strlen strlen $((3 * N))
spin getpid 100000
EOF

test_expect "a dlopen'ed -pg module: its library calls counted exactly over two loads, beside a running thread" "
    $CGPROF record -o dl.data ./dl $N ./libcalls_plugin.so; test \$? -eq 42 &&
    $CGPROF report -b -q dl.data | awk -f $ROOT/tests/arcs.awk | sort -u |
        sed 's/ __strlen_[a-z0-9_]* / strlen /' | grep -E '^(lc_plugin_|spin )' |
        awk '{ n[\$1 \" \" \$2] += \$3 } END { for (k in n) print k, n[k] }' | sort >got.dl &&
    diff -u want.dl got.dl
"

# glibc's dlopen searches its caller's RUNPATH for a bare name: the
# executable's here ($ORIGIN), which a wrapper calling dlopen from libcgprof
# would not search
test_expect "dlopen by a bare name still finds what the caller's RUNPATH finds" "
    ./dl 10 x bare; test \$? -eq 42 &&
    $CGPROF record -o bare.data ./dl 10 x bare; test \$? -eq 42
"

if command -v ltrace >/dev/null 2>&1 && ltrace -c true >/dev/null 2>&1; then
    test_expect "a dlopen'ed -pg module: ltrace -c counts the same library calls" "
        ltrace -c -e 'strlen@libcalls_plugin.so' -e 'malloc@libcalls_plugin.so' \
            -e 'free@libcalls_plugin.so' -o lt.dl ./dl 100 ./libcalls_plugin.so once &&
        awk '\$NF ~ /^(strlen|malloc|free)\$/ { print \$NF, \$4 }' lt.dl | sort >lt.dl.want &&
        $CGPROF record -o lt.dl.data ./dl 100 ./libcalls_plugin.so once; test \$? -eq 42 &&
        $CGPROF report -b -p lt.dl.data | sed 's/ __strlen_[a-z0-9_]* \\[/ strlen [/' |
            awk 'NF >= 7 && \$(NF-1) ~ /^(strlen|malloc|free)\$/ && \$NF ~ /^\\[/ { print \$(NF-1), \$4 }' |
            sort >lt.dl.got &&
        cat lt.dl.want && test \$(wc -l <lt.dl.want) -eq 3 && diff -u lt.dl.want lt.dl.got
    "
else
    test_skip "a dlopen'ed -pg module: ltrace -c counts the same library calls" "no usable ltrace"
fi

# IFUNC and versioned symbols: the report names the function that ran by
# the name the program called (its PLT stub's), one entry for both callers
test_expect "strlen (an IFUNC) and pthread_join (versioned) are named as called: one strlen entry for two modules' 3000 + 7000 calls" "
    $CGPROF record -o nm.data ./lazy $N; test \$? -eq 42 &&
    $CGPROF report -b nm.data >nm.txt &&
    grep -E '^ +[0-9.]+ +[0-9.]+ +[0-9.]+ +10000 .* strlen \\[libc\\.so\\.6\\]\$' nm.txt &&
    grep -E '^ +[0-9.]+ +[0-9.]+ +3000/10000 +do_strlen \\[' nm.txt &&
    grep -E '^ +[0-9.]+ +[0-9.]+ +7000/10000 +lc_lib_strlen \\[liblcl.so\\]' nm.txt &&
    grep -E '^ +[0-9.]+ +[0-9.]+ +[0-9.]+ +1 .* pthread_join \\[libc\\.so\\.6\\]\$' nm.txt &&
    ! grep -E '__strlen_|pthread_join@' nm.txt &&
    $CGPROF report --json nm.data | grep -q '\"name\": *\"strlen \\[libc.so.6\\]\"'
"

# -fno-plt: the executable and the -pg library call through GOT slots that
# also hold the functions' addresses; the runtime patches each call site
# (docs/libcalls.md).  The same program, the same known counts: every arc
# as in the PLT build, lazy and -z now, and the pointers the program
# compares unchanged (exit 42); main's code page read-only again (exit 7
# if not: the check fails without the profiler's mprotect back, see the
# mutant lc-text-left-writable).  ltrace cannot see calls that bypass the
# PLT, so the program's own numbers are the truth here.
mkdir -p "$WORK/np" && cd "$WORK/np" &&
gcc -O1 -pg -fno-plt -fPIC -shared "$PROGS/libcalls_lib.c" -o liblcl.so &&
gcc -O1 -fPIC -shared "$PROGS/libcalls_ptr.c" -o liblcp.so &&
gcc -O1 -pg -fno-plt -pthread "$PROGS/libcalls.c" -o lazy -ldl -L. -llcl -llcp \
    -Wl,-rpath,'$ORIGIN' &&
gcc -O1 -pg -fno-plt -pthread "$PROGS/libcalls.c" -o now -ldl -L. -llcl -llcp \
    -Wl,-rpath,'$ORIGIN' -Wl,-z,now -Wl,-z,relro &&
gcc -O1 -pg -fno-plt -fPIC -shared "$PROGS/libcalls_plugin.c" -o libcalls_plugin.so &&
gcc -O1 -pg -fno-plt -pthread "$PROGS/libcalls_dl.c" -o dl -ldl -Wl,-rpath,'$ORIGIN' || exit 1
cd - >/dev/null || exit 1

for b in lazy now; do
    test_expect "-fno-plt, $b binding: the calls through the GOT are counted exactly, as the PLT build's" "
        objdump -d np/$b | grep -qE 'call +\*0x[0-9a-f]+\(%rip\) +# [0-9a-f]+ <strlen@' &&
        rm -f np/$b.data* && $CGPROF record -o np/$b.data ./np/$b $N; test \$? -eq 42 &&
        lib_arcs np/$b.data >got.np && diff -u want got.np &&
        ls np/$b.data.* >child.np && test \$(wc -l <child.np) -eq 1 &&
        lib_arcs \$(cat child.np) | grep getegid >got.npc && echo 'main getegid 13' | diff -u - got.npc
    "
done

test_expect "-fno-plt: the patched code and the GOT are read-only again, the program's checks hold" "
    ./np/now 10 relro; test \$? -eq 42 &&
    $CGPROF record -o npr.data ./np/now 10 relro; test \$? -eq 42 &&
    lib_arcs npr.data | grep -q '^worker getpid 50\$'
"

test_expect "-fno-plt: strlen and pthread_join named as called, from the call sites' GOT slots" "
    $CGPROF record -o npn.data ./np/lazy $N; test \$? -eq 42 &&
    $CGPROF report -b npn.data >npn.txt &&
    grep -E '^ +[0-9.]+ +[0-9.]+ +3000/10000 +do_strlen \\[' npn.txt &&
    grep -E '^ +[0-9.]+ +[0-9.]+ +7000/10000 +lc_lib_strlen \\[liblcl.so\\]' npn.txt &&
    grep -E '^ +[0-9.]+ +[0-9.]+ +[0-9.]+ +1 .* pthread_join \\[libc\\.so\\.6\\]\$' npn.txt &&
    ! grep -E '__strlen_|pthread_join@' npn.txt
"

# (summed over the two loads: whether the counts of each load stay apart
# is the dlopen test's above, not this one's)
test_expect "-fno-plt: a dlopen'ed -pg module's calls through the GOT counted exactly, on each load" "
    $CGPROF record -o npdl.data ./np/dl $N ./np/libcalls_plugin.so; test \$? -eq 42 &&
    $CGPROF report -b -q npdl.data | awk -f $ROOT/tests/arcs.awk | sort -u |
        sed 's/ __strlen_[a-z0-9_]* / strlen /' | grep -E '^(lc_plugin_|spin )' |
        awk '{ n[\$1 \" \" \$2] += \$3 } END { for (k in n) print k, n[k] }' | sort >got.npdl &&
    printf '%s\\n' 'lc_plugin_malloc free $N' 'lc_plugin_malloc malloc $N' \
        'lc_plugin_strlen strlen $((3 * N))' 'spin getpid 100000' >want.npdl &&
    diff -u want.npdl got.npdl &&
    $CGPROF record -o npdl1.data ./np/dl $N ./np/libcalls_plugin.so once; test \$? -eq 42 &&
    $CGPROF report -b -q npdl1.data | awk -f $ROOT/tests/arcs.awk | sort -u |
        sed 's/ __strlen_[a-z0-9_]* / strlen /' | grep -E '^lc_plugin_' >got.npdl1 &&
    printf '%s\\n' 'lc_plugin_malloc free $N' 'lc_plugin_malloc malloc $N' \
        'lc_plugin_strlen strlen $N' | diff -u - got.npdl1
"

# The decoder the runtime finds call sites with (runtime/arch/x86_64/insnlen.c) gives
# capstone's length for every instruction of real code, or says it is not
# sure (then the function is left alone): over the symbols of libc,
# libstdc++ and the cgprof binary, and a linear sweep of libc's text
if ! cc -std=c11 -Wall -Wextra -D_GNU_SOURCE -I"$ROOT/runtime" -I"$ROOT/runtime/arch/x86_64" -I"$ROOT/include" \
    "$ROOT/tests/unit/insnlen_vs_capstone.c" "$ROOT/runtime/arch/x86_64/insnlen.c" -lcapstone -lelf \
    -o "$WORK/insnlen_vs_capstone" 2>"$WORK/ivc.err"; then
    cat "$WORK/ivc.err"
    test_expect "the instruction-length decoder agrees with capstone" "false"
else
    libc=$(gcc -print-file-name=libc.so.6) libcxx=$(g++ -print-file-name=libstdc++.so.6)
    test_expect "the instruction-length decoder agrees with capstone on every instruction" "
        ./insnlen_vs_capstone $libc $libcxx $BUILD/cgprof np/lazy >ivc.out; rc=\$?; cat ivc.out;
        test \$rc -eq 0 && test \$(grep -c ', 0 lengths differ' ivc.out) -eq 4 &&
        awk '\$3 > 10000 { n++ } END { exit n < 3 }' ivc.out &&
        ./insnlen_vs_capstone -s $libc >ivc.s; rc=\$?; cat ivc.s;
        test \$rc -eq 0 && grep -q ', 0 lengths differ' ivc.s
    "
fi

# What is left alone is said once, in the profile and by the report: with
# the site patching turned off (CGPROF_LIBCALLS=plt), a -fno-plt build's
# calls through GOT entries that also hold the functions' addresses; with
# it on (the default) nothing is left; a PLT build has none
test_expect "-fno-plt: the calls left uncounted are said once, and only when they are" "
    CGPROF_LIBCALLS=plt $CGPROF record -o np.data ./np/lazy 10; test \$? -eq 42 &&
    $CGPROF report -b -p np.data 2>np.err >/dev/null && cat np.err &&
    test \$(grep -c 'note: library calls of the executable through the GOT .* are not counted' np.err) -eq 1 &&
    $CGPROF report -b -p np.data np.data 2>np2.err >/dev/null &&
    test \$(grep -c 'of the executable through the GOT' np2.err) -eq 1 &&
    test \$(grep -c 'of .*/liblcl.so through the GOT' np2.err) -eq 1 &&
    lib_arcs np.data >got.npoff && ! grep -E '^do_strlen strlen' got.npoff &&
    $CGPROF record -o npd.data ./np/lazy 10; test \$? -eq 42 &&
    $CGPROF report -b -p npd.data 2>npd.err >/dev/null && ! grep 'GOT' npd.err &&
    $CGPROF record -o pl.data ./lazy 10; test \$? -eq 42 &&
    $CGPROF report -b -p pl.data 2>pl.err >/dev/null && ! grep 'through the GOT' pl.err
"

test_done

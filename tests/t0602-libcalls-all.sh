#!/bin/sh
# t0602: --lib-calls=all (CGPROF_LIBCALLS=all) -- programs built WITHOUT
# -pg get exact counts of the calls between modules: from the executable
# (lazy binding and -z now), from a shared library built without -pg, in
# a thread, a signal handler, a constructor, an atexit handler, a
# destructor, a forked child and a dlopen'ed module, and a C++ program's
# calls into libstdc++ and libstdc++'s into libc; checked against the
# numbers the programs make and against ltrace -c and uftrace (JSON names
# are the mangled ones).  Never a call of libcgprof's own nor one into the
# dynamic loader.  The default (-pg modules only) stays.  And issue 20's
# "after main": a -pg program's destructors' calls are counted (the final
# write waits for them).  Programs: tests/progs/libcalls.c,
# libcalls_lib.c, libcalls_more.c, libcalls_dl.c, libcalls_plugin.c,
# libcalls_cxx.cc.
. "$(dirname "$0")/lib.sh"

N=1000
ARCS="python3 $ROOT/tests/libcalls_arcs.py"
cd "$WORK" &&
gcc -O1 -fPIC -shared "$PROGS/libcalls_lib.c" -o liblcl.so &&
gcc -O1 -fPIC -shared "$PROGS/libcalls_ptr.c" -o liblcp.so &&
gcc -O1 -pthread "$PROGS/libcalls.c" -o lazy -ldl -L. -llcl -llcp -Wl,-rpath,'$ORIGIN' &&
gcc -O1 -pthread "$PROGS/libcalls.c" -o now -ldl -L. -llcl -llcp -Wl,-rpath,'$ORIGIN' \
    -Wl,-z,now -Wl,-z,relro &&
gcc -O1 -fPIC -shared "$PROGS/libcalls_malloc.c" -o liblcmalloc.so &&
gcc -O1 -pthread "$PROGS/libcalls_more.c" -o more -ldl -L. -llcp -Wl,-rpath,'$ORIGIN' &&
gcc -O1 -pthread -DTAKE_ADDRESS "$PROGS/libcalls_more.c" -o more.addr -ldl -L. -llcp \
    -Wl,-rpath,'$ORIGIN' &&
gcc -O1 -pg -pthread "$PROGS/libcalls_more.c" -o morepg -ldl -L. -llcp -Wl,-rpath,'$ORIGIN' &&
gcc -O1 -fPIC -shared "$PROGS/libcalls_plugin.c" -o libcalls_plugin.so &&
gcc -O1 -pthread "$PROGS/libcalls_dl.c" -o dl -ldl -Wl,-rpath,'$ORIGIN' &&
g++ -O1 "$PROGS/libcalls_cxx.cc" -o cxx || exit 1
cd - >/dev/null || exit 1

# the library calls of tests/progs/libcalls.c, N = 1000 (its callbacks,
# qsort's calls of cmp, are no call between modules: not counted)
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
on_usr1 getppid 1000
worker getpid 5000
EOF
lib_arcs() {
    "$CGPROF" report -b -q "$1" | awk -f "$ROOT/tests/arcs.awk" | sort -u |
        sed 's/ __strlen_[a-z0-9_]* / strlen /' |
        grep -E ' (free|malloc|qsort|strlen|getpid|lc_lib_strlen|lc_lib_strlen_ptr|cmp|getuid|fork|raise|waitpid|getppid|getegid) '
}

test_expect "default: a program built without -pg has no library call counted" "
    rm -f def.data*; $CGPROF record -o def.data ./lazy $N; test \$? -eq 42 &&
    ! lib_arcs def.data | grep . &&
    CGPROF_LIBCALLS=all $CGPROF record -o env.data ./lazy 10; test \$? -eq 42 &&
    lib_arcs env.data | grep -x 'do_strlen strlen 30'
"
test_expect "--lib-calls: an unknown value, or all with --format gmon, is refused in one line (exit 2)" "
    $CGPROF record --lib-calls=some ./lazy 10 2>err; test \$? -eq 2 && test \$(wc -l <err) -eq 1 &&
    grep -x 'cgprof record: --lib-calls some: not pg, all or none' err &&
    $CGPROF record --lib-calls all --format gmon ./lazy 10 2>err; test \$? -eq 2 &&
    test \$(wc -l <err) -eq 1 && grep -q 'needs the cgprof format' err && ! test -e gmon.out
"
for b in lazy now; do
    test_expect "$b binding, no -pg: --lib-calls=all counts each call exactly, per caller (a thread, a handler, a constructor, a non-pg library)" "
        rm -f $b.data*; $CGPROF record --lib-calls=all -o $b.data ./$b $N; test \$? -eq 42 &&
        lib_arcs $b.data >got.$b && diff -u want got.$b &&
        ls $b.data.* >child && test \$(wc -l <child) -eq 1 &&
        lib_arcs \$(cat child) >got.child && echo 'main getegid 13' | diff -u - got.child
    "
done
test_expect "no -pg: the flat profile's called column holds the library calls, no arc is the runtime's or into the loader" "
    $CGPROF report -b -p now.data >flat &&
    awk '\$NF ~ /^\\[/ { print \$(NF-1), \$4 }' flat | sed 's/^__strlen_[a-z0-9_]* /strlen /' |
        grep -E '^(strlen|malloc|free|qsort|getpid|getppid|lc_lib_strlen) ' | sort >got.flat &&
    printf 'free 2000\\ngetpid 5000\\ngetppid 1000\\nlc_lib_strlen 1\\nmalloc 2000\\nqsort 1000\\nstrlen 10000\\n' |
        diff -u - got.flat &&
    $CGPROF report --json now.data >now.json &&
    python3 -c 'import json,sys
a = [x for x in json.load(open(sys.argv[1]))[\"arcs\"] if x.get(\"count\")]
bad = [x for x in a if \"libcgprof\" in x[\"caller\"] + x[\"callee\"] or \"[ld-linux\" in x[\"callee\"]]
print(len(a), \"arcs;\", bad)
sys.exit(bool(bad) or len(a) < 13)' now.json
"

# a module built without -pg, loaded by dlopen while a thread runs, closed
# and loaded again (tests/progs/libcalls_dl.c).  Each load's counts are
# summed here: keeping the two loads at one address apart fails in some
# runs on a busy machine, with -pg too (t0600; 3 runs of 16 on main)
cat >"$WORK/want.dl" <<EOF
lc_plugin_malloc free $N
lc_plugin_malloc malloc $N
lc_plugin_strlen strlen $((3 * N))
spin getpid 100000
EOF
test_expect "no -pg, --lib-calls=all: a dlopen'ed module's calls counted exactly over two loads, beside a running thread" "
    $CGPROF record --lib-calls=all -o dl.data ./dl $N ./libcalls_plugin.so; test \$? -eq 42 &&
    $CGPROF report -b -q dl.data | awk -f $ROOT/tests/arcs.awk | sort -u |
        sed 's/ __strlen_[a-z0-9_]* / strlen /' | grep -E '^(lc_plugin_|spin )' |
        awk '{ c[\$1 \" \" \$2] += \$3 } END { for (k in c) print k, c[k] }' | sort >got.dl &&
    diff -u want.dl got.dl
"

# the program sees nothing (tests/progs/libcalls_more.c "see": pointer
# identity, dlsym, errno, longjmp out of qsort's callback, variadic doubles,
# vfork, exit through the PLT; an LD_PRELOADed malloc, which libc's own
# calloc and realloc calls now reach through hooked entries)
test_expect "no -pg, --lib-calls=all: same status and output as without; an LD_PRELOADed malloc still gets every call" "
    ./more.addr see >out0; a=\$?; $CGPROF record --lib-calls=all -o s.data ./more.addr see >out1; c=\$?;
    echo \"\$a \$c\"; test \$a -eq 42 && test \$c -eq 42 && diff out0 out1 &&
    LD_PRELOAD=\$PWD/liblcmalloc.so ./more see >/dev/null 2>err0; test \$? -eq 42 &&
    n0=\$(sed -n 's/^interposed malloc //p' err0) && test \$n0 -ge 1000 &&
    LD_PRELOAD=\$PWD/liblcmalloc.so $CGPROF record --lib-calls=all -o m.data ./more see >/dev/null 2>err1;
    test \$? -eq 42 && n1=\$(sed -n 's/^interposed malloc //p' err1) && echo \"\$n0 \$n1\" &&
    test \$n1 -ge \$n0 && $CGPROF report -b -q m.data >m.txt &&
    grep -E '^ +[0-9.]+ +[0-9.]+ +1000/1000 +see +\\[' m.txt &&
    grep -E '^\\[[0-9]+\\].* 1000 +malloc \\[liblcmalloc.so\\]' m.txt
"

# -- after main: atexit handlers and destructors ----------------------------
cat >"$WORK/want.more" <<EOF
counts raise 1000
early strlen 5
last getgid 9
late getuid 7
on_usr2 strlen 1000
worker strlen 1000
EOF
pick='^(counts|early|late|last|on_usr2|worker) (strlen|raise|getuid|getgid) '
test_expect "no -pg, --lib-calls=all: a constructor's, an atexit handler's and a destructor's calls, a thread's, a handler's" "
    rm -f more.data*; $CGPROF record --lib-calls=all -o more.data ./more counts $N; test \$? -eq 43 &&
    $CGPROF report -b -q more.data | awk -f $ROOT/tests/arcs.awk |
        sort -u | sed 's/ __strlen_[a-z0-9_]* / strlen /' | grep -E '$pick' >got.more &&
    diff -u want.more got.more
"
test_expect "-pg (the default): an atexit handler's and the executable's destructor's calls are counted too" "
    rm -f pg.data*; $CGPROF record -o pg.data ./morepg counts $N; test \$? -eq 43 &&
    $CGPROF report -b -q pg.data | awk -f $ROOT/tests/arcs.awk |
        sort -u | sed 's/ __strlen_[a-z0-9_]* / strlen /' | grep -E '$pick' >got.pg &&
    diff -u want.more got.pg
"

# -- C++: the program's calls into libstdc++, libstdc++'s into libc ---------
test_expect "no -pg, C++: operator new/delete, _M_append, and operator new's own malloc calls, exact" "
    $CGPROF record --lib-calls=all -o x.data ./cxx $N && $CGPROF report --json x.data >x.json &&
    $ARCS json x.json | grep -E ' (_Znwm|_ZdlPvm|malloc) ' | sort >x.arcs && cat x.arcs &&
    grep -x '_ZL5churnl _Znwm 1000' x.arcs && grep -x '_ZL5churnl _ZdlPvm 1000' x.arcs &&
    grep -x '_Znwm malloc 1002' x.arcs &&
    $CGPROF report -b -p x.data >x.flat &&
    grep -E '^ *[0-9.]+ .* 1000 +.* std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_append\\(char const\\*, unsigned long\\) \\[libstdc\\+\\+\\.so\\.6\\]\$' x.flat
"

# -- independent counts: ltrace -c and uftrace (slow: N = 100) --------------
# sum_cgprof FUNCS PROFILES: total count per function over the profiles
sum_cgprof() {
    funcs=$1
    shift
    for p in "$@"; do "$CGPROF" report -b -p "$p"; done |
        sed 's/ __strlen_[a-z0-9_]* \[/ strlen [/; s/ __mem[a-z]*_[a-z0-9_]* \[/ memcpy [/' |
        awk 'NF >= 7 && $NF ~ /^\[/ { c[$(NF-1)] += $4 } END { for (f in c) print f, c[f] }' |
        grep -E "^($funcs) " | sort
}
F='strlen|malloc|free|qsort|getpid|getuid|getppid|getegid|raise'
if ! command -v ltrace >/dev/null 2>&1 || ! ltrace -c true >/dev/null 2>&1; then
    test_skip "no -pg: ltrace -c counts the same library calls" "no ltrace, or ptrace refused"
    test_skip "no -pg, C++: ltrace -c counts the same calls into libc" "no ltrace, or ptrace refused"
else
    for b in lazy now; do
        test_expect "$b binding, no -pg: ltrace -c counts the same library calls (executable and library, thread, handler, child)" "
            ltrace -c -f -e '*@MAIN+*@liblcl.so' -o lt.$b ./$b 100 >/dev/null;
            awk '\$NF ~ /^($F)\$/ { print \$NF, \$4 }' lt.$b | sort >lt.want &&
            rm -f ltc.$b*; $CGPROF record --lib-calls=all -o ltc.$b ./$b 100; test \$? -eq 42 &&
            sum_cgprof '$F' ltc.$b ltc.$b.* >lt.got &&
            cat lt.want && test \$(wc -l <lt.want) -eq 9 && diff -u lt.want lt.got
        "
    done
    test_expect "no -pg, C++: ltrace -c counts the same calls into libc (from the program and from libstdc++)" "
        ltrace -c -e 'malloc+free+strlen+memcpy+memmove' -o lt.cxx ./cxx 100 &&
        awk '\$NF ~ /^(malloc|free|strlen|memcpy|memmove)\$/ { f = \$NF; if (f == \"memmove\") f = \"memcpy\"; c[f] += \$4 }
             END { for (f in c) print f, c[f] }' lt.cxx | sort >lt.cw &&
        $CGPROF record --lib-calls=all -o ltx.data ./cxx 100 &&
        sum_cgprof 'malloc|free|strlen|memcpy' ltx.data >lt.cg &&
        cat lt.cw && test \$(wc -l <lt.cw) -eq 4 && diff -u lt.cw lt.cg
    "
fi
if ! command -v uftrace >/dev/null 2>&1; then
    test_skip "no -pg: uftrace --force counts the same library calls" "no uftrace (scripts/deps.sh installs it)"
else
    for b in lazy now; do
        test_expect "$b binding, no -pg: uftrace --force --nest-libcall counts the same library calls (executable and library, thread, handler, child)" "
            uftrace record --force --nest-libcall -d ut.$b ./$b 100 >/dev/null 2>&1;
            uftrace report -d ut.$b -f call >ut.$b.rep &&
            awk 'NF == 2 && \$2 ~ /^($F)\$/ { print \$2, \$1 }' ut.$b.rep | sort >ut.$b.want &&
            rm -f utc.$b*; $CGPROF record --lib-calls=all -o utc.$b ./$b 100; test \$? -eq 42 &&
            sum_cgprof '$F' utc.$b utc.$b.* >ut.$b.got &&
            cat ut.$b.want && test \$(wc -l <ut.$b.want) -eq 9 && diff -u ut.$b.want ut.$b.got
        "
    done
    test_expect "no -pg, C++: uftrace --force --nest-libcall counts the same calls into libc" "
        uftrace record --force --nest-libcall -d ut.cxx ./cxx 100 >/dev/null 2>&1;
        uftrace report -d ut.cxx -f call >ut.rep &&
        awk 'NF == 2 && \$2 ~ /^(malloc|free|strlen|memcpy|memmove)\$/ { f = \$2; if (f == \"memmove\") f = \"memcpy\"; c[f] += \$1 }
             END { for (f in c) print f, c[f] }' ut.rep | sort >ut.cw &&
        $CGPROF record --lib-calls=all -o utx.data ./cxx 100 &&
        sum_cgprof 'malloc|free|strlen|memcpy' utx.data >ut.cg &&
        cat ut.cw && test \$(wc -l <ut.cw) -eq 4 && diff -u ut.cw ut.cg
    "
fi

test_done

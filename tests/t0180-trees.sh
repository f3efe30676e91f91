#!/bin/sh
# t0180: process trees -- the profiles of a parent, its forked children
# and an exec'd image add up to the known totals; -s writes the sum as a
# cgprof profile that reads back to the same report; profiles of different
# programs are refused; a lone profile's siblings are pointed out; -c
# works on cgprof profiles.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg "$PROGS/tree.c" -o "$WORK/tree" &&
gcc -O2 -pg "$PROGS/endings.c" -o "$WORK/endings" || exit 1
(cd "$WORK" && $CGPROF record ./tree) || exit 1

test_expect "five processes, five profiles: parent, three children, one exec'd image" "
    ls cgprof.data* >files && cat files && test \$(wc -l <files) -eq 5 &&
    test \$(grep -c '^cgprof.data\\.[0-9]*\$' files) -eq 3 &&
    test \$(grep -c '^cgprof.data\\.[0-9]*\\.exec1\$' files) -eq 1
"

# tree.c's own counts: f 10 (parent), g 100+200+300 (children), h 7 (the
# exec'd image), spin once per process, main entered by two images
# (calls of tree.c's own functions; its library calls, counted too, include
# clock_gettime calls whose number is not known: docs/libcalls.md)
test_expect "the tree summed: every call count is the program's known total" "
    $CGPROF report -b -q cgprof.data cgprof.data.* | awk -f $ROOT/tests/arcs.awk |
        grep -E ' (main|f|g|h|spin) [0-9]+\$' | sort -u >got &&
    printf '%s\n' '__libc_start_call_main main 2' 'main f 10' 'main g 600' 'main h 7' \
        'main spin 5' >exp && diff -u exp got
"

test_expect "the sum's samples are the sum of each profile's" "
    for p in cgprof.data*; do $CGPROF report -b -p \$p 2>/dev/null |
        awk '\$NF == \"spin\" { print \$3 }'; done >each &&
    $CGPROF report -b -p cgprof.data cgprof.data.* | awk '\$NF == \"spin\" { print \$3 }' >all &&
    cat each all && awk -v t=\$(cat all) '{ s += \$1 } END { d = s - t; if (d < 0) d = -d; exit !(d <= 0.01 * NR) }' each
"

# the stacks are summed too: the sum's times are measured, and a
# function's inclusive samples are the sum of each profile's (main is
# entered by two images, spin by all five processes)
stack_sum() {
    for p in cgprof.data*; do
        $CGPROF report --json $p 2>/dev/null >one.json &&
            python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
f={x["name"]: x for x in j["functions"]}
print(j["times"], *(round(f[n]["inclusive_seconds"] * j["rate"]) if n in f else 0 for n in ("main", "spin")))' one.json ||
            return 1
    done >each &&
        $CGPROF report --json cgprof.data cgprof.data.* 2>/dev/null >sum.json &&
        python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
f={x["name"]: x for x in j["functions"]}
n=sum(s["count"] for s in j["stacks"]["nodes"])
print(j["times"], *(round(f[k]["inclusive_seconds"] * j["rate"]) for k in ("main", "spin")), n)' sum.json >all &&
        cat each all &&
        awk '{ m += $2; s += $3 } END { print "measured", m, s }' each >want &&
        cut -d" " -f1-3 all | diff want - && test "$(cut -d" " -f4 all)" -ge "$(cut -d" " -f3 all)"
}
test_expect "the sum keeps the sampled stacks: measured times, each the sum of the profiles'" \
    stack_sum

# cgprof export takes the tree as report does: the sum's folded stacks
# hold every profile's samples, stack by stack
test_expect "export of the tree: its folded stacks are every profile's, added up" "
    for p in cgprof.data*; do $CGPROF export -f folded \$p 2>/dev/null; done |
        awk '{ n = \$NF; \$NF = \"\"; s[\$0] += n } END { for (k in s) print k s[k] }' | sort >each &&
    $CGPROF export -f folded cgprof.data cgprof.data.* 2>/dev/null | sort >all &&
    wc -l <all && test -s all && diff -u each all
"

test_expect "-s writes cgprof.sum, a cgprof profile; reading it back gives the same report" "
    rm -f cgprof.sum && $CGPROF report -s -b cgprof.data cgprof.data.* >direct 2>/dev/null &&
    head -c 8 cgprof.sum | od -c | grep -q 'C   G   P   R   O   F' &&
    $CGPROF report -b cgprof.sum >back 2>/dev/null && diff -u direct back
"

test_expect "a lone profile: the report points out the others and how to sum them" "
    $CGPROF report -b cgprof.data >/dev/null 2>err; cat err &&
    grep -q 'note: 4 more profiles .* cgprof report cgprof.data cgprof.data\\.\\*' err
"

# Two runs of the tree in one directory: the second's children get new
# pids, so the first run's cgprof.data.PID files are still there.  Each
# profile carries its run's id (kept by forked children, passed on to
# exec'd images): the lone-profile note counts only this run's, names the
# others, and a sum that mixes runs says so.  (Failed before: "8 more
# profiles of this run", and the sum silently counted g 1200 times.)
test_expect "profiles an earlier run left are told from this run's" "
    mkdir -p tworuns && cd tworuns && $CGPROF record ../tree >/dev/null 2>&1 &&
    $CGPROF record ../tree >/dev/null 2>&1 && ls cgprof.data.* | wc -l | grep -qx 8 &&
    $CGPROF report -b cgprof.data >/dev/null 2>err; cat err &&
    grep -q 'note: 4 more profiles of this run' err &&
    grep -q 'note: 4 profiles next to cgprof.data .* from an earlier run' err &&
    $CGPROF report -b -q cgprof.data cgprof.data.* 2>err >sum; cat err &&
    grep -q 'warning: 4 of the 9 profiles .* not from the run that wrote cgprof.data' err &&
    awk -f $ROOT/tests/arcs.awk sum | grep -qx 'main g 1200'
"

# clone() without CLONE_THREAD: a process fork's handlers never see.  With
# its own memory it leaves its own profile (g 100, its 60 ms spin sampled);
# with CLONE_VM its calls are counted in the parent's profile and its CPU
# is said to be unsampled.  Status and output are the program's.  (Failed
# before: no cgprof.data.PID, and nothing said of the CLONE_VM child.)
gcc -O2 -pg "$PROGS/rawclone.c" -o "$WORK/rawclone" || exit 1
test_expect "clone() without CLONE_THREAD: the child leaves its own profile" "
    mkdir -p rc.fork && cd rc.fork && $CGPROF record ../rawclone fork >out 2>err; rc=\$?; cat out err;
    test \$rc -eq 0 && grep -qx 'child 7' out && ls cgprof.data.* >kids && test \$(wc -l <kids) -eq 1 &&
    $CGPROF report -b -q cgprof.data | awk -f $ROOT/tests/arcs.awk | grep -qx 'main f 10' &&
    $CGPROF report -b -q \$(cat kids) | awk -f $ROOT/tests/arcs.awk | grep -qx 'child g 100' &&
    $CGPROF report -b -p \$(cat kids) | awk '\$NF == \"spin\" && \$3 >= 0.03 { ok = 1 } END { exit !ok }'
"
test_expect "clone(CLONE_VM): its calls counted here, its CPU time said to be unsampled" "
    mkdir -p rc.vm && cd rc.vm && $CGPROF record ../rawclone vm >out 2>err; rc=\$?; cat out err;
    test \$rc -eq 0 && grep -qx 'child 7' out && ! ls cgprof.data.* 2>/dev/null &&
    grep -q '1 processes made by clone(CLONE_VM) shared this one.s memory' err &&
    $CGPROF report -b -q cgprof.data 2>rerr | awk -f $ROOT/tests/arcs.awk >arcs; cat rerr arcs;
    grep -qx 'child g 100' arcs && grep -qx 'main f 10' arcs && grep -q '1 threads could not be sampled' rerr
"

test_expect "profiles of different programs are refused with a clear line" "
    mkdir -p other && (cd other && $CGPROF record ./../endings exit 10 2>/dev/null) &&
    ! $CGPROF report -b cgprof.data other/cgprof.data >/dev/null 2>err; cat err &&
    grep -q 'profiles of different programs .*cannot be summed' err && test \$(wc -l <err) -eq 1
"
# -c: once() calls never() (a forward call, which gprof -c keeps), but
# never at run time: the static arc is shown 0/0, as gprof -c shows it
test_expect "-c on a cgprof profile: the static call graph, as gprof -c on gmon.out" "
    mkdir -p sc && cd sc && cat >sc.c <<'X' &&
static volatile int sink;
void never(void);
__attribute__((noinline)) void once(int x) { if (x > 5) never(); sink++; }
__attribute__((noinline)) void never(void) { sink++; }
int main(int argc, char **argv) { (void)argv; once(argc); return 0; }
X
    gcc -O0 -pg sc.c -o sc && ./sc && gprof -b -c -q sc gmon.out >gprof.txt &&
    grep -A1 ' once \[' gprof.txt | grep -q ' 0/0  *never ' &&
    $CGPROF record ./sc && $CGPROF report -b -c -q cgprof.data >cg.txt 2>/dev/null &&
    grep -A1 ' once \[' cg.txt | tee arc | grep -q ' 0/0  *never ' &&
    ! { $CGPROF report -b -q cgprof.data 2>/dev/null | grep -A1 ' once \[' | grep -q never; }
"
test_done

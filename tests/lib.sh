# lib.sh: helpers shared by the end-to-end tests (sourced by each tNNNN-*.sh).
#
# test_expect TITLE BODY   runs BODY (a shell snippet, steps joined by &&)
#                          in the test's scratch directory; ok or FAIL.
# skip_all REASON          when a prerequisite is missing: every test of the
#                          script is reported "skipped: REASON".
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
# The tests run cgprof through tests/cgprof-checked.sh, which checks every
# report printed (each [N] has an entry, no nan/inf); test_done counts
# breaches as a failed test.
CGPROF_REAL=${CGPROF:-$BUILD/cgprof}
CGPROF=$ROOT/tests/cgprof-checked.sh
LIBSO=$BUILD/libcgprof.so
LIBA="$BUILD/libcgprof.a ${LINK_EXTRA:-}"  # LINK_EXTRA: what a sanitizer build of it needs
PROGS=$ROOT/tests/progs
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cgprof-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
CGPROF_CHECK_LOG=$WORK/.report-check
export CGPROF_REAL CGPROF_CHECK_LOG
npass=0 nfail=0 nskip=0

test_expect() {
    if (cd "$WORK" && eval "$2") >"$WORK/.log" 2>&1; then
        echo "ok - $1"
        npass=$((npass + 1))
    else
        echo "FAIL - $1"
        tail -n 40 "$WORK/.log" | sed 's/^/    /'
        nfail=$((nfail + 1))
    fi
}

test_skip() {
    echo "skipped: $1 ($2)"
    nskip=$((nskip + 1))
}

test_done() {
    if [ -s "$CGPROF_CHECK_LOG" ]; then
        echo "FAIL - every report printed: each [N] has an entry, no nan or inf"
        sed 's/^/    /' "$CGPROF_CHECK_LOG" | head -n 40
        nfail=$((nfail + 1))
    fi
    echo "# counts $npass $nfail $nskip"
    [ "$nfail" -eq 0 ]
}

# arcs_gprof PROG GMON: "caller callee count" lines, sorted, as GNU gprof reads them.
arcs_gprof() {
    gprof -b -q "$1" "$2" | awk -f "$ROOT/tests/arcs.awk" | sort -u
}

# arcs_cgprof PROG GMON: the same as cgprof report shows them.
arcs_cgprof() {
    "$CGPROF" report -b -q "$1" "$2" | awk -f "$ROOT/tests/arcs.awk" | sort -u
}

# same_arcs EXPECTED PROG GMON: both readers show exactly the expected arcs.
# Arcs from libcgprof's thread_start are left out: it calls the thread's
# function, and where that call is not a tail jump (unoptimized builds of
# libcgprof.a linked into the program) the arc is real but not the test's.
same_arcs() {
    sort "$1" >expected.sorted &&
    arcs_gprof "$2" "$3" | grep -v "^thread_start " >gprof.arcs &&
    arcs_cgprof "$2" "$3" | grep -v "^thread_start " >cgprof.arcs &&
    diff -u expected.sorted gprof.arcs &&
    diff -u expected.sorted cgprof.arcs
}

# flat_calls PROG GMON FUNC: the calls column of FUNC in gprof's flat profile.
flat_calls() {
    gprof -b -p "$1" "$2" | awk -v f="$3" '$NF == f && NF == 7 { print $4 }'
}

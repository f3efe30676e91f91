# lib.sh: helpers shared by the end-to-end tests (sourced by each tNNNN-*.sh).
#
# test_expect TITLE BODY   runs BODY (a shell snippet, steps joined by &&)
#                          in the test's scratch directory; ok or FAIL.
# test_skip TITLE REASON   when a prerequisite is missing: reported
#                          "skipped: TITLE (REASON)".
# TEST_ONLY=WORDS          (environment) runs (or skips) only the tests whose
#                          title contains WORDS, e.g. to repeat one alone.
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
    case "$1" in *"${TEST_ONLY:-}"*) ;; *) return 0 ;; esac
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
    case "$1" in *"${TEST_ONLY:-}"*) ;; *) return 0 ;; esac
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


# same_but_rounding WANT GOT: two reports of the same profile, line for
# line and word for word, except that a decimal number may differ by one
# unit of its last printed digit.  gprof adds the time an arc passes on in
# the order it read the arcs: two files holding the same arcs in another
# order can round a 3.75% to 3.8 in one and 3.7 in the other.  Counts,
# names and every other word must be identical.
same_but_rounding() {
    awk 'NR == FNR { want[FNR] = $0; nw = FNR; next }
        function ulp(s,   d) { d = length(s) - index(s, "."); return 10 ^ -d }
        { ng = FNR; if (FNR > nw) { bad++; print "extra line " FNR ": " $0; next }
          n = split(want[FNR], w, " ")
          if (n != NF) { bad++; print "line " FNR ": want: " want[FNR]; print "line " FNR ": got:  " $0; next }
          for (i = 1; i <= NF; i++) {
              if (w[i] == $i) continue
              if (w[i] ~ /^[0-9]*\.[0-9]+$/ && $i ~ /^[0-9]*\.[0-9]+$/ && ulp(w[i]) == ulp($i) &&
                  (w[i] - $i <= ulp($i) * 1.001 && $i - w[i] <= ulp($i) * 1.001)) continue
              bad++; print "line " FNR ": want: " want[FNR]; print "line " FNR ": got:  " $0; break
          } }
        END { if (ng < nw) { bad++; print "missing lines from " ng + 1 }; exit bad > 0 }' "$1" "$2"
}

# same_sum PROG GOT WANT...: GNU gprof reads the file GOT as the profile the
# files WANT... make: the same flat profile (up to last-digit rounding of
# the time passed along arcs) and the same arcs, count for count.  The
# call graph's order is not compared: gprof orders functions of equal
# total time by the last bits of float sums that depend on arc order.
same_sum() {
    prog=$1 got=$2
    shift 2
    gprof -b -p $prog "$@" >sum.want.p && gprof -b -p $prog $got >sum.got.p &&
        same_but_rounding sum.want.p sum.got.p &&
        gprof -b -q $prog "$@" | awk -f "$ROOT/tests/arcs.awk" | sort -u >sum.want.arcs &&
        gprof -b -q $prog $got | awk -f "$ROOT/tests/arcs.awk" | sort -u >sum.got.arcs &&
        diff -u sum.want.arcs sum.got.arcs
}

# flat_calls PROG GMON FUNC: the calls column of FUNC in GNU gprof's flat profile.
flat_calls() {
    gprof -b -p "$1" "$2" | awk -v f="$3" '$NF == f && NF == 7 { print $4 }'
}

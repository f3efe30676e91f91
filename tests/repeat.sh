#!/bin/sh
# repeat.sh: runs chosen checks N times in a row and counts failures --
# how a check once seen flaky is shown not to be (not part of make check).
#
#   sh tests/repeat.sh N 'TESTS|TEST_ONLY' ...
#
# Each argument after N is a script filter (as TESTS= takes it) and a
# substring of the check names (as TEST_ONLY= takes it; empty: all of the
# script's checks), joined by '|'.  Prints a line per script run and the
# failures' output; exits 1 if any check failed.  Issue 14's proof:
#   sh tests/repeat.sh 50 't0300|split within' 't0300|build-id' \
#       't0230|demo: gmon_write_sum' 't0155|'
#
# BUSY=K (environment) keeps K busy loops running beside the checks the
# whole time, as a shared CI machine would (issue 22 item 12: every check
# holds with two beside it):  BUSY=2 sh tests/repeat.sh 10 't0305|' ...
cd "$(dirname "$0")/.." || exit 2
n=${1:?usage: repeat.sh N 'TESTS|TEST_ONLY' ...}
shift
busy=
k=0
while [ "$k" -lt "${BUSY:-0}" ]; do
    sh -c 'while :; do :; done' &
    busy="$busy $!"
    k=$((k + 1))
done
# (INT and TERM end the run too: a trap that only killed the loops let
# the checks go on after `kill`)
[ -n "$busy" ] && trap 'kill $busy 2>/dev/null' EXIT && trap 'exit 130' INT TERM
[ -n "$busy" ] && echo "with ${BUSY} busy loops beside"
fails=0
i=1
while [ "$i" -le "$n" ]; do
    for spec in "$@"; do
        t=${spec%%|*} only=${spec#*|}
        out=$(TEST_ONLY="$only" TESTS=$t sh tests/run.sh 2>&1)
        ok=$(echo "$out" | grep -c '^ok')
        bad=$(echo "$out" | grep -c '^FAIL')
        echo "run $i $t [$only]: $ok ok, $bad failed"
        if [ "$bad" -ne 0 ]; then
            fails=$((fails + bad))
            echo "$out" | grep -A20 '^FAIL'
        fi
    done
    i=$((i + 1))
done
echo "$fails failed in $n runs"
[ "$fails" -eq 0 ]

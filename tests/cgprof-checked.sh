#!/bin/sh
# cgprof-checked.sh: what the tests run as cgprof (tests/lib.sh).  It runs
# the real one ($CGPROF_REAL) unchanged; a report it prints is checked
# with check-report.sh, and any breach is logged to $CGPROF_CHECK_LOG,
# which test_done turns into a failed test.  So every report the suite
# prints is checked, whatever the test itself looks at.
if [ "${1:-}" != report ] || [ -z "${CGPROF_CHECK_LOG:-}" ]; then
    exec "$CGPROF_REAL" "$@"
fi
out=$(mktemp "${TMPDIR:-/tmp}/cgprof-report.XXXXXX") || exit 2
"$CGPROF_REAL" "$@" >"$out"
rc=$?
cat "$out"
# Which profile was read: a cgprof profile named, or by default a
# cgprof.data newer than gmon.out; else gmon.out, laid out as gprof does.
kind=-g named=0 lines=0
for a in "$@"; do
    # -l: line symbols are numbered and shown as gprof -l shows them, a
    # cgprof profile's too (callers' lines have no entries of their own)
    case $a in -l | --line | -[!-]*l*) [ "$a" = "${a#-[IkeEfFnNmtw]}" ] && lines=1 ;; esac
    [ -f "$a" ] || continue
    case $(head -c 4 "$a" | od -An -c | tr -d ' ') in
    '211CGP') kind= ;;
    '177ELF') ;;
    *) named=1 ;;
    esac
done
if [ $named -eq 0 ] && [ -f cgprof.data ] && ! [ gmon.out -nt cgprof.data ]; then
    kind=
fi
[ $lines = 1 ] && kind=-g
if [ -s "$out" ] && ! sh "$(dirname "$0")/check-report.sh" $kind "$out" >"$out.why"; then
    { echo "cgprof $*:"; sed "s|^$out: |  |" "$out.why"; } >>"$CGPROF_CHECK_LOG"
fi
rm -f "$out" "$out.why"
exit $rc

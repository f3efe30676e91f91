#!/bin/sh
# run.sh: runs every test script (tests/t*.sh) and the unit tests, then
# prints the failed checks' names again (a CI log that keeps only part of
# the output still names them all) and the totals as "N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
pass=0 fail=0 skip=0 failed=
for t in tests/t[0-9]*.sh; do
    [ -n "${TESTS:-}" ] && case "$t" in *$TESTS*) ;; *) continue ;; esac
    echo "== $t"
    out=$(sh "$t" 2>&1)
    echo "$out" | grep -v '^# counts'
    failed="$failed$(echo "$out" | sed -n "s|^FAIL - |    $t: |p")
"
    counts=$(echo "$out" | sed -n 's/^# counts //p' | tail -n 1)
    if [ -z "$counts" ]; then
        echo "FAIL - $t ended early"
        failed="$failed    $t: ended early
"
        fail=$((fail + 1))
        continue
    fi
    set -- $counts
    pass=$((pass + $1)) fail=$((fail + $2)) skip=$((skip + $3))
done
echo
if [ "$fail" -gt 0 ]; then
    echo "failed:"
    printf '%s' "$failed" | grep .
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

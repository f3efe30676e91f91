#!/bin/sh
# run.sh: runs every test script (tests/t*.sh) and the unit tests, then
# prints the totals as "N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
pass=0 fail=0 skip=0
for t in tests/t[0-9]*.sh; do
    [ -n "${TESTS:-}" ] && case "$t" in *$TESTS*) ;; *) continue ;; esac
    echo "== $t"
    out=$(sh "$t" 2>&1)
    echo "$out" | grep -v '^# counts'
    counts=$(echo "$out" | sed -n 's/^# counts //p' | tail -n 1)
    if [ -z "$counts" ]; then
        echo "FAIL - $t ended early"
        fail=$((fail + 1))
        continue
    fi
    set -- $counts
    pass=$((pass + $1)) fail=$((fail + $2)) skip=$((skip + $3))
done
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

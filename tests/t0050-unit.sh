#!/bin/sh
# t0050: the C unit tests in tests/unit/, built against the analysis modules;
# they leave no file behind in $TMPDIR.
. "$(dirname "$0")/lib.sh"

for src in "$ROOT"/tests/unit/test_*.c; do
    name=$(basename "$src" .c)
    test_expect "unit: $name" "
        cc -std=c11 -Wall -Wextra -D_GNU_SOURCE -I$ROOT/analysis -I$ROOT/output \
            $src $ROOT/analysis/*.c $ROOT/output/escape.c -ldw -lelf -lm -o $name &&
        rm -rf tmp.$name && mkdir tmp.$name && TMPDIR=\$PWD/tmp.$name ./$name &&
        ls -A tmp.$name >left && cat left && test ! -s left
    "
done
test_done

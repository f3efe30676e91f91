#!/bin/sh
# t0050: the C unit tests in tests/unit/, built against the analysis modules.
. "$(dirname "$0")/lib.sh"

for src in "$ROOT"/tests/unit/test_*.c; do
    name=$(basename "$src" .c)
    test_expect "unit: $name" "
        cc -std=c11 -Wall -Wextra -D_GNU_SOURCE -I$ROOT/analysis -I$ROOT/output \
            $src $ROOT/analysis/*.c -ldw -lelf -lm -o $name && ./$name
    "
done
test_done

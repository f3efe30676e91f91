#!/bin/sh
# t0240: the profile readers under libFuzzer (ASan+UBSan) for a bounded
# time: gmon.out (GNU, BSD) from tests/fuzz/corpus, cgprof profiles from
# tests/fuzz/corpus-cgdata (made by `cgprof record -o` of tests/progs/calls
# and /bin/true).  A crash, leak, timeout or RSS blow-up fails.
# FUZZ_TIME=seconds overrides the default 20.
. "$(dirname "$0")/lib.sh"

FUZZER=$WORK/fuzz_gmon
if ! make -s -C "$ROOT" BUILD="$WORK" fuzz >"$WORK/make.log" 2>&1; then
    test_skip "libFuzzer run" "clang cannot build a -fsanitize=fuzzer program here: $(tail -n 1 "$WORK/make.log")"
    CGFUZZ=$WORK/fuzz_cgdata
test_expect "cgprof profile reader, libFuzzer, ${FUZZ_TIME:-20} s: no crash" "
    mkdir -p corpus-cg && ASAN_OPTIONS=quarantine_size_mb=64 \
    $CGFUZZ -max_total_time=${FUZZ_TIME:-20} -rss_limit_mb=512 -timeout=5 -print_final_stats=1 \
        -artifact_prefix=$WORK/crash-cg- corpus-cg $ROOT/tests/fuzz/corpus-cgdata >fuzzcg.log 2>&1; rc=\$?;
    grep -E '^stat::number_of_executed_units' fuzzcg.log;
    if [ \$rc -ne 0 ]; then tail -n 40 fuzzcg.log; ls $WORK/crash-cg-* 2>/dev/null; false; fi
"
test_done
    exit 0
fi

test_expect "the seed corpus reads cleanly" "
    $FUZZER -runs=0 $ROOT/tests/fuzz/corpus >seed.log 2>&1 || { tail -n 30 seed.log; false; }
"
# New inputs go to a scratch corpus (listed first), never into the tree.
test_expect "libFuzzer, ${FUZZ_TIME:-20} s: no crash" "
    mkdir -p corpus && ASAN_OPTIONS=quarantine_size_mb=64 \
    $FUZZER -max_total_time=${FUZZ_TIME:-20} -rss_limit_mb=512 -timeout=5 -print_final_stats=1 \
        -artifact_prefix=$WORK/crash- corpus $ROOT/tests/fuzz/corpus >fuzz.log 2>&1; rc=\$?;
    grep -E '^stat::number_of_executed_units' fuzz.log;
    if [ \$rc -ne 0 ]; then tail -n 40 fuzz.log; ls $WORK/crash-* 2>/dev/null; false; fi
"
CGFUZZ=$WORK/fuzz_cgdata
test_expect "cgprof profile reader, libFuzzer, ${FUZZ_TIME:-20} s: no crash" "
    mkdir -p corpus-cg && ASAN_OPTIONS=quarantine_size_mb=64 \
    $CGFUZZ -max_total_time=${FUZZ_TIME:-20} -rss_limit_mb=512 -timeout=5 -print_final_stats=1 \
        -artifact_prefix=$WORK/crash-cg- corpus-cg $ROOT/tests/fuzz/corpus-cgdata >fuzzcg.log 2>&1; rc=\$?;
    grep -E '^stat::number_of_executed_units' fuzzcg.log;
    if [ \$rc -ne 0 ]; then tail -n 40 fuzzcg.log; ls $WORK/crash-cg-* 2>/dev/null; false; fi
"
test_done

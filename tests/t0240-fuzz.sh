#!/bin/sh
# t0240: the profile readers under libFuzzer (ASan+UBSan) for a bounded
# time: gmon.out (GNU, BSD) from tests/fuzz/corpus, cgprof profiles from
# tests/fuzz/corpus-cgdata (made by `cgprof record -o` of tests/progs/calls,
# tests/progs/cxx.cc, tests/progs/stackchain.c and /bin/true), each
# analyzed and printed as well, and the DWARF reader on ELF files from
# tests/fuzz/corpus-dwarf (make-corpus-dwarf.sh).  A crash, leak, timeout
# or RSS blow-up fails.
# FUZZ_TIME=seconds overrides the defaults (60 s each; 20 s for DWARF).
. "$(dirname "$0")/lib.sh"

if ! make -s -C "$ROOT" BUILD="$WORK" fuzz >"$WORK/make.log" 2>&1; then
    if command -v clang >/dev/null && [ -e /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a ]; then
        # the toolchain is there (scripts/deps.sh installs it): a build failure is ours
        tail -n 20 "$WORK/make.log"
        test_expect "the fuzzers build" "false"
    else
        test_skip "libFuzzer run" "clang cannot build a -fsanitize=fuzzer program here: $(tail -n 1 "$WORK/make.log")"
    fi
    test_done
    exit 0
fi

# fuzz NAME SEEDS: runs $WORK/fuzz_NAME from SEEDS; new inputs go to a
# scratch corpus (listed first), never into the tree.
fuzz() {
    mkdir -p "corpus-$1" && ASAN_OPTIONS=quarantine_size_mb=64 \
        "$WORK/fuzz_$1" -max_total_time="${FUZZ_TIME:-60}" -rss_limit_mb=512 -timeout=5 \
        -print_final_stats=1 -artifact_prefix="$WORK/crash-$1-" "corpus-$1" "$2" >"fuzz-$1.log" 2>&1
    rc=$?
    grep -E '^stat::number_of_executed_units' "fuzz-$1.log"
    if [ $rc -ne 0 ]; then
        tail -n 40 "fuzz-$1.log"
        ls "$WORK"/crash-"$1"-* 2>/dev/null
        return 1
    fi
}

test_expect "the seed corpus reads cleanly" "
    $WORK/fuzz_gmon -runs=0 $ROOT/tests/fuzz/corpus >seed.log 2>&1 || { tail -n 30 seed.log; false; }
"
test_expect "gmon.out readers, libFuzzer, ${FUZZ_TIME:-60} s: no crash" "
    fuzz gmon $ROOT/tests/fuzz/corpus
"
test_expect "cgprof profile reader and analysis, libFuzzer, ${FUZZ_TIME:-60} s: no crash" "
    fuzz cgdata $ROOT/tests/fuzz/corpus-cgdata
"
test_expect "DWARF reader (ELF files), libFuzzer, ${FUZZ_TIME:-20} s: no crash" "
    fuzz dwinfo $ROOT/tests/fuzz/corpus-dwarf
"
test_done

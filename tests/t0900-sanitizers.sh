#!/bin/sh
# t0900: the tool under ASan+UBSan and the runtime under UBSan, on the
# runtime, report and export tests.  Each check's line is shown, and a
# failed one's first 20 lines of detail (what the inner test printed).
. "$(dirname "$0")/lib.sh"

SAN=$WORK/san
if ! make -s -C "$ROOT" BUILD="$SAN" CFLAGS='-O1 -g' \
    TOOL_EXTRA='-fsanitize=address,undefined -fno-sanitize-recover=all' \
    RT_EXTRA='-fsanitize=undefined -fno-sanitize-recover=all' all >"$WORK/make.log" 2>&1; then
    cat "$WORK/make.log"
    test_expect "sanitizer build" "false"
    test_done
    exit 1
fi
for t in t0100-runtime-threads t0110-runtime-builds t0120-runtime-process t0140-record t0230-readers \
    t0200-report-vs-gprof t0210-report-errors t0260-report-lines t0263-report-cglines t0300-events \
    t0145-record-honest \
    t0270-report-honest t0400-stacks t0410-stacks-stress t0500-export \
    t0155-endings t0190-soak; do
    test_expect "under sanitizers: $t passes" "
        BUILD=$SAN LINK_EXTRA=-fsanitize=undefined STRESS_SECONDS=6 RT_UNOPTIMIZED=1 sh $ROOT/tests/$t.sh >out 2>&1; rc=\$?;
        awk '/^(FAIL|ok)/ { d = /^FAIL/ ? 20 : 0; print \"  \" \$0; next }
             d > 0 && /^    / { d--; print \"  \" \$0 }' out; test \$rc -eq 0
    "
done
test_done

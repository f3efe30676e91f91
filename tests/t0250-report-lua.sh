#!/bin/sh
# t0250: a real program -- Lua 5.4 from Debian's source package, built with
# -g -pg, running bench/workload.lua: cgprof report prints what gprof prints,
# static functions named with their source files, and line by line (-l).
. "$(dirname "$0")/lib.sh"

SRC=$ROOT/bench/out/lua-src
if ! sh "$ROOT/bench/fetch-lua.sh" "$SRC" >"$WORK/fetch.log" 2>&1; then
    test_skip "Lua 5.4 side by side" "cannot fetch lua5.4 with apt-get source"
    test_done
    exit 0
fi
LUA=$(ls -d "$SRC"/lua5.4-*/src)
mkdir -p "$WORK/inc"
echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' >"$WORK/inc/lua5.4-deb-multiarch.h"
gcc -O2 -g -pg -DLUA_USE_LINUX -I"$WORK/inc" -o "$WORK/lua" \
    $(ls "$LUA"/*.c | grep -v -e /luac.c -e /onelua.c) -lm -ldl || exit 1

(cd "$WORK" && LD_PRELOAD=$LIBSO ./lua "$ROOT/bench/workload.lua" >/dev/null && mv gmon.out cg.gmon &&
    ./lua "$ROOT/bench/workload.lua" >/dev/null && mv gmon.out glibc.gmon) || exit 1

for rt in cg glibc; do
    for opts in "-b" "-b -p" "-b -q" "-b -z" "-b -l" "-b -l -p" "-b -l -q"; do
        test_expect "Lua 5.4 ($rt runtime), $opts: identical to gprof" "
            gprof $opts lua $rt.gmon >want && $CGPROF report $opts lua $rt.gmon >got &&
            diff -u want got
        "
    done
done
test_done

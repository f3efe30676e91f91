#!/bin/sh
# run.sh: mutation testing (`make mutants`; not part of `make check`).
#
# Each tests/mutants/NAME.patch is a realistic one-line bug: a description,
# a "Tests: FILTER..." line naming the test scripts that should catch it
# (substrings of tests/tNNNN-*.sh names, as TESTS= takes them; none: the
# whole suite), then a unified diff against the tree.  One at a time, in a
# scratch copy of the tree (the work tree is never touched), the mutant is
# applied, built, and its tests run; it is "killed" if some test fails and
# "survived" if all pass -- a hole in the suite.
#
#   MUTANTS=WORDS   only the mutants whose file name contains WORDS
#   TESTS=FILTER    run these tests for every mutant, whatever it names
#
# Prints one line per mutant and a summary; exits 1 if a mutant survived,
# did not apply, did not build or named no test.  The suite's tests run once per mutant:
# on a shared machine, pick mutants with MUTANTS=.
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/cgprof-mutants.XXXXXX") || exit 2
# readable by all: t0406 runs the copy's cgprof as `nobody`, and in a
# folder only root may enter every one of its checks failed, whatever the
# mutant -- each t0406 mutant was "killed" by that alone
chmod 755 "$SCRATCH" || exit 2
# a signal ends the run (a trap that only cleaned up would let it go on)
trap 'rm -rf "$SCRATCH"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

killed=0 survived=0 broken=0 survivors=
for patch in tests/mutants/*.patch; do
    name=$(basename "$patch" .patch)
    [ -n "${MUTANTS:-}" ] && case "$name" in *$MUTANTS*) ;; *) continue ;; esac
    filters=${TESTS:-$(sed -n 's/^Tests: *//p' "$patch" | head -n 1)}
    tree=$SCRATCH/$name
    log=$SCRATCH/$name.log
    # a fresh copy of the tree as it is now, uncommitted changes included
    mkdir -p "$tree" &&
        tar -C "$ROOT" --exclude=./build --exclude=./bench/out --exclude=./.git -cf - . |
        tar -C "$tree" -xf - || exit 2
    if ! patch -d "$tree" -p1 -s --no-backup-if-mismatch <"$patch" >"$log" 2>&1; then
        echo "NOT APPLIED  $name"
        sed 's/^/    /' "$log"
        broken=$((broken + 1))
        rm -rf "$tree"
        continue
    fi
    if ! make -s -C "$tree" -j2 all >"$log" 2>&1; then
        echo "NOT BUILT    $name"
        tail -n 20 "$log" | sed 's/^/    /'
        broken=$((broken + 1))
        rm -rf "$tree"
        continue
    fi
    : >"$log.fail"
    ran=0
    for f in ${filters:-.}; do
        (cd "$tree" && TESTS=$f sh tests/run.sh) >"$log" 2>&1
        sed -n 's/^FAIL - /    /p' "$log" >>"$log.fail"
        ran=$((ran + $(tail -n 1 "$log" | awk '{ print $1 + $3 }')))
    done
    if [ -s "$log.fail" ]; then
        echo "killed       $name (tests: ${filters:-all})"
        head -n 3 "$log.fail"
        killed=$((killed + 1))
    elif [ "$ran" -eq 0 ]; then
        echo "NO TESTS     $name (tests: ${filters:-all} match no test)"
        broken=$((broken + 1))
    else
        echo "SURVIVED     $name (tests: ${filters:-all}, $ran passed)"
        survived=$((survived + 1))
        survivors="$survivors $name"
    fi
    rm -rf "$tree"
done
echo
echo "$killed killed, $survived survived, $broken not applied, not built or without tests"
[ -n "$survivors" ] && echo "survivors:$survivors"
[ "$survived" -eq 0 ] && [ "$broken" -eq 0 ]

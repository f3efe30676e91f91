#!/bin/sh
# t0010: the tree builds warning-free (-Werror) under gcc and clang, and
# libcgprof.so needs nothing but libc.
. "$(dirname "$0")/lib.sh"

for cc in gcc clang; do
    command -v $cc >/dev/null || { test_skip "$cc build" "no $cc"; continue; }
    test_expect "$cc: -Wall -Wextra -Werror build" "
        make -s -C $ROOT CC=$cc BUILD=$WORK/b-$cc CFLAGS='-O2 -g -Werror' all >make.log 2>&1 ||
        { cat make.log; false; }
    "
done

test_expect "libcgprof.so depends on libc alone and exports only its interface" "
    readelf -d $LIBSO | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' >needed &&
    test \"\$(cat needed)\" = libc.so.6 &&
    nm -D --defined-only $LIBSO | awk '{print \$3}' | sort >exported &&
    printf '%s\n' _Exit __fentry__ __monstartup _exit _mcleanup _mcount bsd_signal cgprof_dump \
        dlclose dlopen execl execle execlp execv execve execvp execvpe fexecve mcount moncontrol \
        monstartup pthread_create sigaction signal sysv_signal sigaltstack clone chroot \
        setuid seteuid setreuid setresuid setgid setegid setregid setresgid | sort >allowed &&
    diff allowed exported
"
# make mutants (tests/mutants/run.sh, not part of check) reports a patch
# that no longer applies as broken, but nobody runs every mutant on every
# change: a patch whose code has moved on rots silently, and its bug is no
# longer checked at all.  Each must still apply (offsets allowed, as
# run.sh applies them), name its tests, and change something.
test_expect "every tests/mutants patch applies to the tree as it is and names its tests" "
    mkdir tree && tar -C $ROOT --exclude=./build --exclude=./bench/out --exclude=./.git -cf - . |
        tar -C tree -xf - &&
    bad=0 &&
    for p in $ROOT/tests/mutants/*.patch; do
        n=\$(basename \$p .patch)
        grep -q '^Tests: *t[0-9]' \$p || { echo \"\$n: no Tests: line\"; bad=1; }
        grep -q '^+[^+]\\|^-[^-]' \$p || { echo \"\$n: changes nothing\"; bad=1; }
        patch -d tree -p1 -s --dry-run <\$p >log 2>&1 || { echo \"\$n: does not apply\"; cat log; bad=1; }
    done &&
    test \$bad = 0
"
test_done

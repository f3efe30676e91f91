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
test_done

/* hitpath.c: the counting fast paths' cost in instructions, for callgrind
 * (t0150).  Build with -pg.
 *   fib N   fib(N), recursive, each arc in its home slot from its second
 *           call on -- mcount's hit path, call after call (gcc -O2 turns
 *           one of the two recursive calls into a loop: fib(25) calls fib
 *           121,393 times, as gprof's flat profile says).
 *   lib N   N calls of strlen from one call site, through the PLT: the
 *           library-call stub's hit path (docs/libcalls.md).
 * Prints the result, so that nothing is optimised away. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) long fib(long n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static const char *volatile text = "hit path";

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long n = atol(argv[2]);
    if (strcmp(argv[1], "fib") == 0) {
        printf("%ld\n", fib(n));
        return 0;
    }
    if (strcmp(argv[1], "lib") == 0) {
        size_t sum = 0;
        for (long i = 0; i < n; i++)
            sum += strlen(text);
        printf("%zu\n", sum);
        return 0;
    }
    return 2;
}

/* manycalls.c: argv[1] (default 2,000,000) calls of one function, and
 * nothing else: what a per-call cost of the runtime shows in (t0150). */
#include <stdlib.h>

volatile long sink;

__attribute__((noinline, noipa)) void leaf(long i)
{
    sink += i;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    for (long i = 0; i < n; i++)
        leaf(i);
    return 0;
}

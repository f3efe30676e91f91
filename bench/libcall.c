/* libcall.c: 20 million calls (or argv[2]) either to a trivial function in
 * a shared library built without -pg (`lib`: what library-call counting
 * adds to each) or to a trivial -pg function of this program (`pg`: what
 * an mcount adds to each).  Built with -pg; libtriv.so from the same file
 * with -DLIBTRIV.  Used by bench/run.sh. */
#include <stdlib.h>
#include <string.h>

#ifdef LIBTRIV
int triv(int x)
{
    return x + 1;
}
#else
int triv(int x);

__attribute__((noinline)) static int pgtriv(int x)
{
    __asm__ volatile("");
    return x + 1;
}

int main(int argc, char **argv)
{
    long n = argc > 2 ? atol(argv[2]) : 20000000;
    int lib = argc > 1 && strcmp(argv[1], "lib") == 0, s = 0;
    for (long i = 0; i < n; i++)
        s = lib ? triv(s) : pgtriv(s);
    return s == (int)n ? 0 : 1;
}
#endif

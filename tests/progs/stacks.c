/* stacks.c: a program whose time split among callers is known by
 * construction, for the measured call graph (tests/t0260):
 *   cheap() and dear() each call mid() N times; dear's calls do 9 times
 *   the work of cheap's, so 90% of mid's time is dear's (the 10/90 split);
 *   sorter() sorts with libc's qsort, whose comparator cmp() does fixed
 *   work per call; ping() and pong() are a mutual recursion, each level
 *   doing fixed work, and pong() calls leafwork() at the bottom; fact()
 *   recurses into itself.  All work is done in the functions themselves
 *   (no shared helper), so each one's self time is its own.
 * usage: stacks [SCALE]   (SCALE multiplies the work; default 1)
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noipa))
#endif

static volatile double acc;
static int scale = 1;

#define WORK(units)                                                                                \
    do {                                                                                           \
        for (long i_ = 0; i_ < (long)(units)*2000; i_++)                                           \
            acc += (double)i_ * 0.5;                                                               \
    } while (0)

NOINLINE void mid(int units)
{
    WORK(units);
}

NOINLINE void cheap(void)
{
    mid(1);
}

NOINLINE void dear(void)
{
    mid(9);
}

NOINLINE int cmp(const void *a, const void *b)
{
    WORK(1);
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

NOINLINE void sorter(int n)
{
    int *v = malloc((size_t)n * sizeof *v);
    for (int i = 0; i < n; i++)
        v[i] = (i * 7919) % n;
    qsort(v, (size_t)n, sizeof *v, cmp);
    acc += v[0];
    free(v);
}

NOINLINE void leafwork(void)
{
    WORK(4);
}

NOINLINE int pong(int n);

NOINLINE int ping(int n)
{
    WORK(1);
    return n == 0 ? 0 : pong(n - 1) + 1;
}

NOINLINE int pong(int n)
{
    WORK(1);
    if (n == 0) {
        leafwork();
        return 0;
    }
    return ping(n - 1) + 1;
}

NOINLINE long fact(int n)
{
    WORK(1);
    return n <= 1 ? 1 : n * fact(n - 1);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        scale = atoi(argv[1]);
    for (int r = 0; r < 100 * scale; r++) {
        cheap();
        dear();
    }
    sorter(200 * scale);
    for (int r = 0; r < 20 * scale; r++)
        ping(9);
    for (int r = 0; r < 20 * scale; r++)
        fact(10);
    printf("%g\n", acc);
    return 0;
}

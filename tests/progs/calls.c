/* calls.c: a single-threaded program with known call counts and some CPU
 * time in each function:  main -> a 10, a -> b 100 (10 each), main -> c 3,
 * c -> c (self recursion) 3 * 4, static s called by b 100 times. */
/* expected arcs: tests/progs/calls.arcs */
#include <stdio.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noipa))
#endif

static volatile double acc;
static volatile int depth = 4;
static volatile int iters = 20000;

static NOINLINE void s(int n)
{
    for (int i = 0; i < n; i++)
        acc += i * 0.5;
}

/* Each call below is followed by a store, so no compiler turns it into a
 * tail jump (which would make mcount see the caller's caller). */
NOINLINE void b(void)
{
    s(iters);
    acc += 1;
}

NOINLINE void a(void)
{
    for (int i = 0; i < 10; i++)
        b();
    acc += 1;
}

NOINLINE int c(int depth)
{
    int r = depth > 0 ? c(depth - 1) + 1 : 0;
    acc += 1;
    return r;
}

int main(void)
{
    int r = 0;
    for (int i = 0; i < 10; i++)
        a();
    for (int i = 0; i < 3; i++)
        r += c(depth);
    printf("%d %.0f\n", r, acc > 0 ? 1.0 : 0.0);
    return 0;
}

/* cycles.c: several call cycles, static functions, a function never
 * called and forward and backward calls, for the report option tests:
 *   cycle 1: even <-> odd (mutual recursion)
 *   cycle 2: ring_a -> ring_b -> ring_c -> ring_a (static ring_b)
 *   self recursion: fact
 *   never called: unused; called only through a pointer: via_ptr */
#include <stdio.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noipa))
#endif

static volatile double acc;
static volatile int spin = 40000;

static NOINLINE void burn(int n)
{
    for (int i = 0; i < n * spin; i++)
        acc += i * 0.25;
}

NOINLINE int odd(int n);

NOINLINE int even(int n)
{
    burn(1);
    int r = n == 0 ? 1 : odd(n - 1);
    acc += 1;
    return r;
}

NOINLINE int odd(int n)
{
    burn(2);
    int r = n == 0 ? 0 : even(n - 1);
    acc += 1;
    return r;
}

NOINLINE void ring_a(int n);

NOINLINE void ring_c(int n)
{
    burn(1);
    if (n > 0)
        ring_a(n - 1);
    acc += 1;
}

static NOINLINE void ring_b(int n)
{
    burn(3);
    ring_c(n);
    acc += 1;
}

NOINLINE void ring_a(int n)
{
    burn(1);
    ring_b(n);
    acc += 1;
}

NOINLINE long fact(int n)
{
    long r = n <= 1 ? 1 : n * fact(n - 1);
    acc += 1;
    return r;
}

NOINLINE void unused(void)
{
    burn(1);
    acc += 1;
}

NOINLINE void via_ptr(void)
{
    burn(5);
    acc += 1;
}

static NOINLINE void helper(void)
{
    for (int i = 0; i < 50; i++)
        fact(10);
    acc += 1;
}

void (*volatile fp)(void) = via_ptr;

int main(int argc, char **argv)
{
    int r = 0;
    for (int i = 0; i < 40; i++)
        r += even(i % 7);
    for (int i = 0; i < 30; i++)
        ring_a(3);
    helper();
    for (int i = 0; i < 20; i++)
        fp();
    if (argc > 5)
        unused();
    printf("%d %.0f\n", r, acc > 0 ? 1.0 : 0.0);
    return 0;
}

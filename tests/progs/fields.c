/* fields.c: known counts, a known CPU split, and a call that is the last
 * instruction of its function.  Build with -O2 -g -pg.  main calls hot()
 * 3 times (line marked SITE_HOT) and warm() once (SITE_WARM); hot() calls
 * leaf() 200 times, warm() calls leaf() 100 times; hot's loops do three
 * times warm's work (about 0.4 s of CPU in all).  main ends in a call of
 * the noreturn finish() (SITE_FINISH), which exits with status 0: no
 * instruction follows that call in main, its return address is past
 * main's end. */
#include <stdio.h>
#include <stdlib.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noipa))
#endif

static volatile double sink;
static volatile long scale = 40000000;

NOINLINE void leaf(void)
{
    sink += 1;
}

static NOINLINE void spin(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i ^ (i >> 3)) * 0.25;
    sink += x;
}

NOINLINE void hot(void)
{
    for (int i = 0; i < 200; i++)
        leaf();
    spin(scale);
    sink += 1;
}

NOINLINE void warm(void)
{
    for (int i = 0; i < 100; i++)
        leaf();
    spin(scale);
    sink += 1;
}

NOINLINE __attribute__((noreturn)) void finish(int st)
{
    printf("%.0f\n", sink > 0 ? 1.0 : 0.0);
    exit(st);
}

int main(void)
{
    for (int i = 0; i < 3; i++)
        hot(); /* SITE_HOT */
    warm();    /* SITE_WARM */
    finish(0); /* SITE_FINISH */
}

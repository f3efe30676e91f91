/* callsites.c: call sites and hot lines with known numbers.  Build with
 * -O0 -g -pg.  main calls work() from three lines (marked SITE_A, SITE_B,
 * SITE_C) 3, 5 and 7 times; work() calls leaf() once per call.  Then
 * lines() runs two loops: the one marked HOT does three times the work
 * of the one marked COLD, about 0.3 s of CPU in all. */
#include <stdio.h>

static volatile double sink;

void leaf(void)
{
    sink += 1;
}

void work(void)
{
    leaf();
}

void lines(long n)
{
    double x = 0;
    /* each loop on one line, so its samples are that line's */
    // clang-format off
    for (long i = 0; i < 3 * n; i++) x += (double)(i ^ (i >> 3)) * 0.25; /* HOT */
    for (long i = 0; i < n; i++) x += (double)(i ^ (i >> 3)) * 0.25; /* COLD */
    // clang-format on
    sink += x;
}

int main(void)
{
    // clang-format off
    for (int i = 0; i < 3; i++) work(); /* SITE_A */
    for (int i = 0; i < 5; i++) work(); /* SITE_B */
    for (int i = 0; i < 7; i++) work(); /* SITE_C */
    // clang-format on
    lines(30000000);
    printf("done\n");
    return 0;
}

/* hotlines.c: three hot loops, each on one source line marked L60, L30
 * and L10 (their shares of the time when built at -O0), and with -DLIB a
 * fourth in a shared library (hotlineslib.c, LIBHOT).  It measures its
 * own truth: the CPU time of each loop, by its thread's CPU clock, in
 * ms.  Prints "L60 L30 L10 LIBHOT" (LIBHOT 0 without -DLIB).  Its calls
 * are fixed (no loop runs until a time), so two runs count the same.
 * (t0263: cgprof report -l must give each line its time.) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef LIB
void lib_spin(long n);
#endif

static volatile double sink;

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void spin60(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++) x = x * 0.999999 + 1.5; /* L60 */
    sink = x;
}

static void spin30(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++) x = x * 0.999998 + 2.5; /* L30 */
    sink = x;
}

static void spin10(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++) x = x * 0.999997 + 3.5; /* L10 */
    sink = x;
}

int main(int argc, char **argv)
{
    long unit = argc > 1 ? atol(argv[1]) : 10000000;
    double t0 = cpu_ms();
    spin60(6 * unit);
    double t1 = cpu_ms();
    spin30(3 * unit);
    double t2 = cpu_ms();
    spin10(unit);
    double t3 = cpu_ms(), t4 = t3;
#ifdef LIB
    lib_spin(3 * unit);
    t4 = cpu_ms();
#endif
    printf("%.3f %.3f %.3f %.3f\n", t1 - t0, t2 - t1, t3 - t2, t4 - t3);
    return 0;
}

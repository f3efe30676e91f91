/* callers.c: one function, work, called 100 times by heavy and 100 times
 * by light, nine times longer from heavy: gprof's equal-calls estimate
 * splits work's time 50/50, the truth is about 90/10.  The program
 * measures the truth itself (CPU time around each call) and prints the
 * shares of work's time per caller: "heavy H light L" in percent. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noipa))
#endif

static volatile double sink;
static double spent[2];

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE void work(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i ^ (i >> 3)) * 0.25;
    sink += x;
}

NOINLINE void heavy(long n)
{
    for (int i = 0; i < 100; i++) {
        double t = cpu();
        work(9 * n);
        spent[0] += cpu() - t;
    }
    sink += 1;
}

NOINLINE void light(long n)
{
    for (int i = 0; i < 100; i++) {
        double t = cpu();
        work(n);
        spent[1] += cpu() - t;
    }
    sink += 1;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    heavy(n);
    light(n);
    double all = spent[0] + spent[1];
    printf("heavy %.1f light %.1f\n", 100 * spent[0] / all, 100 * spent[1] / all);
    return 0;
}

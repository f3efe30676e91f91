/* inlined.c: hot work in code GCC inlines -- inner() inlined into
 * middle(), inlined into work() -- as in real programs' static inline
 * helpers.  It measures its own truth: the CPU time of work's calls, of
 * middle's inlined body within them and of inner's within that (the
 * clocks are read outside the inlined code, by a function never inlined).
 * Prints
 *   work_ms middle_ms inner_ms total_ms
 * (t0267: the stacks of a cgprof profile, expanded from the DWARF, must
 * show work;middle;inner with these shares). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double t_middle, t_inner; /* milliseconds */

__attribute__((noinline)) static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static inline __attribute__((always_inline)) double inner(long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += (double)(i % 7) * 0.5;
    return s;
}

static inline __attribute__((always_inline)) double middle(long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += (double)(i % 3) * 0.25;
    double a = cpu_ms();
    s += inner(2 * n);
    t_inner += cpu_ms() - a;
    return s;
}

__attribute__((noinline)) double work(long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += (double)(i % 5) * 0.125;
    double a = cpu_ms();
    s += middle(n);
    t_middle += cpu_ms() - a;
    return s;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    double sink = 0, in_work = 0, t0 = cpu_ms();
    for (int r = 0; r < 8; r++) {
        double a = cpu_ms();
        sink += work(n);
        in_work += cpu_ms() - a;
    }
    printf("%.1f %.1f %.1f %.1f\n", in_work, t_middle, t_inner, cpu_ms() - t0);
    return sink == 0.5; /* keep the sums */
}

/* clones.c: hot functions that GCC at -O2 turns into clones, as on real
 * programs -- heavy.constprop.0 (always called with k = 3) and
 * split_work.part.0 (the body of split_work, whose cheap test GCC inlines
 * into its callers).  It measures its own truth: the CPU time of the calls
 * into heavy and into via_a/via_b (almost all of it in split_work.part.0),
 * and how often split_work's body ran.  Prints
 *   heavy_ms SPLIT_MS total_ms bodies
 * (t0265: cgprof must name the clones and give them their own time). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

long bodies; /* calls of split_work that ran its body */

__attribute__((noinline)) static double heavy(long n, double k)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += (double)(i % 7) * k;
    return s;
}

static double split_work(long n)
{
    if (__builtin_expect(n <= 0, 1))
        return 0;
    double s = 0;
    bodies++;
    for (long i = 0; i < n; i++)
        s += (double)(i % 5) * 0.5;
    for (long i = 0; i < n / 4; i++)
        s += (double)(i % 3) * 0.25;
    return s;
}

__attribute__((noinline)) double via_a(long n)
{
    return split_work(n) + split_work(n - 4000000000L);
}

__attribute__((noinline)) double via_b(long n)
{
    return split_work(n / 2) + split_work(-n);
}

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000000;
    double sink = 0, in_heavy = 0, in_split = 0, t0 = cpu_ms();
    for (int r = 0; r < 8; r++) {
        double a = cpu_ms();
        sink += heavy(n, 3.0);
        double b = cpu_ms();
        sink += via_a(n) + via_b(n);
        double c = cpu_ms();
        in_heavy += b - a;
        in_split += c - b;
    }
    printf("%.1f %.1f %.1f %ld\n", in_heavy, in_split, cpu_ms() - t0, bodies);
    return sink == 0.5; /* keep the sums */
}

/* inlhdr.c: hot code inlined from another file -- hdr_sum() of inlhdr.h
 * inlined into outer() -- so that its samples belong to the header's
 * lines (t0268: callgrind's fi= switches to the header and back).  It
 * measures its own truth: the CPU time of outer's calls and of the
 * inlined hdr_sum within them (read by a function never inlined).
 * Prints
 *   outer_ms hdr_sum_ms */
#include "inlhdr.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double t_hdr; /* milliseconds */

__attribute__((noinline)) static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

__attribute__((noinline)) double outer(long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += (double)(i % 5) * 0.125;
    double a = cpu_ms();
    s += hdr_sum(2 * n);
    t_hdr += cpu_ms() - a;
    return s;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000000;
    double sink = 0, in_outer = 0;
    for (int r = 0; r < 8; r++) {
        double a = cpu_ms();
        sink += outer(n);
        in_outer += cpu_ms() - a;
    }
    printf("%.1f %.1f\n", in_outer, t_hdr);
    return sink == 0.5; /* keep the sums */
}

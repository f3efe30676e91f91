/* split.c: CPU time split about 60/30/10 between three functions, built
 * without -pg.  Each function measures its own CPU time, and the program
 * prints the true shares: "f60 S60 f30 S30 f10 S10" in percent.
 *   split N [DEPTH]: with DEPTH, the three run under DEPTH frames of
 *   recursion (deep(), 160 bytes a frame): a stack deeper than the 8 KB
 *   copied with each perf sample (t0305).
 *   split N DEPTH jitter: each call's work drawn in [N/2, 3N/2) (the same
 *   on average), so that no timer ticking at a fixed rate (the kernel's,
 *   for itimer and cpu) falls into step with the program's rounds.
 * After the shares: "steal S", the seconds of its real time that were
 * neither its CPU time nor a wait for a CPU (its run queue delay): on a
 * virtual machine, the time the hypervisor took its CPU away (steal),
 * which runs perf's cpu-clock but not the thread's CPU clock; then
 * "real R", the seconds of real time its work took. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clocks.h"

static volatile double sink;

static inline __attribute__((always_inline)) double cpu(void)
{
    return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static double spent[3];

static void work(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i ^ (i >> 3)) * 0.25;
    sink += x;
}

__attribute__((noinline)) void f60(long n)
{
    double t = cpu();
    work(n * 6);
    spent[0] += cpu() - t;
}

__attribute__((noinline)) void f30(long n)
{
    double t = cpu();
    work(n * 3);
    spent[1] += cpu() - t;
}

__attribute__((noinline)) void f10(long n)
{
    double t = cpu();
    work(n);
    spent[2] += cpu() - t;
}

static int jitter;
static unsigned long long rng = 0x9E3779B97F4A7C15ull;

static long draw(long n)
{
    if (!jitter)
        return n;
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n / 2 + (long)(rng % (unsigned long long)n);
}

/* inlined into its callers, as before the jitter: the call graph is main -> f60, f30, f10 */
static inline __attribute__((always_inline)) void rounds(long n)
{
    for (int r = 0; r < 100; r++) {
        f60(draw(n));
        f30(draw(n));
        f10(draw(n));
    }
}

__attribute__((noinline)) void deep(int d, long n)
{
    volatile char frame[128];
    frame[0] = (char)d;
    if (d > 0)
        deep(d - 1, n);
    else
        rounds(n);
    frame[1] = frame[0]; /* not a tail call */
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int depth = argc > 2 ? atoi(argv[2]) : 0;
    jitter = argc > 3;
    double r0 = clock_s(CLOCK_MONOTONIC), c0 = cpu(), w0 = run_delay();
    if (depth > 0)
        deep(depth, n);
    else
        rounds(n);
    double real = clock_s(CLOCK_MONOTONIC) - r0, steal = real - (cpu() - c0) - (run_delay() - w0);
    double all = spent[0] + spent[1] + spent[2];
    printf("f60 %.1f f30 %.1f f10 %.1f steal %.4f real %.4f\n", 100 * spent[0] / all,
           100 * spent[1] / all, 100 * spent[2] / all, steal > 0 ? steal : 0, real);
    return 0;
}

/* unnamed.c: time in code no symbol names, reached through a PLT stub,
 * beside a cycle.  lib_entry (libhid.so, stripped) spends its time in a
 * local function of the library; ping and pong call each other; main
 * calls lib_tiny through its PLT stub many times over.  Prints the CPU
 * time in ms of the calls into lib_entry and into ping, then the total:
 *   LIB_MS CYCLE_MS TOTAL_MS
 * (t0266: the report and every export must give the same times). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void lib_entry(long n);
long lib_tiny(long i);
volatile double cycle_sink;

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

__attribute__((noinline)) void pong(long n, int depth);

__attribute__((noinline)) void ping(long n, int depth)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i % 13) * 0.25;
    cycle_sink += x;
    if (depth > 0)
        pong(n, depth - 1);
    cycle_sink += 1; /* not a tail call: the cycle shows in the stacks */
}

__attribute__((noinline)) void pong(long n, int depth)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i % 11) * 0.75;
    cycle_sink += x;
    if (depth > 0)
        ping(n, depth - 1);
    cycle_sink += 1;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000000;
    double in_lib = 0, in_cycle = 0, t0 = cpu_ms();
    for (int r = 0; r < 6; r++) {
        double a = cpu_ms();
        lib_entry(n);
        double b = cpu_ms();
        ping(n / 8, 3);
        double c = cpu_ms();
        in_lib += b - a;
        in_cycle += c - b;
        long t = 0;
        for (long k = 0; k < n / 2; k++)
            t += lib_tiny(k);
        cycle_sink += (double)t;
    }
    printf("%.1f %.1f %.1f\n", in_lib, in_cycle, cpu_ms() - t0);
    return 0;
}

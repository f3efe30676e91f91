/* nocalls.c [MS [steal]]: a -pg program that makes no calls of its own: main
 * spins in one loop until its thread has used MS ms of CPU (default 300,
 * its own clock) and returns 0.  With "steal", it then prints "steal S":
 * the seconds of its real time that were neither its CPU time nor a wait
 * for a CPU (its run queue delay) -- on a virtual machine, the time the
 * hypervisor held its CPU, which perf's cpu-clock counts and the thread's
 * CPU clock does not (libc's calls, after the loop). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clocks.h"

static volatile double sink;

int main(int argc, char **argv)
{
    double ms = argc > 1 ? atof(argv[1]) : 300;
    int steal = argc > 2 && strcmp(argv[2], "steal") == 0;
    double r0 = 0, w0 = 0;
    if (steal)
        r0 = clock_s(CLOCK_MONOTONIC), w0 = run_delay();
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
        for (int i = 0; i < 100000; i++)
            sink += i * 0.5;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
    if (steal) {
        double s = clock_s(CLOCK_MONOTONIC) - r0 - (run_delay() - w0) -
                   ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9);
        printf("steal %.4f\n", s > 0 ? s : 0);
    }
    return 0;
}

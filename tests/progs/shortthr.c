/* shortthr.c: NTHREADS threads, one after another, each burning about US
 * microseconds of CPU in burn_thread, then the same total in burn_main on
 * the main thread.  Each burn measures its own thread CPU time and its
 * real time, and the program prints the true shares in percent:
 * "burn_thread S burn_main S real R M", S by CPU time, R and M by real
 * time (the same on an idle machine; on a busy one real time includes
 * the time waiting for a CPU, which -e wall samples too).
 * Then "steal T M": each side's real time that was neither its CPU time
 * nor a wait for a CPU (its run queue delay), in seconds -- on a virtual
 * machine, the time the hypervisor held the CPU, which perf's cpu-clock
 * counts (in part) and the CPU clock does not; then "cpu T M", each
 * side's CPU seconds.
 * A third argument "block": each thread blocks every signal first, as
 * many servers' workers do. */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clocks.h"

static volatile double sink;
static long per_us; /* loop iterations per microsecond */

static double cpu(void)
{
    return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static void work(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i ^ (i >> 3)) * 0.25;
    sink += x;
}

static double spent_thread, spent_main, real_thread, real_main, steal_thread, steal_main;
static long us;
static int block;

__attribute__((noinline)) static void *burn_thread(void *arg)
{
    (void)arg;
    if (block) {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);
    }
    double r = clock_s(CLOCK_MONOTONIC), t = cpu(), w = run_delay();
    work(us * per_us);
    double c = cpu() - t, e = clock_s(CLOCK_MONOTONIC) - r;
    spent_thread += c; /* threads run one at a time */
    real_thread += e;
    steal_thread += e - c - (run_delay() - w);
    return NULL;
}

__attribute__((noinline)) static void burn_main(long n)
{
    double r = clock_s(CLOCK_MONOTONIC), t = cpu(), w = run_delay();
    work(n);
    double c = cpu() - t, e = clock_s(CLOCK_MONOTONIC) - r;
    spent_main += c;
    real_main += e;
    steal_main += e - c - (run_delay() - w);
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 1000;
    us = argc > 2 ? atol(argv[2]) : 200;
    block = argc > 3 && strcmp(argv[3], "block") == 0;
    /* calibrate: iterations in 20 ms */
    double t = cpu();
    long n = 0, step = 100000;
    while (cpu() - t < 0.02) {
        work(step);
        n += step;
    }
    per_us = (long)(n / ((cpu() - t) * 1e6)) + 1;
    for (int i = 0; i < nthreads; i++) {
        pthread_t th;
        if (pthread_create(&th, NULL, burn_thread, NULL) != 0)
            return 1;
        pthread_join(th, NULL);
    }
    burn_main((long)(spent_thread * 1e6) * per_us);
    double all = spent_thread + spent_main;
    double real = real_thread + real_main;
    printf("burn_thread %.1f burn_main %.1f real %.1f %.1f steal %.4f %.4f cpu %.4f %.4f\n",
           100 * spent_thread / all, 100 * spent_main / all, 100 * real_thread / real,
           100 * real_main / real, steal_thread > 0 ? steal_thread : 0,
           steal_main > 0 ? steal_main : 0, spent_thread, spent_main);
    return 0;
}

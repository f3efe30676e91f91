/* barrier: NT threads (argv[1], default 200) that all exist at once: each
 * waits until every one has started, then spins 20 ms of its own CPU.
 * With "block" (argv[2]) every thread blocks every signal first.  Prints
 * the threads' own user and system time (getrusage RUSAGE_THREAD, read by
 * each thread last thing), summed: the truth to check sampling against;
 * and their stolen time: the real time of their spins that was neither
 * their CPU time nor a wait for a CPU (their run queue delay) -- on a
 * virtual machine, the time the hypervisor held the CPU, which perf's
 * cpu-clock counts and the threads' CPU clocks do not. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "clocks.h"

static pthread_barrier_t all;
static volatile long sink;
static int block;
/* which threads measure their stolen time: each reads its schedstat (a
 * file descriptor) as its spin begins and ends, all at once -- with 512
 * threads under ulimit -n 1024 those opens could take descriptors the
 * profiler needs for its threads' events, and some failed (a steal of
 * 1,260 s summed), so only the first 64 threads measure, and the steal
 * printed is theirs scaled to all n (they all spin at the same time) */
#define MEASURED 64
static long user_us, sys_us, steal_us, nmeasured; /* atomic */

static double cpu_ms(void)
{
    return clock_s(CLOCK_THREAD_CPUTIME_ID) * 1e3;
}

static void *run(void *arg)
{
    int measure = (int)(intptr_t)arg < MEASURED;
    if (block) {
        sigset_t every;
        sigfillset(&every);
        pthread_sigmask(SIG_BLOCK, &every, NULL);
    }
    pthread_barrier_wait(&all);
    double r0 = clock_s(CLOCK_MONOTONIC) * 1e3, w0 = measure ? run_delay() * 1e3 : 0;
    double c0 = cpu_ms(), end = c0 + 20;
    while (cpu_ms() < end)
        for (int i = 0; i < 10000; i++)
            sink += i;
    double stolen = clock_s(CLOCK_MONOTONIC) * 1e3 - r0 - (cpu_ms() - c0);
    if (measure)
        stolen -= run_delay() * 1e3 - w0;
    if (measure && stolen > 0)
        __atomic_add_fetch(&steal_us, (long)(stolen * 1e3), __ATOMIC_RELAXED);
    if (measure)
        __atomic_add_fetch(&nmeasured, 1, __ATOMIC_RELAXED);
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
        __atomic_add_fetch(&user_us, ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec,
                           __ATOMIC_RELAXED);
        __atomic_add_fetch(&sys_us, ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec,
                           __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    block = argc > 2 && strcmp(argv[2], "block") == 0;
    pthread_t *th = malloc(sizeof *th * (size_t)n);
    if (!th || n < 1 || pthread_barrier_init(&all, NULL, (unsigned)n) != 0)
        return 1;
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, run, (void *)(intptr_t)i) != 0)
            return 1;
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    printf("%d threads: user %.6f s, system %.6f s, steal %.6f s\n", n, user_us / 1e6, sys_us / 1e6,
           nmeasured ? (double)steal_us * n / (double)nmeasured / 1e6 : 0.0);
    return 0;
}

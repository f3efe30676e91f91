/* thrclock.c [NT] [US] [PAR]: NT short threads (default 60), PAR at a time
 * (default 2); thread i burns (i % 10 + 1) * US / 10 microseconds of its
 * own CPU (default US 20000: 2-20 ms), measured on its own clock
 * (CLOCK_THREAD_CPUTIME_ID, which starts when the thread does), then
 * ends.  At the end main prints one line per thread, "thread TID CPU_NS
 * REAL_NS": the thread's CPU time and its real time from its first
 * instruction to its last, both read last thing in the thread; then
 * "main TID CPU_NS REAL_NS" likewise for main up to that point.  A fifth
 * field on a thread's line, STEAL_NS: its real time less its CPU time and
 * its waits for a CPU (its run queue delay, /proc/thread-self/schedstat)
 * -- on a virtual machine, the time the hypervisor held the CPU, which
 * perf's cpu-clock and task-clock count and its CPU clock does not. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clocks.h"

struct rec {
    long tid;
    long long cpu, real, steal;
};

static struct rec *recs;
static long us = 20000;
static volatile double sink;

static inline __attribute__((always_inline)) long long ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void burn(long long until_cpu)
{
    double x = 0;
    do {
        for (int i = 0; i < 2000; i++)
            x += (double)(i ^ (i >> 3)) * 0.25;
    } while (ns(CLOCK_THREAD_CPUTIME_ID) < until_cpu);
    sink += x;
}

__attribute__((noinline)) static void *worker(void *arg)
{
    long i = (long)arg;
    long long r0 = ns(CLOCK_MONOTONIC), w0 = (long long)(run_delay() * 1e9),
              c0 = ns(CLOCK_THREAD_CPUTIME_ID);
    burn((i % 10 + 1) * us * 100LL);
    recs[i].tid = syscall(SYS_gettid);
    recs[i].cpu = ns(CLOCK_THREAD_CPUTIME_ID);
    recs[i].real = ns(CLOCK_MONOTONIC) - r0;
    recs[i].steal = recs[i].real - ((long long)(run_delay() * 1e9) - w0) - (recs[i].cpu - c0);
    if (recs[i].steal < 0)
        recs[i].steal = 0;
    return NULL;
}

int main(int argc, char **argv)
{
    long long r0 = ns(CLOCK_MONOTONIC);
    int nt = argc > 1 ? atoi(argv[1]) : 60;
    us = argc > 2 ? atol(argv[2]) : 20000;
    int par = argc > 3 ? atoi(argv[3]) : 2;
    if (nt < 1 || us < 10 || par < 1)
        return 2;
    recs = calloc(nt, sizeof *recs);
    pthread_t *t = calloc(par, sizeof *t);
    if (!recs || !t)
        return 1;
    for (int i = 0; i < nt; i += par) {
        int n = nt - i < par ? nt - i : par;
        for (int k = 0; k < n; k++)
            if (pthread_create(&t[k], NULL, worker, (void *)(long)(i + k)) != 0)
                return 1;
        for (int k = 0; k < n; k++)
            pthread_join(t[k], NULL);
    }
    long long cpu = ns(CLOCK_THREAD_CPUTIME_ID), real = ns(CLOCK_MONOTONIC) - r0;
    for (int i = 0; i < nt; i++)
        printf("thread %ld %lld %lld %lld\n", recs[i].tid, recs[i].cpu, recs[i].real,
               recs[i].steal);
    printf("main %ld %lld %lld\n", (long)syscall(SYS_gettid), cpu, real);
    return 0;
}

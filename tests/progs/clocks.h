/* clocks.h: the clocks the test programs measure their own truth by.
 * Inline (always), so that a program built with -pg gets no arcs of its
 * own from them.
 *
 * Stolen time: on a virtual machine the hypervisor may hold the CPU while
 * a thread runs (steal).  The thread's CPU clock leaves that time out
 * (CONFIG_PARAVIRT_TIME_ACCOUNTING), and so does its run queue wait, but
 * its real time and perf's cpu-clock and task-clock run through it.  A
 * thread's real time less its CPU time less its run queue wait over a
 * stretch in which it never blocks is the time stolen from it. */
#ifndef TEST_CLOCKS_H
#define TEST_CLOCKS_H
#include <stdio.h>
#include <time.h>

/* seconds on clock ID */
static inline __attribute__((always_inline)) double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* seconds this thread has waited on a run queue (the second field of
 * /proc/thread-self/schedstat), or 0 if unknown */
static inline __attribute__((always_inline)) double run_delay(void)
{
    unsigned long long run, wait;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    int ok = f && fscanf(f, "%llu %llu", &run, &wait) == 2;
    if (f)
        fclose(f);
    return ok ? wait / 1e9 : 0;
}
#endif

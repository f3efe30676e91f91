/* sleepy.c: about half its run asleep, half computing, in ROUNDS rounds of
 * 10 ms of its own CPU time and a 10 ms sleep.  Any EINTR or short sleep is
 * fatal (exit 3): a sampler that interrupts blocked threads would make it
 * fail.  Prints what it measured, for the wall event's truth:
 *   compute C blocked B cpu P waited D of W
 * C: seconds in compute() by real time, less its waits for a CPU: its CPU
 * time and what a virtual machine's hypervisor took from it meanwhile
 * (steal: the thread stood at its pc, which wall counts); B: seconds blocked in nap(), that is the
 * time inside nanosleep less the time spent waiting for a CPU after the
 * wake-up (the kernel's run delay, /proc/thread-self/schedstat); P: the
 * process's CPU time, every thread included; D: seconds the main thread
 * waited for a CPU in all, of W seconds of real time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clocks.h"

static volatile double sink;

__attribute__((noinline)) void compute(double seconds)
{
    double end = clock_s(CLOCK_THREAD_CPUTIME_ID) + seconds;
    while (clock_s(CLOCK_THREAD_CPUTIME_ID) < end)
        for (int i = 0; i < 10000; i++)
            sink += i * 0.5;
}

__attribute__((noinline)) void nap(long ms)
{
    struct timespec ts = {0, ms * 1000000L}, rem;
    if (nanosleep(&ts, &rem) != 0) {
        fprintf(stderr, "nanosleep: %s\n", errno == EINTR ? "EINTR" : "error");
        exit(3);
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 30;
    double computing = 0, blocked = 0, start = clock_s(CLOCK_MONOTONIC), delay = run_delay();
    for (int r = 0; r < rounds; r++) {
        double w = clock_s(CLOCK_MONOTONIC), d = run_delay();
        compute(0.010);
        computing += clock_s(CLOCK_MONOTONIC) - w - (run_delay() - d);
        w = clock_s(CLOCK_MONOTONIC), d = run_delay();
        double c = clock_s(CLOCK_THREAD_CPUTIME_ID);
        nap(10);
        blocked += clock_s(CLOCK_MONOTONIC) - w - (run_delay() - d) -
                   (clock_s(CLOCK_THREAD_CPUTIME_ID) - c);
    }
    printf("compute %.4f blocked %.4f cpu %.4f waited %.4f of %.4f\n", computing, blocked,
           clock_s(CLOCK_PROCESS_CPUTIME_ID), run_delay() - delay,
           clock_s(CLOCK_MONOTONIC) - start);
    return 0;
}

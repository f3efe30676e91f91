/* nocalls.c [MS]: a -pg program that makes no calls of its own: main spins
 * in one loop until its thread has used MS ms of CPU (default 300, its own
 * clock) and returns 0. */
#include <stdlib.h>
#include <time.h>

static volatile double sink;

int main(int argc, char **argv)
{
    double ms = argc > 1 ? atof(argv[1]) : 300;
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
        for (int i = 0; i < 100000; i++)
            sink += i * 0.5;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
    return 0;
}

/* sleepers.c N: N threads, one after another, each 60 rounds of a little
 * computing and a 20 us nanosleep.  Every thread's sampling starts with a
 * first period drawn at random, which may end anywhere in the thread's
 * CPU time -- in the kernel too, on the way into a nanosleep: a signal
 * sent to the thread then would make that nanosleep return EINTR.
 * Counts them; prints "eintr E of S" and exits 3 if E > 0. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static long eintr_n, sleeps;

static void *sleeper(void *arg)
{
    (void)arg;
    for (int r = 0; r < 60; r++) {
        for (long i = 0; i < 5000; i++)
            sink += (unsigned long)i;
        struct timespec ts = {0, 20000};
        if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
            __atomic_add_fetch(&eintr_n, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&sleeps, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, sleeper, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 2;
    }
    printf("eintr %ld of %ld\n", eintr_n, sleeps);
    return eintr_n ? 3 : 0;
}

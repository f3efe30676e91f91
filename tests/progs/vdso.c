/* vdso.c: spends its time in the vDSO (clock_gettime), in two threads, so
 * the report must name [vdso] functions and show per-thread totals. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void *loop(void *arg)
{
    struct timespec ts;
    long n = *(long *)arg;
    for (long i = 0; i < n; i++)
        clock_gettime(CLOCK_MONOTONIC, &ts);
    return NULL;
}

int main(void)
{
    long n = 8000000;
    pthread_t th;
    pthread_create(&th, NULL, loop, &n);
    loop(&n);
    pthread_join(th, NULL);
    printf("done\n");
    return 0;
}

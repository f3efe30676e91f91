/* barrier: NT threads (argv[1], default 200) that all exist at once: each
 * waits until every one has started, then spins 20 ms of its own CPU. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_barrier_t all;
static volatile long sink;

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *run(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&all);
    double end = cpu_ms() + 20;
    while (cpu_ms() < end)
        for (int i = 0; i < 10000; i++)
            sink += i;
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    pthread_t *th = malloc(sizeof *th * (size_t)n);
    if (!th || n < 1 || pthread_barrier_init(&all, NULL, (unsigned)n) != 0)
        return 1;
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, run, NULL) != 0)
            return 1;
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    printf("%d threads\n", n);
    return 0;
}

/* fibthreads.c: T threads each computing fib(N) -- per-call cost under
 * threads, to show that threads do not contend in the runtime. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noipa))
#endif

static int n;

NOINLINE static long fib(int k)
{
    return k < 2 ? k : fib(k - 1) + fib(k - 2);
}

static void *run(void *arg)
{
    *(long *)arg = fib(n);
    return NULL;
}

int main(int argc, char **argv)
{
    int t = argc > 1 ? atoi(argv[1]) : 2;
    n = argc > 2 ? atoi(argv[2]) : 32;
    pthread_t th[64];
    long r[64];
    for (int i = 0; i < t && i < 64; i++)
        pthread_create(&th[i], NULL, run, &r[i]);
    for (int i = 0; i < t && i < 64; i++)
        pthread_join(th[i], NULL);
    printf("%ld\n", r[0]);
    return 0;
}

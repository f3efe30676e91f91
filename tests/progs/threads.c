/* threads.c: NT threads, each making a known number of calls on every arc,
 * including a mutually recursive pair; every arc count is exact in advance:
 *   thread_main -> work   NT
 *   work -> hot           NT * K
 *   work -> ping          NT * R
 *   ping -> pong          NT * R * D/2
 *   pong -> ping          NT * R * D/2
 */
#include <pthread.h>
#include <stdio.h>

#ifndef NT
#define NT 4
#endif
#define K 200000
#define R 1000
#define D 10

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noipa))
#endif

static volatile long sink;
static volatile int depth = D; /* volatile: no compiler may fold the recursion */

NOINLINE void hot(int i)
{
    sink += i;
}

NOINLINE int pong(int n);

NOINLINE int ping(int n)
{
    return n > 0 ? pong(n - 1) + 1 : 0;
}

NOINLINE int pong(int n)
{
    return n > 0 ? ping(n - 1) + 1 : 0;
}

NOINLINE void work(void)
{
    for (int i = 0; i < K; i++)
        hot(i);
    for (int r = 0; r < R; r++)
        sink += ping(depth);
}

NOINLINE void *thread_main(void *arg)
{
    work();
    return arg;
}

int main(void)
{
    pthread_t th[NT];
    for (int i = 0; i < NT; i++)
        if (pthread_create(&th[i], NULL, thread_main, NULL) != 0)
            return 1;
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    printf("done %ld\n", (long)sink);
    return 0;
}

/* blocksig.c: burns about 0.2 s of CPU in main and in a thread, with
 * every signal blocked ("block") or none ("open"): the cpu event's
 * per-thread timers cannot sample a thread that blocks their signal. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile double sink;

static void *burn(void *arg)
{
    double x = 0;
    for (long i = 0; i < 100000000; i++)
        x += (double)i * 0.5;
    sink += x;
    return arg;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "block") == 0) {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);
    }
    pthread_t t;
    if (pthread_create(&t, NULL, burn, NULL) != 0)
        return 1;
    burn(NULL);
    pthread_join(t, NULL);
    puts("done");
    return 0;
}

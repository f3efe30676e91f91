/* stackstress SECONDS LIB: 4 threads for SECONDS, each in a loop of
 * dlopen(LIB) / call into it / dlclose, malloc-heavy work (a list built
 * and freed) and plain computation -- while the runtime samples every
 * thread with its call stack.  The loader's lock and malloc's arenas are
 * taken and released all the time: a signal handler that used either
 * would deadlock here.  Exits 0 with "ok N" (N: rounds done). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
static double seconds;
static const char *lib;
volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct node {
    struct node *next;
    char pad[40];
};

NOINLINE void churn(int n)
{
    struct node *head = NULL;
    for (int i = 0; i < n; i++) {
        struct node *x = malloc(sizeof *x + (size_t)(i % 7) * 16);
        if (!x)
            abort();
        x->next = head;
        head = x;
    }
    while (head) {
        struct node *x = head;
        head = x->next;
        free(x);
    }
}

NOINLINE void compute(int n)
{
    for (int i = 0; i < n; i++)
        sink += (unsigned long)i * 3;
}

NOINLINE void *worker(void *arg)
{
    long rounds = 0;
    double end = now() + seconds;
    while (now() < end) {
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "stackstress: %s\n", dlerror());
            exit(2);
        }
        void (*fn)(long) = (void (*)(long))dlsym(h, "plugin_work");
        if (!fn)
            exit(2);
        fn(2);
        dlclose(h);
        churn(2000);
        compute(200000);
        rounds++;
    }
    *(long *)arg = rounds;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    seconds = atof(argv[1]);
    lib = argv[2];
    pthread_t th[4];
    long rounds[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++)
        if (pthread_create(&th[i], NULL, worker, &rounds[i]) != 0)
            return 2;
    long total = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        total += rounds[i];
    }
    printf("ok %ld\n", total);
    return 0;
}

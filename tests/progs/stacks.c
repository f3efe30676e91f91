/* stacks.c: a program whose time split among callers is known by
 * construction, for the measured call graph (tests/t0262, t0261):
 *   cheap() and dear() each call mid() as often; dear's calls do 9 times
 *   the work of cheap's, so 90% of mid's time is dear's (the 10/90 split);
 *   sorter() sorts with libc's qsort, whose comparator cmp() does fixed
 *   work per call; ping() and pong() are a mutual recursion, each level
 *   doing fixed work, pong() calling leafwork() at the bottom; fact()
 *   recurses into itself; napper() sleeps in libc's usleep.  All work is
 *   done in the functions themselves (no shared helper), so each one's
 *   self time is its own.  It times each phase itself (CPU time of the
 *   thread, or real time for the sleep) and prints "phase NAME SECONDS".
 *
 * usage: stacks [MODE [SCALE]]
 *   all      (default) the split, sort, cycle and recursion phases in turn
 *   threads  the split and the sort at once, each in a thread of its own
 *   plugin   the split with mid() taken from the library named by
 *            $STACKS_PLUGIN (stkplug.c), loaded with dlopen
 *   sleep    napper(): 200 x usleep(2000) (for -e wall), then the split
 * SCALE multiplies the work (default 1: about 3 s of CPU for "all").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noipa))
#endif

static volatile double acc;
static double scale = 1;
static void (*mid_fn)(int);

#define WORK(units)                                                                                \
    do {                                                                                           \
        for (long i_ = 0; i_ < (long)((units)*1000); i_++)                                         \
            acc += (double)i_ * 0.5;                                                               \
    } while (0)

NOINLINE void mid(int units)
{
    WORK(units);
}

/* the work after each call keeps it a call (not a tail jump) */
NOINLINE void cheap(void)
{
    mid_fn(1);
    acc += 1;
}

NOINLINE void dear(void)
{
    mid_fn(9);
    acc += 1;
}

NOINLINE int cmp(const void *a, const void *b)
{
    WORK(1);
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

NOINLINE void sorter(int n)
{
    int *v = malloc((size_t)n * sizeof *v);
    for (int i = 0; i < n; i++)
        v[i] = (int)((i * 7919L) % n);
    qsort(v, (size_t)n, sizeof *v, cmp);
    acc += v[0];
    free(v);
}

NOINLINE void leafwork(void)
{
    WORK(4);
}

NOINLINE int pong(int n);

NOINLINE int ping(int n)
{
    WORK(1);
    return n == 0 ? 0 : pong(n - 1) + 1;
}

NOINLINE int pong(int n)
{
    WORK(1);
    if (n == 0) {
        leafwork();
        return 0;
    }
    return ping(n - 1) + 1;
}

NOINLINE long fact(int n)
{
    WORK(1);
    return n <= 1 ? 1 : n * fact(n - 1);
}

NOINLINE void napper(void)
{
    for (int i = 0; i < 200; i++)
        usleep(2000);
}

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A little work of random length between rounds, so that the sampling
 * timer's period and the round's length stay incommensurate (otherwise
 * every sample could land at the same point of a round). */
static void *split(void *arg)
{
    double t = clock_s(CLOCK_THREAD_CPUTIME_ID);
    unsigned long seed = 12345;
    for (long r = 0; r < (long)(40000 * scale); r++) {
        cheap();
        dear();
        seed = seed * 6364136223846793005ul + 1442695040888963407ul;
        WORK((double)(seed >> 40) / (1 << 24) * 2);
    }
    printf("phase split %.6f\n", clock_s(CLOCK_THREAD_CPUTIME_ID) - t);
    return arg;
}

static void *sort(void *arg)
{
    double t = clock_s(CLOCK_THREAD_CPUTIME_ID);
    sorter((int)(8000 * scale));
    printf("phase sort %.6f\n", clock_s(CLOCK_THREAD_CPUTIME_ID) - t);
    return arg;
}

static void cycle(void)
{
    double t = clock_s(CLOCK_THREAD_CPUTIME_ID);
    for (long r = 0; r < (long)(5000 * scale); r++)
        ping(9);
    printf("phase cycle %.6f\n", clock_s(CLOCK_THREAD_CPUTIME_ID) - t);
}

static void recursion(void)
{
    double t = clock_s(CLOCK_THREAD_CPUTIME_ID);
    for (long r = 0; r < (long)(5000 * scale); r++)
        fact(10);
    printf("phase fact %.6f\n", clock_s(CLOCK_THREAD_CPUTIME_ID) - t);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    if (argc > 2)
        scale = atof(argv[2]);
    mid_fn = mid;
    if (strcmp(mode, "threads") == 0) {
        pthread_t a, b;
        pthread_create(&a, NULL, split, NULL);
        pthread_create(&b, NULL, sort, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
    } else if (strcmp(mode, "plugin") == 0) {
        void *h = dlopen(getenv("STACKS_PLUGIN"), RTLD_NOW);
        if (!h || !(*(void **)&mid_fn = dlsym(h, "plug_mid"))) {
            fprintf(stderr, "stacks: %s\n", dlerror());
            return 1;
        }
        split(NULL);
    } else if (strcmp(mode, "sleep") == 0) {
        double t = clock_s(CLOCK_MONOTONIC);
        napper();
        printf("phase nap %.6f\n", clock_s(CLOCK_MONOTONIC) - t);
        t = clock_s(CLOCK_MONOTONIC);
        split(NULL);
        printf("phase split-real %.6f\n", clock_s(CLOCK_MONOTONIC) - t);
    } else {
        split(NULL);
        sort(NULL);
        cycle();
        recursion();
    }
    printf("%g\n", acc);
    return 0;
}

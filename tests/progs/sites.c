/* sites.c: many call arcs, so the runtime's per-thread tables grow through
 * several generations, and calls from a signal handler while the thread is
 * busy adding arcs.  Build with -pg.  Modes:
 *   threads T R  T threads each call spray() R times: 100 call sites in
 *                spray each call all 1000 functions g000..g999, so each
 *                thread makes 100,000 distinct arcs.  Exact counts:
 *                thread_main->spray T*R, spray->gNNN 100*T*R.
 *   signal       main calls spray() once while a helper thread signals
 *                it (SIGUSR1) again and again; the handler calls one of
 *                1000 functions h000..h999, the Kth signal h(K mod 1000)
 *                from one of 10 call sites, so most of its arcs are new
 *                and reach the slow path while main is inside it.  Prints
 *                "signals N"; exact counts: main->spray 1,
 *                spray->gNNN 100, handler->hNNN the number of K < N with
 *                K mod 1000 = NNN.  The helper sends the next signal only
 *                once the handler has run and main has made a call since,
 *                so at most one handler's calls wait in the runtime's
 *                queue at a time.
 *   callers R    one function, target(), called from 1000 functions:
 *                main calls each cNNN R times, and cNNN calls target
 *                NNN % 7 + 1 times.  Exact counts: main->cNNN R,
 *                cNNN->target (NNN % 7 + 1) * R -- 1000 arcs into one
 *                callee, each to be told apart by its caller.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noipa))
#endif

static volatile long progress; /* calls made by spray's callees (not the handler's) */

#define R10(M, p) M(p##0) M(p##1) M(p##2) M(p##3) M(p##4) M(p##5) M(p##6) M(p##7) M(p##8) M(p##9)
#define R100(M, p)                                                                                 \
    R10(M, p##0) R10(M, p##1) R10(M, p##2) R10(M, p##3) R10(M, p##4) R10(M, p##5) R10(M, p##6)    \
        R10(M, p##7) R10(M, p##8) R10(M, p##9)
#define R1000(M, p)                                                                                \
    R100(M, p##0) R100(M, p##1) R100(M, p##2) R100(M, p##3) R100(M, p##4) R100(M, p##5)          \
        R100(M, p##6) R100(M, p##7) R100(M, p##8) R100(M, p##9)

static volatile long hsink;
#define DEFINE_G(name)                                                                             \
    NOINLINE void name(void)                                                                       \
    {                                                                                              \
        progress++;                                                                                \
    }
#define DEFINE_H(name)                                                                             \
    NOINLINE void name(void)                                                                       \
    {                                                                                              \
        hsink++;                                                                                   \
    }
#define ADDRESS(name) name,
R1000(DEFINE_G, g) R1000(DEFINE_H, h)
static void (*const gs[1000])(void) = {R1000(ADDRESS, g)};
static void (*const hs[1000])(void) = {R1000(ADDRESS, h)};

NOINLINE void target(void)
{
    hsink++;
}
#define DEFINE_C(name)                                                                             \
    NOINLINE void name(int k)                                                                      \
    {                                                                                              \
        for (int i = 0; i < k; i++)                                                                \
            target();                                                                              \
        hsink++;                                                                                   \
    }
R1000(DEFINE_C, c)
static void (*const cs[1000])(int) = {R1000(ADDRESS, c)};

/* 100 call sites, each calling every g */
#define SITE(unused) gs[j]();
NOINLINE void spray(void)
{
    for (int j = 0; j < 1000; j++) {
        R100(SITE, s)
    }
}

static int rounds;

NOINLINE void *thread_main(void *arg)
{
    for (int r = 0; r < rounds; r++)
        spray();
    return arg;
}

static volatile sig_atomic_t handled;
static volatile int done;
static pthread_t main_thread;

NOINLINE void handler(int sig)
{
    (void)sig;
    int k = handled;
    switch (k / 1000 % 10) {
    case 0: hs[k % 1000](); break;
    case 1: hs[k % 1000](); break;
    case 2: hs[k % 1000](); break;
    case 3: hs[k % 1000](); break;
    case 4: hs[k % 1000](); break;
    case 5: hs[k % 1000](); break;
    case 6: hs[k % 1000](); break;
    case 7: hs[k % 1000](); break;
    case 8: hs[k % 1000](); break;
    default: hs[k % 1000](); break;
    }
    handled = k + 1;
}

/* not instrumented: it makes no calls of its own to count, it only signals */
__attribute__((no_instrument_function)) static void *signaller(void *arg)
{
    while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        int k = handled;
        long seen = progress;
        pthread_kill(main_thread, SIGUSR1);
        while (handled == k)
            sched_yield();
        while (progress == seen && !__atomic_load_n(&done, __ATOMIC_ACQUIRE))
            sched_yield();
    }
    return arg;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "threads") == 0 && argc == 4) {
        int nt = atoi(argv[2]);
        rounds = atoi(argv[3]);
        pthread_t th[64];
        if (nt < 1 || nt > 64)
            return 2;
        for (int i = 0; i < nt; i++)
            if (pthread_create(&th[i], NULL, thread_main, NULL) != 0)
                return 1;
        for (int i = 0; i < nt; i++)
            pthread_join(th[i], NULL);
        return 0;
    }
    if (strcmp(mode, "signal") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = handler;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(SIGUSR1, &sa, NULL);
        main_thread = pthread_self();
        pthread_t th;
        if (pthread_create(&th, NULL, signaller, NULL) != 0)
            return 1;
        while (handled == 0) /* at least one signal, however loaded the machine */
            sched_yield();
        spray();
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
        pthread_join(th, NULL);
        printf("signals %d\n", (int)handled);
        return 0;
    }
    if (strcmp(mode, "callers") == 0 && argc == 3) {
        int r = atoi(argv[2]);
        for (int i = 0; i < r; i++)
            for (int j = 0; j < 1000; j++)
                cs[j](j % 7 + 1);
        return 0;
    }
    fprintf(stderr, "usage: sites threads T R | sites signal | sites callers R\n");
    return 2;
}

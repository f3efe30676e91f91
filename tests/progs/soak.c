/* soak: everything at once, for a while, with counts known exactly.
 *
 *   soak SECONDS LIB      (LIB: path of libsoak.so, built with -pg)
 *
 * Rounds until SECONDS of wall time have passed; each round:
 *   - 4 threads, each calls tw() 1000 times and mallocs and frees;
 *   - dlopen(LIB), lib_fn() called 10 times through dlsym, dlclose;
 *   - raise(SIGUSR1), handled by the program's own on_usr1();
 *   - every 4th round a forked child calls cf() 100 times and _exits;
 *     every 8th round (the same child) execs this program as "leaf",
 *     which calls ce() 50 times.
 * The whole time, its own ITIMER_PROF (100 Hz, SIGPROF) and ITIMER_REAL
 * (SIGALRM) tick into handlers of its own.
 * Prints "rounds R forks F execs E usr1 U" (U must be R) on stdout.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;
static volatile sig_atomic_t usr1, prof_ticks, alrm_ticks;

NOINLINE void tw(void) { sink++; }
NOINLINE void cf(void) { sink += 2; }
NOINLINE void ce(void) { sink += 3; }

NOINLINE void on_usr1(int sig) { (void)sig; usr1++; }
static void on_prof(int sig) { (void)sig; prof_ticks++; }
static void on_alrm(int sig) { (void)sig; alrm_ticks++; }

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        char *p = malloc((size_t)(16 + i % 512));
        if (!p)
            abort();
        memset(p, i, 16);
        sink += p[3];
        tw();
        free(p);
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "leaf") == 0) {
        for (int i = 0; i < 50; i++)
            ce();
        return 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: soak SECONDS LIB\n");
        return 2;
    }
    double end = now() + atof(argv[1]);
    signal(SIGUSR1, on_usr1);
    signal(SIGPROF, on_prof);
    signal(SIGALRM, on_alrm);
    struct itimerval it = {{0, 10000}, {0, 10000}};
    setitimer(ITIMER_PROF, &it, NULL);
    setitimer(ITIMER_REAL, &it, NULL);
    int rounds = 0, forks = 0, execs = 0;
    while (now() < end) {
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            if (pthread_create(&th[i], NULL, worker, NULL) != 0)
                return 3;
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
        void *h = dlopen(argv[2], RTLD_NOW);
        if (!h)
            return 4;
        void (*fn)(void) = (void (*)(void))dlsym(h, "lib_fn");
        if (!fn)
            return 5;
        for (int i = 0; i < 10; i++)
            fn();
        dlclose(h);
        raise(SIGUSR1);
        if (rounds % 4 == 0) {
            int ex = rounds % 8 == 0;
            pid_t pid = fork();
            if (pid == 0) {
                for (int i = 0; i < 100; i++)
                    cf();
                if (ex) {
                    execl("/proc/self/exe", argv[0], "leaf", (char *)NULL);
                    _exit(6);
                }
                _exit(0);
            }
            int st;
            while (waitpid(pid, &st, 0) < 0)
                ;
            if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return 6;
            forks++;
            execs += ex;
        }
        rounds++;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    setitimer(ITIMER_REAL, &off, NULL);
    printf("rounds %d forks %d execs %d usr1 %d prof %d alrm %d\n", rounds, forks, execs,
           (int)usr1, (int)prof_ticks, (int)alrm_ticks);
    return 0;
}

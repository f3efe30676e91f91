/* ownsig: a program with signals and timers of its own; prints what it
 * saw, so a test can tell whether the profiler's signals reached it.
 *
 *   ownsig prof-handler MS  a SIGPROF handler and no timer: "sigprof N"
 *   ownsig itimer MS        its own ITIMER_PROF at 100 Hz: "ticks N cpu MS"
 *   ownsig profil MS        profil() over its text: "profil N cpu MS hz F"
 *   ownsig rt               a handler for SIGRTMAX, 5 sigqueue()s: "rt N"
 *   ownsig rt-blocked       SIGRTMAX blocked in main, 10 sigqueue()s with
 *                           values 1..10, 300 ms later a thread that takes
 *                           them: "rt-blocked N sum S bad B" (B: not
 *                           sigqueue()'s from this process)
 *   ownsig readback         sigaction reads back what it set: "readback ok"
 *   ownsig mcleanup         work() 1000 times, _mcleanup(), 500 more
 *   ownsig dumps MS         cgprof_dump() over and over for MS ms of CPU:
 *                           "dumps N cpu MS"
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/gmon.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

extern char __executable_start;
extern int __profile_frequency(void);
void _mcleanup(void);
int cgprof_dump(void) __attribute__((weak)); /* libcgprof's, when it is there */

static volatile long sink;
static volatile sig_atomic_t count;

NOINLINE void work(void)
{
    sink++;
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOINLINE void spin(double ms)
{
    double end = cpu_ms() + ms;
    while (cpu_ms() < end)
        for (int i = 0; i < 200000; i++)
            sink += i;
}

static void on_sig(int sig)
{
    (void)sig;
    count++;
}

static volatile sig_atomic_t rt_sum, rt_bad, worker_stop;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    count++;
    rt_sum += si->si_value.sival_int;
    if (si->si_code != SI_QUEUE || si->si_pid != getpid())
        rt_bad++;
}

static void *rt_worker(void *arg)
{
    (void)arg;
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGRTMAX);
    pthread_sigmask(SIG_UNBLOCK, &m, NULL);
    spin(200);
    return NULL;
}

static unsigned short bins[1 << 16];

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    double ms = argc > 2 ? (double)atoi(argv[2]) : 500;
    if (strcmp(mode, "prof-handler") == 0) {
        signal(SIGPROF, on_sig);
        spin(ms);
        printf("sigprof %d\n", (int)count);
    } else if (strcmp(mode, "itimer") == 0) {
        signal(SIGPROF, on_sig);
        struct itimerval it = {{0, 10000}, {0, 10000}};
        setitimer(ITIMER_PROF, &it, NULL);
        spin(ms);
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_PROF, &off, NULL);
        printf("ticks %d cpu %.0f\n", (int)count, cpu_ms());
    } else if (strcmp(mode, "profil") == 0) {
        /* scale 1: every pc of the first 8 GB past the start in some bin */
        profil(bins, sizeof bins, (size_t)&__executable_start, 1);
        double c0 = cpu_ms();
        spin(ms);
        double c1 = cpu_ms();
        profil(NULL, 0, 0, 0);
        unsigned long sum = 0;
        for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++)
            sum += bins[i];
        printf("profil %lu cpu %.0f hz %d\n", sum, c1 - c0, __profile_frequency());
    } else if (strcmp(mode, "rt") == 0) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sig;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGRTMAX, &sa, &old) != 0 || old.sa_handler != SIG_DFL)
            return 1;
        spin(100);
        union sigval v = {.sival_int = 1};
        for (int i = 0; i < 5; i++)
            sigqueue(getpid(), SIGRTMAX, v);
        spin(100);
        printf("rt %d\n", (int)count);
    } else if (strcmp(mode, "rt-blocked") == 0) {
        /* only the profiler's thread could take them meanwhile */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_rt;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigset_t m;
        sigemptyset(&m);
        sigaddset(&m, SIGRTMAX);
        if (sigaction(SIGRTMAX, &sa, NULL) != 0 || pthread_sigmask(SIG_BLOCK, &m, NULL) != 0)
            return 1;
        for (int i = 1; i <= 10; i++) {
            union sigval v = {.sival_int = i};
            sigqueue(getpid(), SIGRTMAX, v);
        }
        spin(300);
        pthread_t t;
        if (pthread_create(&t, NULL, rt_worker, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 1;
        printf("rt-blocked %d sum %d bad %d\n", (int)count, (int)rt_sum, (int)rt_bad);
    } else if (strcmp(mode, "readback") == 0) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        if (sigaction(SIGTERM, NULL, &old) != 0 || old.sa_handler != SIG_DFL)
            return 1;
        sa.sa_handler = on_sig;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        if (sigaction(SIGTERM, NULL, &old) != 0 || old.sa_handler != on_sig)
            return 2;
        if (signal(SIGTERM, SIG_DFL) != on_sig)
            return 3;
        if (sigaction(SIGTERM, NULL, &old) != 0 || old.sa_handler != SIG_DFL)
            return 4;
        if (signal(SIGSEGV, SIG_IGN) != SIG_DFL || signal(SIGSEGV, SIG_DFL) != SIG_IGN)
            return 5;
        printf("readback ok\n");
    } else if (strcmp(mode, "dumps") == 0) {
        int n = 0;
        double c0 = cpu_ms();
        while (cgprof_dump && cpu_ms() < c0 + ms) {
            work();
            cgprof_dump();
            n++;
        }
        printf("dumps %d cpu %.0f\n", n, cpu_ms() - c0);
    } else if (strcmp(mode, "mcleanup") == 0) {
        for (int i = 0; i < 1000; i++)
            work();
        _mcleanup();
        for (int i = 0; i < 500; i++)
            work();
    } else {
        fprintf(stderr,
                "usage: ownsig prof-handler|itimer|profil|rt|rt-blocked|readback|mcleanup [MS]\n");
        return 2;
    }
    return 0;
}

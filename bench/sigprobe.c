/* sigprobe.c: what a thread's perf event does with its overflow signal,
 * measured without cgprof (issue 19, items 1 and 7).  Each of THREADS
 * threads opens a cpu-clock event on itself (period 100 us) that signals
 * it at every overflow (O_ASYNC, F_SETSIG, F_SETOWN_EX), with or without
 * kernel samples and with or without a ring buffer mmapped, and runs a
 * loop of CPU work, pipe writes and reads (kernel time) and a 20 us
 * nanosleep, for SECONDS.  Prints the nanosleeps, how many returned EINTR,
 * the signals received, the events that could not be opened or mapped,
 * and the threads' CPU time (all, and user only) against the signals'
 * (each signal is a 100 us sample of the thread's CPU).
 * usage: sigprobe EXCLUDE_KERNEL MMAP THREADS SECONDS */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_NS 100000
static int excl_kernel, do_mmap, seconds;
static long sigs, eintr, sleeps, unopened, unmapped;
static double cpu, ucpu;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void handler(int s, siginfo_t *si, void *uc)
{
    (void)s;
    (void)si;
    (void)uc;
    __atomic_add_fetch(&sigs, 1, __ATOMIC_RELAXED);
}

static void *run(void *arg)
{
    (void)arg;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = PERIOD_NS;
    a.sample_type = PERF_SAMPLE_IP;
    a.wakeup_events = 1;
    a.exclude_kernel = excl_kernel;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    long bad_open = fd < 0, bad_map = 0;
    if (fd >= 0 && do_mmap &&
        mmap(NULL, 9 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED)
        bad_map = 1;
    if (fd >= 0) {
        struct f_owner_ex own = {F_OWNER_TID, gettid()};
        fcntl(fd, F_SETSIG, SIGRTMIN + 3);
        fcntl(fd, F_SETOWN_EX, &own);
        fcntl(fd, F_SETFL, O_ASYNC);
    }
    long n = 0, e = 0;
    int p[2];
    if (pipe(p) < 0)
        abort();
    static char buf[4096];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (volatile int i = 0; i < 20000; i++)
            ;
        for (int k = 0; k < 4; k++)
            if (write(p[1], buf, sizeof buf) < 0 || read(p[0], buf, sizeof buf) < 0)
                abort();
        struct timespec ts = {0, 20000};
        if (nanosleep(&ts, NULL) < 0 && errno == EINTR)
            e++;
        n++;
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while ((t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec <
             seconds * 1000000000L);
    if (fd >= 0)
        fcntl(fd, F_SETFL, 0);
    struct timespec c;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    pthread_mutex_lock(&mu);
    ucpu += ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
    sleeps += n;
    eintr += e;
    unopened += bad_open;
    unmapped += bad_map;
    cpu += c.tv_sec + c.tv_nsec / 1e9;
    pthread_mutex_unlock(&mu);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: sigprobe EXCLUDE_KERNEL MMAP THREADS SECONDS\n");
        return 2;
    }
    excl_kernel = atoi(argv[1]);
    do_mmap = atoi(argv[2]);
    int threads = atoi(argv[3]);
    seconds = atoi(argv[4]);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGRTMIN + 3, &sa, NULL);
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, run, NULL) != 0)
            abort();
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("exclude_kernel=%d mmap=%d threads=%d: nanosleeps %ld EINTR %ld unopened %ld "
           "unmapped %ld signals %ld (%.3f s) cpu %.3f s, user %.3f s\n",
           excl_kernel, do_mmap, threads, sleeps, eintr, unopened, unmapped, sigs,
           sigs * PERIOD_NS / 1e9, cpu, ucpu);
    return 0;
}

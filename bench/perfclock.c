/* perfclock.c: what the kernel charges a thread for perf cpu-clock samples
 * at a rate, without cgprof -- the floor under any sampling with that
 * event.  The same fixed work runs in turn without an event, with a
 * cpu-clock event counting only, and with one sampling at HZ (no ring
 * buffer: each overflow is the timer interrupt and nothing else), ROUNDS
 * times; prints the medians of the thread's CPU time and the cost per
 * sample.
 * usage: perfclock [HZ [ITERATIONS [ROUNDS]]] (default 1000 300000000 7) */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double thread_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

__attribute__((noinline)) static unsigned long work(unsigned long n)
{
    unsigned long x = 88172645463325252ul;
    for (unsigned long i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

/* One run of the work under no event (period < 0), a counting event (0)
 * or a sampling one; its CPU ms, and the event's count in *ns. */
static double run(long period, unsigned long n, long long *ns)
{
    int fd = -1;
    *ns = 0;
    if (period >= 0) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = PERF_TYPE_SOFTWARE;
        a.config = PERF_COUNT_SW_CPU_CLOCK;
        a.sample_period = (unsigned long long)period;
        a.sample_type = PERF_SAMPLE_IP;
        a.exclude_hv = 1;
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
        if (fd < 0) {
            perror("perfclock: perf_event_open");
            exit(1);
        }
    }
    double t0 = thread_ms();
    volatile unsigned long sink = work(n);
    (void)sink;
    double t1 = thread_ms();
    if (fd >= 0) {
        if (read(fd, ns, sizeof *ns) != sizeof *ns)
            *ns = 0;
        close(fd);
    }
    return t1 - t0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long hz = argc > 1 ? atol(argv[1]) : 1000;
    unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 300000000ul;
    int rounds = argc > 3 ? atoi(argv[3]) : 7;
    if (hz <= 0 || rounds <= 0 || rounds > 99) {
        fprintf(stderr, "usage: perfclock [HZ [ITERATIONS [ROUNDS]]]\n");
        return 2;
    }
    long period = 1000000000L / hz;
    double off[99], cnt[99], on[99], samples = 0;
    for (int r = 0; r < rounds; r++) {
        long long ns;
        off[r] = run(-1, n, &ns);
        cnt[r] = run(0, n, &ns);
        on[r] = run(period, n, &ns);
        samples += (double)ns / (double)period;
    }
    samples /= rounds;
    qsort(off, (size_t)rounds, sizeof *off, cmp);
    qsort(cnt, (size_t)rounds, sizeof *cnt, cmp);
    qsort(on, (size_t)rounds, sizeof *on, cmp);
    double o = off[rounds / 2], c = cnt[rounds / 2], s = on[rounds / 2];
    printf(
        "perf cpu-clock without cgprof, %ld Hz: no event %.0f ms, counting %.0f ms, sampling %.0f "
        "ms (%.0f samples): +%.1f%%, %.1f us per sample\n",
        hz, o, c, s, samples, (s - o) * 100 / o, samples > 0 ? (s - o) * 1000 / samples : 0);
    return 0;
}

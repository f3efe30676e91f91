/* The sampler thread: perf_event_open events and wall-clock time, gathered
 * without sending a single signal to the program.
 *
 * For every thread of the process (found by scanning /proc/self/task, and
 * at once when pthread_create tells us), the sampler opens the chosen perf
 * event with a ring buffer and drains the samples' pcs into its own sample
 * table.  For `wall`, the event is cpu-clock (running time) and, at every
 * tick, each thread blocked in the kernel is read from
 * /proc/self/task/TID/syscall, whose last field is the user pc the thread
 * is blocked at -- inside read, nanosleep, pthread_cond_wait -- so blocked
 * time is attributed without interrupting anything: no system call can
 * return EINTR because of us and no sleep is cut short.
 *
 * With no event (cpu or itimer sampling, or none) the thread only keeps
 * the module list up to date, for the cgprof profile format.
 *
 * The sampler thread blocks every signal, so no signal meant for the
 * program is ever handled on it, runs no profiled code, and is not itself
 * sampled.  Its state is its own: only the flush handshake and the rescan
 * flag are shared, through atomics.
 */
#include "rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES 8          /* data pages per thread (plus one header page) */
#define SCAN_NS    100000000L /* pthread_create asks for a scan at once */

struct tracked {
    pid_t tid;
    struct cg_thread_rec *rec; /* its totals */
    int fd;                    /* perf event, or -1 */
    void *ring;                /* header page + RING_PAGES data pages */
    int seen;                  /* in the last /proc scan */
};

static const struct cg_event *event;
static unsigned start_hz;
static uint64_t start_period;
static uint64_t sample_weight; /* events per sample of a counting event, else 1 */
static uint64_t tick_ns;       /* mean interval between looks (10 ms) */
static uint64_t hz_period_ns;  /* one sample's worth of time at the rate */
static uint64_t perf_period;   /* perf sample_period */
static size_t page;
static pid_t sampler_tid;
static int running;                    /* atomic: the sampler thread exists */
static int rescan;                     /* atomic: a thread was created */
static unsigned flush_req, flush_done; /* atomic handshake with the writer */
static int perf_errno;                 /* first perf_event_open failure */
static uint64_t unsampled;             /* threads the event could not be opened for */

static struct tracked *trk;
static size_t ntrk, trk_cap;
static struct cg_table *table; /* the sampler's own sample table */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void count(struct tracked *t, uintptr_t pc, uint64_t weight)
{
    if (t && t->rec)
        __atomic_add_fetch(&t->rec->samples, weight, __ATOMIC_RELAXED);
    if (!table)
        table = cg_table_acquire(&cg_sample_tables);
    if (table)
        cg_table_add(table, pc, CG_EVENT_KEY, weight);
    else
        cg_samples_add_lost(weight);
}

static int open_event(pid_t tid)
{
    if (!event)
        return -1;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = event->kind == CG_EV_WALL ? PERF_TYPE_SOFTWARE : event->type;
    a.config = event->kind == CG_EV_WALL ? PERF_COUNT_SW_CPU_CLOCK : event->config;
    a.sample_period = perf_period;
    a.sample_type = PERF_SAMPLE_IP;
    a.exclude_hv = 1;
    a.exclude_kernel = 1; /* user pcs: the kernel's are not ours to name */
    return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Reads every sample of T's ring buffer; the number of samples read. */
static uint64_t drain(struct tracked *t)
{
    uint64_t got = 0;
    if (!t->ring)
        return 0;
    struct perf_event_mmap_page *h = t->ring;
    const unsigned char *data = (const unsigned char *)t->ring + page;
    uint64_t size = (uint64_t)RING_PAGES * page;
    uint64_t head = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = h->data_tail;
    while (tail + sizeof(struct perf_event_header) <= head) {
        unsigned char rec[64];
        struct perf_event_header eh;
        for (size_t i = 0; i < sizeof eh; i++)
            ((unsigned char *)&eh)[i] = data[(tail + i) % size];
        if (eh.size < sizeof eh || tail + eh.size > head)
            break;
        size_t n = eh.size < sizeof rec ? eh.size : sizeof rec;
        for (size_t i = 0; i < n; i++)
            rec[i] = data[(tail + i) % size];
        uint64_t v;
        if (eh.type == PERF_RECORD_SAMPLE && n >= sizeof eh + 8) {
            memcpy(&v, rec + sizeof eh, 8);
            count(t, (uintptr_t)v, sample_weight);
            got++;
        } else if (eh.type == PERF_RECORD_LOST && n >= sizeof eh + 16) {
            memcpy(&v, rec + sizeof eh + 8, 8);
            cg_samples_add_lost(v);
        }
        tail += eh.size;
    }
    __atomic_store_n(&h->data_tail, tail, __ATOMIC_RELEASE);
    return got;
}

static void untrack(size_t i)
{
    struct tracked *t = &trk[i];
    drain(t);
    if (t->rec)
        __atomic_or_fetch(&t->rec->flags, CG_THREAD_ENDED, __ATOMIC_RELEASE);
    if (t->ring)
        munmap(t->ring, (RING_PAGES + 1) * page);
    if (t->fd >= 0)
        close(t->fd);
    trk[i] = trk[--ntrk];
}

static void track(pid_t tid)
{
    if (ntrk == trk_cap) {
        size_t cap = trk_cap ? trk_cap * 2 : 256;
        struct tracked *n =
            mmap(NULL, cap * sizeof *n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (n == MAP_FAILED)
            return;
        if (trk) {
            memcpy(n, trk, ntrk * sizeof *n);
            munmap(trk, trk_cap * sizeof *trk);
        }
        trk = n;
        trk_cap = cap;
    }
    struct tracked *t = &trk[ntrk++];
    t->tid = tid;
    t->seen = 1;
    t->ring = NULL;
    t->rec = event ? cg_thread_rec_of(tid) : NULL;
    t->fd = open_event(tid);
    if (!event)
        return;
    if (t->fd < 0) {
        if (!perf_errno)
            perf_errno = errno;
        unsampled++;
        return;
    }
    void *r = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
    t->ring = r == MAP_FAILED ? NULL : r;
}

/* Finds new threads and forgets finished ones. */
static void scan(void)
{
    for (size_t i = 0; i < ntrk; i++)
        trk[i].seen = 0;
    int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return;
    char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            const char *name = buf + off + 19; /* d_ino 8, d_off 8, d_reclen 2, d_type 1 */
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, 2);
            off += reclen;
            pid_t tid = 0;
            for (const char *p = name; *p >= '0' && *p <= '9'; p++)
                tid = tid * 10 + (*p - '0');
            if (tid <= 0 || tid == sampler_tid)
                continue;
            size_t i = 0;
            while (i < ntrk && trk[i].tid != tid)
                i++;
            if (i < ntrk)
                trk[i].seen = 1;
            else
                track(tid);
        }
    }
    close(dir);
    for (size_t i = 0; i < ntrk; i++)
        if (trk[i].seen && trk[i].rec)
            cg_thread_rec_refresh(trk[i].rec); /* last CPU time, before it may go */
    for (size_t i = 0; i < ntrk;)
        if (!trk[i].seen)
            untrack(i);
        else
            i++;
}

/* wall: a thread blocked in the kernel counts one tick at its user pc. */
static void sample_blocked(struct tracked *t, uint64_t weight)
{
    char path[64], buf[256], num[24];
    char *p = path;
    const char *parts[3] = {"/proc/self/task/", cg_utoa((uint64_t)t->tid, num + sizeof num),
                            "/syscall"};
    for (int i = 0; i < 3; i++)
        for (const char *s = parts[i]; *s; s++)
            *p++ = *s;
    *p = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0 || buf[0] == 'r') /* "running": its cpu-clock samples it */
        return;
    buf[n] = '\0';
    char *last = strrchr(buf, ' ');
    if (!last || last[1] != '0' || last[2] != 'x')
        return;
    uintptr_t pc = 0;
    for (p = last + 3; *p && *p != '\n'; p++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
        if (d < 0)
            return;
        pc = pc * 16 + (uintptr_t)d;
    }
    count(t, pc, weight);
}

/* The sampler's loop.  It wakes at random intervals averaging tick_ns
 * (uniform in [0.5, 1.5) ticks), so its looks at blocked threads cannot
 * lock onto a program's own period; a blocked thread found at a look is
 * credited with the time since the previous look, in samples of the
 * rate: on average exactly the time it spent blocked. */
static void *sampler_main(void *arg)
{
    (void)arg;
    sampler_tid = (pid_t)syscall(SYS_gettid);
    prctl(PR_SET_NAME, "cgprof-helper"); /* what the program sees of it */
    uint64_t last = now_ns(), last_scan = 0, carry = 0;
    uint64_t rng = last ^ 0x9E3779B97F4A7C15ull;
    for (;;) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        uint64_t wait = tick_ns / 2 + rng % tick_ns;
        struct timespec ts = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
        /* sleeps until the next look, or until a writer asks for a flush */
        unsigned seen = __atomic_load_n(&flush_req, __ATOMIC_ACQUIRE);
        if (seen == __atomic_load_n(&flush_done, __ATOMIC_ACQUIRE))
            syscall(SYS_futex, &flush_req, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
        uint64_t now = now_ns();
        carry += now - last;
        last = now;
        uint64_t weight = carry / hz_period_ns;
        carry -= weight * hz_period_ns;
        unsigned req = __atomic_load_n(&flush_req, __ATOMIC_ACQUIRE);
        int flushing = req != __atomic_load_n(&flush_done, __ATOMIC_RELAXED);
        if (flushing)
            weight = carry = 0; /* the writer waits for us: not blocked time of its own */
        if (now - last_scan >= SCAN_NS || __atomic_exchange_n(&rescan, 0, __ATOMIC_ACQ_REL)) {
            if (event)
                scan();
            if (now - last_scan >= SCAN_NS)
                cg_modules_snapshot();
            last_scan = now;
        }
        for (size_t i = 0; i < ntrk; i++) {
            drain(&trk[i]);
            if (weight && event && event->kind == CG_EV_WALL && cg_recording)
                sample_blocked(&trk[i], weight);
        }
        if (flushing) {
            if (event)
                scan();
            for (size_t i = 0; i < ntrk; i++)
                drain(&trk[i]);
            __atomic_store_n(&flush_done, req, __ATOMIC_RELEASE);
            syscall(SYS_futex, &flush_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
        }
        cg_helper_tick(now); /* writes asked for, checkpoints (endings.c) */
    }
    return NULL;
}

int cg_sampler_start(const struct cg_event *ev, unsigned hz, uint64_t period)
{
    if (__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        return 0; /* started already (for checkpoints, or the own format) */
    event = ev;
    start_hz = hz;
    start_period = period;
    page = (size_t)sysconf(_SC_PAGESIZE);
    uint64_t hz_ns = 1000000000u / (hz ? hz : 1000);
    int timed = !ev || ev->kind == CG_EV_WALL || ev->is_time;
    perf_period = timed ? hz_ns : period ? period : ev->period;
    sample_weight = timed ? 1 : perf_period;
    tick_ns = 10000000u;
    hz_period_ns = hz_ns;
    ntrk = 0;
    cg_create_fn real = cg_real_pthread_create();
    if (!real)
        return -1;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_t th;
    int rc = real(&th, &attr, sampler_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        __atomic_store_n(&running, 1, __ATOMIC_RELEASE);
    return rc == 0 ? 0 : -1;
}

int cg_sampler_running(void)
{
    return __atomic_load_n(&running, __ATOMIC_ACQUIRE);
}

int cg_sampler_here(void)
{
    return running && syscall(SYS_gettid) == sampler_tid;
}

void cg_sampler_thread_created(void)
{
    __atomic_store_n(&rescan, 1, __ATOMIC_RELEASE);
}

/* Wakes the sampler and waits (up to 200 ms) until it has drained every
 * ring buffer.  futex: no file descriptor, async-signal-safe. */
void cg_sampler_flush(void)
{
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE) || syscall(SYS_gettid) == sampler_tid)
        return;
    unsigned req = __atomic_add_fetch(&flush_req, 1, __ATOMIC_ACQ_REL);
    syscall(SYS_futex, &flush_req, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    for (int i = 0; i < 200; i++) {
        unsigned done = __atomic_load_n(&flush_done, __ATOMIC_ACQUIRE);
        if ((int)(done - req) >= 0)
            return;
        struct timespec ts = {0, 1000000};
        syscall(SYS_futex, &flush_done, FUTEX_WAIT_PRIVATE, done, &ts, NULL, 0);
    }
}

uint64_t cg_sampler_unsampled(int *err)
{
    *err = perf_errno;
    return unsampled;
}

/* In a fork child the sampler is gone and its descriptors watch the
 * parent's threads: drop them and start again. */
void cg_sampler_after_fork(void)
{
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        return;
    running = 0;
    for (size_t i = 0; i < ntrk; i++) {
        if (trk[i].ring)
            munmap(trk[i].ring, (RING_PAGES + 1) * page);
        if (trk[i].fd >= 0)
            close(trk[i].fd);
    }
    ntrk = 0;
    table = NULL;
    unsampled = 0;
    flush_req = flush_done = 0;
    cg_sampler_start(event, start_hz, start_period);
}

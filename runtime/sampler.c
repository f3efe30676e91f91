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
#include "unwind.h"

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
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Data pages per thread's ring (plus one header page): with stacks, each
 * sample carries STACK_COPY bytes of the thread's stack, and the ring holds
 * some 30 of them between two drains. */
#define RING_PAGES (cg_stacks_on ? 64 : 8)
#define STACK_COPY 8192
#define SCAN_NS    100000000L /* pthread_create asks for a scan at once */

struct tracked {
    pid_t tid;
    struct cg_thread_rec *rec; /* its totals */
    int fd;                    /* perf event, or -1 */
    void *ring;                /* header page + RING_PAGES data pages */
    int seen;                  /* in the last /proc scan */
    /* wall: where it was last seen (a sample or a look while blocked), to
     * charge its time waiting for a CPU to; the runqueue wait so far */
    uintptr_t last_pc;
    uint32_t last_leaf; /* its stack's leaf node, UINT32_MAX: none */
    uint64_t wait_ns, wait_carry;
    int wait_known;
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
static struct cg_table *table;                  /* the sampler's own sample table */
static struct cg_stree *stree;                  /* the sampler's own stack tree */
static unsigned char rec[64 + STACK_COPY + 64]; /* one record, out of the ring */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Walks a stack from REGS over M into the sampler's own tree; its leaf
 * node, or UINT32_MAX. */
static uint32_t count_stack(const struct cg_regs *regs, const struct cg_mem *m, uint64_t weight)
{
    if (!cg_stacks_on)
        return UINT32_MAX;
    if (!stree)
        stree = cg_stree_acquire();
    if (!stree)
        return UINT32_MAX;
    int cut;
    uintptr_t *frames = cg_stree_scratch(stree);
    __atomic_store_n(&cg_modules_stale, 0, __ATOMIC_RELAXED);
    unsigned n = cg_unwind(regs, m, frames, CG_STACK_MAX, &cut);
    /* code in a module not seen yet (a dlopen since the last look): this
     * thread may take a snapshot at once, and walks again -- at most once
     * per tick, as code in no module at all (JIT) keeps asking */
    static uint64_t last_forced;
    if (__atomic_exchange_n(&cg_modules_stale, 0, __ATOMIC_RELAXED) &&
        now_ns() - last_forced >= tick_ns) {
        last_forced = now_ns();
        cg_modules_snapshot();
        n = cg_unwind(regs, m, frames, CG_STACK_MAX, &cut);
    }
    return cg_stree_add(stree, frames, n, cut, weight);
}

static void count(struct tracked *t, uintptr_t pc, uint64_t weight)
{
    if (t) {
        t->last_pc = pc;
        t->last_leaf = UINT32_MAX;
    }
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
    if (cg_stacks_on) {
        /* registers and the top of the stack, unwound here afterwards */
        a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a.sample_regs_user = 1u << 6 | 1u << 7 | 1u << 8; /* bp, sp, ip */
        a.sample_stack_user = STACK_COPY;
    }
    a.exclude_hv = 1;
    a.exclude_kernel = 1; /* user pcs: the kernel's are not ours to name */
    return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* A sample record's body (ip, abi, bp sp ip, stack size, stack bytes,
 * dynamic size): its stack, unwound over the copy and, past it, over the
 * thread's live stack. */
static uint32_t stack_of_record(const unsigned char *p, size_t n, uint64_t weight)
{
    uint64_t ip, abi, regs[3] = {0, 0, 0}, size = 0, dyn = 0;
    if (n < 16)
        return UINT32_MAX;
    memcpy(&ip, p, 8);
    memcpy(&abi, p + 8, 8);
    size_t at = 16;
    if (abi) {
        if (n < at + 24)
            return UINT32_MAX;
        memcpy(regs, p + at, 24);
        at += 24;
    }
    if (n >= at + 8) {
        memcpy(&size, p + at, 8);
        at += 8;
    }
    const unsigned char *stack = p + at;
    if (size && n >= at + size + 8)
        memcpy(&dyn, p + at + size, 8);
    if (dyn > size)
        dyn = 0;
    struct cg_regs r = {(uintptr_t)(abi ? regs[2] : ip), (uintptr_t)regs[1], (uintptr_t)regs[0],
                        abi != 0};
    struct cg_mem m = {r.sp, r.sp + dyn, stack};
    if (!abi)
        m.lo = m.hi = 0;
    return count_stack(&r, &m, weight);
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
        struct perf_event_header eh;
        for (size_t i = 0; i < sizeof eh; i++)
            ((unsigned char *)&eh)[i] = data[(tail + i) % size];
        if (eh.size < sizeof eh || tail + eh.size > head)
            break;
        size_t n = eh.size < sizeof rec ? eh.size : sizeof rec;
        size_t at = (size_t)(tail % size), first = n < size - at ? n : size - at;
        memcpy(rec, data + at, first);
        memcpy(rec + first, data, n - first);
        uint64_t v;
        if (eh.type == PERF_RECORD_SAMPLE && __atomic_load_n(&cg_paused, __ATOMIC_ACQUIRE)) {
            /* the profile is being written: not the program's time */
        } else if (eh.type == PERF_RECORD_SAMPLE && n >= sizeof eh + 8) {
            memcpy(&v, rec + sizeof eh, 8);
            count(t, (uintptr_t)v, sample_weight);
            if (cg_stacks_on)
                t->last_leaf = stack_of_record(rec + sizeof eh, n - sizeof eh, sample_weight);
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
    t->last_pc = 0;
    t->last_leaf = UINT32_MAX;
    t->wait_ns = t->wait_carry = 0;
    t->wait_known = 0;
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

static int parse_hex(const char *p, uintptr_t *v)
{
    if (p[0] != '0' || p[1] != 'x')
        return -1;
    uintptr_t x = 0;
    for (p += 2; *p && *p != '\n'; p++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        x = x * 16 + (uintptr_t)d;
    }
    *v = x;
    return 0;
}

/* Reads /proc/self/task/TID/FILE into BUF (NUL-terminated); its length,
 * or -1.  No allocation, no stdio: the sampler thread may not use them. */
static ssize_t read_task(pid_t tid, const char *file, char *buf, size_t cap)
{
    char path[64], num[24];
    char *p = path;
    const char *parts[3] = {"/proc/self/task/", cg_utoa((uint64_t)tid, num + sizeof num), file};
    for (int i = 0; i < 3; i++)
        for (const char *s = parts[i]; *s; s++)
            *p++ = *s;
    *p = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n >= 0)
        buf[n] = '\0';
    return n;
}

/* wall: time a thread spent runnable but waiting for a CPU (the second
 * field of /proc/self/task/TID/schedstat, in ns) is real time no clock
 * sample sees: it is charged, in samples of the rate, to where the thread
 * was last seen -- a preempted thread stands where it last ran, a woken
 * one where it slept. */
static void sample_waiting(struct tracked *t)
{
    char buf[128];
    if (read_task(t->tid, "/schedstat", buf, sizeof buf) <= 0)
        return;
    char *p = buf;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p++ != ' ')
        return;
    uint64_t wait = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        wait = wait * 10 + (uint64_t)(*p - '0');
    if (t->wait_known && wait > t->wait_ns)
        t->wait_carry += wait - t->wait_ns;
    t->wait_ns = wait;
    t->wait_known = 1;
    uint64_t weight = t->wait_carry / hz_period_ns;
    if (!weight || !t->last_pc)
        return;
    t->wait_carry -= weight * hz_period_ns;
    uintptr_t pc = t->last_pc;
    uint32_t leaf = t->last_leaf;
    count(t, pc, weight);
    t->last_leaf = leaf;
    if (cg_stacks_on && stree && leaf != UINT32_MAX)
        cg_stree_count(stree, leaf, weight);
    else if (cg_stacks_on && stree)
        cg_stree_add(stree, &pc, 1, 0, weight);
}

/* wall: a thread blocked in the kernel counts one tick at its user pc. */
static void sample_blocked(struct tracked *t, uint64_t weight)
{
    char buf[256];
    ssize_t n = read_task(t->tid, "/syscall", buf, sizeof buf);
    if (n <= 0 || buf[0] == 'r') /* "running": its cpu-clock samples it */
        return;
    /* "nr args... sp pc", or "-1 sp pc" outside a system call */
    char *last = strrchr(buf, ' ');
    if (!last)
        return;
    *last = '\0';
    char *prev = strrchr(buf, ' ');
    uintptr_t pc = 0, sp = 0;
    if (!prev || parse_hex(last + 1, &pc) != 0 || parse_hex(prev + 1, &sp) != 0)
        return;
    count(t, pc, weight);
    if (!cg_stacks_on)
        return;
    /* its stack, read at once (the thread is blocked); rbp is not known */
    static unsigned char copy[STACK_COPY];
    /* page by page, so that a copy running past the stack's end still
     * returns the pages before it */
    struct iovec local = {copy, sizeof copy}, remote[STACK_COPY / 4096 + 1];
    int nr = 0;
    for (uintptr_t a = sp; a < sp + sizeof copy && nr < (int)(sizeof remote / sizeof remote[0]);
         nr++) {
        uintptr_t end = (a | (page - 1)) + 1;
        if (end > sp + sizeof copy)
            end = sp + sizeof copy;
        remote[nr].iov_base = (void *)a;
        remote[nr].iov_len = end - a;
        a = end;
    }
    ssize_t got = process_vm_readv(getpid(), &local, 1, remote, (unsigned long)nr, 0);
    struct cg_regs r = {pc, sp, 0, 0};
    struct cg_mem m = {sp, sp + (got > 0 ? (uintptr_t)got : 0), copy};
    t->last_leaf = count_stack(&r, &m, weight);
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
        /* a walk met code in no known module or without its unwind table
         * yet (a dlopen since the last look): look again now */
        if (__atomic_exchange_n(&cg_modules_stale, 0, __ATOMIC_ACQ_REL))
            cg_modules_snapshot();
        if (now - last_scan >= SCAN_NS || __atomic_exchange_n(&rescan, 0, __ATOMIC_ACQ_REL)) {
            if (event)
                scan();
            if (now - last_scan >= SCAN_NS)
                cg_modules_snapshot();
            __atomic_store_n(&cg_modules_stale, 0, __ATOMIC_RELAXED);
            last_scan = now;
        }
        for (size_t i = 0; i < ntrk; i++) {
            drain(&trk[i]);
            if (event && event->kind == CG_EV_WALL && cg_recording &&
                !__atomic_load_n(&cg_paused, __ATOMIC_ACQUIRE)) {
                if (weight)
                    sample_blocked(&trk[i], weight);
                sample_waiting(&trk[i]);
            }
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
    stree = NULL;
    unsampled = 0;
    flush_req = flush_done = 0;
    cg_sampler_start(event, start_hz, start_period);
}

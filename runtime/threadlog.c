/* Per-thread totals: one record per thread the process ever had, with
 * its samples and, once known, its CPU time.  Records live in one mapped
 * array and are never removed, so they outlive their threads; a record
 * is claimed with one atomic increment and filled by its claimer. */
#include "rt.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 65536

static struct cg_thread_rec *recs;
static unsigned nrecs;   /* atomic: claimed */
static uint64_t dropped; /* atomic: threads beyond MAX_THREADS */

static struct cg_thread_rec *claim(pid_t tid)
{
    if (!__atomic_load_n(&recs, __ATOMIC_ACQUIRE)) {
        struct cg_thread_rec *p = cg_map(MAX_THREADS * sizeof *p);
        struct cg_thread_rec *none = NULL;
        if (!p)
            return NULL;
        if (!__atomic_compare_exchange_n(&recs, &none, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            cg_unmap(p, MAX_THREADS * sizeof *p);
    }
    unsigned i = __atomic_fetch_add(&nrecs, 1, __ATOMIC_ACQ_REL);
    if (i >= MAX_THREADS) {
        __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    /* after a fork the entries are the parent's: start each afresh */
    recs[i].flags = 0;
    recs[i].samples = 0;
    recs[i].cpu_ns = 0;
    recs[i].base_ns = 0;
    recs[i].taken = 0;
    recs[i].start_wait = recs[i].end_wait = 0;
    recs[i].entry = 0;
    recs[i].tid = tid;
    return &recs[i];
}

/* The newest record of thread TID, ended or not, or NULL. */
static struct cg_thread_rec *newest(pid_t tid)
{
    unsigned n = __atomic_load_n(&nrecs, __ATOMIC_ACQUIRE);
    if (n > MAX_THREADS)
        n = MAX_THREADS;
    for (unsigned i = n; recs && i-- > 0;)
        if (recs[i].tid == tid)
            return &recs[i];
    return NULL;
}

/* The calling thread's record, made on first use -- or the one the
 * sampler's scan made for it, if a scan saw it first (two records of one
 * thread listed it twice, and counted its failed open twice). */
struct cg_thread_rec *cg_thread_rec_self(void)
{
    struct cg_tls *t = &cg_tls;
    if (!t->rec) {
        pid_t tid = (pid_t)syscall(SYS_gettid);
        struct cg_thread_rec *r = newest(tid);
        t->rec =
            r && !(__atomic_load_n(&r->flags, __ATOMIC_ACQUIRE) & CG_THREAD_ENDED) ? r : claim(tid);
    }
    return t->rec;
}

/* The record of thread TID (for the sampler thread): the newest one with
 * that tid -- ended, if the thread ended since a scan listed it: the
 * caller leaves such a thread alone -- or a new one. */
struct cg_thread_rec *cg_thread_rec_of(pid_t tid)
{
    struct cg_thread_rec *r = newest(tid);
    return r ? r : claim(tid);
}

/* The CPU time of thread TID of this process, in ns (0 if unknown):
 * Linux's clock id for another thread's CPU clock. */
static uint64_t thread_cpu_ns(pid_t tid)
{
    struct timespec ts;
    clockid_t clk = (clockid_t)((~(unsigned)tid << 3) | 6); /* per-thread, scheduler clock */
    if (clock_gettime(clk, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether our sampling signal is blocked in thread TID (0: the calling
 * thread), as the cpu event's per-thread timer needs it: a thread that
 * blocks it is never sampled, and the report says why.  Another thread's
 * mask is read from /proc (open and read are async-signal-safe). */
int cg_thread_sig_blocked(pid_t tid)
{
    if (!cg_event || (cg_event->kind != CG_EV_CPU && !cg_sampler_in_threads()) || !cg_sample_sig ||
        !cg_hz)
        return 0;
    if (!tid) {
        sigset_t cur;
        return pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0 && sigismember(&cur, cg_sample_sig) == 1;
    }
    char path[48] = "/proc/self/task/", buf[2048];
    char num[12], *e = num + sizeof num;
    *--e = '\0';
    unsigned v = (unsigned)tid;
    do
        *--e = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    strcat(path, e);
    strcat(path, "/status");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strstr(buf, "\nSigBlk:");
    if (!p)
        return 0;
    p += 9;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *end = p;
    while ((*end >= '0' && *end <= '9') || (*end >= 'a' && *end <= 'f'))
        end++;
    /* hex, signal 1 the lowest bit: the digit holding our signal's bit */
    int bit = cg_sample_sig - 1;
    const char *d = end - 1 - bit / 4;
    if (d < p)
        return 0;
    int x = *d <= '9' ? *d - '0' : *d - 'a' + 10;
    return (x >> (bit % 4)) & 1;
}

/* Reads a live thread's CPU time into its record; a thread that is gone
 * keeps the last value read. */
void cg_thread_rec_refresh(struct cg_thread_rec *r)
{
    if (r->flags & CG_THREAD_ENDED)
        return;
    uint64_t v = thread_cpu_ns(r->tid);
    if (v)
        r->cpu_ns = v;
    /* (sampling in the threads, CGPROF_STACK_SYNC=2: the sampler notes a
     * thread blocked only when its samples stop too, as a thread inside
     * our handler has the signal blocked at that moment) */
    if (cg_event && cg_event->kind == CG_EV_CPU && cg_thread_sig_blocked(r->tid))
        __atomic_or_fetch(&r->flags, CG_THREAD_SIGBLOCKED, __ATOMIC_RELAXED);
}

/* At thread exit: its CPU time, final. */
void cg_thread_rec_end(void)
{
    struct cg_tls *t = &cg_tls;
    if (!t->rec)
        return;
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        t->rec->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    /* (where only some threads are sampled by their signal -- those
     * without a ring, those deeper than their copies -- only those can
     * miss samples by blocking it) */
    if ((cg_sampler_in_threads() != 2 || (__atomic_load_n(&t->rec->flags, __ATOMIC_RELAXED) &
                                          (CG_THREAD_RINGLESS | CG_THREAD_DEEP))) &&
        cg_thread_sig_blocked(0))
        __atomic_or_fetch(&t->rec->flags, CG_THREAD_SIGBLOCKED, __ATOMIC_RELAXED);
    cg_sampler_thread_end(t->rec);
    __atomic_or_fetch(&t->rec->flags, CG_THREAD_ENDED, __ATOMIC_RELEASE);
    t->rec = NULL;
}

/* Records so far; the CPU time of live threads is read now. */
const struct cg_thread_rec *cg_thread_recs(unsigned *n)
{
    unsigned k = __atomic_load_n(&nrecs, __ATOMIC_ACQUIRE);
    *n = k > MAX_THREADS ? MAX_THREADS : k;
    for (unsigned i = 0; recs && i < *n; i++)
        cg_thread_rec_refresh(&recs[i]);
    return recs;
}

/* In a fork child: only this thread exists, with nothing counted yet. */
void cg_thread_recs_after_fork(void)
{
    nrecs = 0;
    dropped = 0;
    cg_tls.rec = NULL;
}

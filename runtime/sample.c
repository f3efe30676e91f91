/* Statistical sampling: a CPU-time timer per thread, a signal handler that
 * counts the interrupted PC.  The signal is the runtime's own real-time
 * signal (signals.c), never SIGPROF, except for -e itimer.
 *
 * Samples are counted per pc in per-thread tables (table.c), so every
 * address the program runs at is kept -- executable, libraries, vDSO --
 * and the histogram of the executable is made from them when the profile
 * is written.
 *
 * Each thread owns a POSIX timer on its own CPU clock
 * (CLOCK_THREAD_CPUTIME_ID) that signals that thread alone
 * (SIGEV_THREAD_ID), so every thread is sampled in proportion to the CPU
 * it uses, and a blocked thread, whose clock stands still, is never
 * interrupted.  The kernel checks CPU timers on its tick; an expiry that
 * came late reports the periods it missed in si_overrun, and the sample
 * is weighted by them so the histogram's total stays CPU time * rate.
 *
 * The handler is async-signal-safe: lock-free table updates in mapped
 * memory (mmap when a table grows), nothing else.
 */
#include "rt.h"
#include "unwind.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/time.h>

struct cg_hist cg_hist;
unsigned cg_hz = 1000;
const struct cg_event *cg_event;
uint64_t cg_period; /* CGPROF_PERIOD: events per sample of a counting event (0: its default) */
static uint64_t samples_lost; /* atomic: no table could be had */
uint64_t cg_unsampled_threads;
int cg_paused, cg_sampling_inflight;

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* Counts a sample at PC into the thread's own sample table.  Only this
 * thread's sampling handler writes that table, and the signal is blocked while
 * the handler runs, so it has one writer at a time. */
static void count_pc(uintptr_t pc, uint32_t weight)
{
    struct cg_tls *t = &cg_tls;
    if (!t->samples) {
        t->samples = cg_table_acquire(&cg_sample_tables);
        if (!t->samples) {
            __atomic_add_fetch(&samples_lost, weight, __ATOMIC_RELAXED);
            return;
        }
    }
    cg_table_add(t->samples, cg_pc_tag(pc), CG_EVENT_KEY, weight);
    if (t->rec)
        __atomic_add_fetch(&t->rec->samples, weight, __ATOMIC_RELAXED);
}

uint64_t cg_unsampled_vm_children;

void cg_count_unsampled_vm_child(void)
{
    __atomic_add_fetch(&cg_unsampled_vm_children, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&cg_unsampled_threads, 1, __ATOMIC_RELAXED);
}

void cg_samples_add_lost(uint64_t n)
{
    __atomic_add_fetch(&samples_lost, n, __ATOMIC_RELAXED);
}

static uint64_t samples_merged;

void cg_samples_add_merged(uint64_t n)
{
    __atomic_add_fetch(&samples_merged, n, __ATOMIC_RELAXED);
}

uint64_t cg_samples_merged(void)
{
    return __atomic_load_n(&samples_merged, __ATOMIC_RELAXED);
}

uint64_t cg_samples_lost(void)
{
    return __atomic_load_n(&samples_lost, __ATOMIC_RELAXED) + cg_tables_lost(&cg_sample_tables);
}

/* At thread exit: the sample table and stack tree go to the next thread.  Sampling is held off
 * meanwhile, so a last sample cannot take a new table that nobody would
 * ever release. */
void cg_samples_thread_exit(void)
{
    struct cg_tls *t = &cg_tls;
    if (!t->samples && !t->stree)
        return;
    sigset_t prof, old;
    sigemptyset(&prof);
    sigaddset(&prof, cg_sample_sig);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &prof, &old);
    if (t->samples) {
        struct cg_table *tb = t->samples;
        t->samples = NULL;
        cg_table_release(tb);
    }
    if (t->stree) { /* its stack tree too (stacks.c) */
        struct cg_stree *tr = t->stree;
        t->stree = NULL;
        cg_stree_release(tr);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* itimer: one process-wide ITIMER_PROF, as glibc's profil uses. */
static int itimer_start(void)
{
    long us = 1000000L / (long)cg_hz;
    struct itimerval it = {{us / 1000000, us % 1000000}, {us / 1000000, us % 1000000}};
    if (it.it_interval.tv_sec == 0 && it.it_interval.tv_usec == 0)
        it.it_interval.tv_usec = it.it_value.tv_usec = 1;
    return setitimer(ITIMER_PROF, &it, NULL);
}

/* A sample at PC taken in its own thread's handler by sampler.c's handler
 * events: into the thread's own table, as the cpu event's, WEIGHT events
 * (1 for time events, the period of a counting event). */
void cg_sample_count_pc(uintptr_t pc, uint32_t weight)
{
    struct cg_tls *t = &cg_tls;
    if (!t->rec) /* a thread whose event the sampler opened: its record */
        cg_thread_rec_self();
    count_pc(pc, weight);
    if (t->rec)
        __atomic_add_fetch(&t->rec->taken, 1, __ATOMIC_RELAXED);
}

static void on_sample(int sig, siginfo_t *si, void *uc_)
{
    (void)sig;
    if (!cg_recording)
        return;
    __atomic_add_fetch(&cg_sampling_inflight, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&cg_paused, __ATOMIC_SEQ_CST)) {
        __atomic_sub_fetch(&cg_sampling_inflight, 1, __ATOMIC_RELEASE);
        return;
    }
    ucontext_t *uc = uc_;
    uint32_t weight = 1;
    if (si->si_code == SI_TIMER && si->si_overrun > 0)
        weight += (uint32_t)si->si_overrun;
    count_pc(cg_uc_pc(uc), weight);
    if (cg_stacks_on)
        cg_stack_sample_uc(uc, weight);
    __atomic_sub_fetch(&cg_sampling_inflight, 1, __ATOMIC_RELEASE);
}

/* Installs the sampling handler (cpu, itimer) or starts the sampler
 * thread (perf events, wall).  0, or -1 when the source cannot run. */
int cg_sample_init(void)
{
    int sampler = cg_event && (cg_event->kind == CG_EV_WALL || cg_event->kind == CG_EV_PERF);
    /* our signal ends each perf event's random first period (sampler.c):
     * its handler is in place before the first event is opened */
    if (sampler && cg_hz)
        cg_signals_sample(NULL);
    /* the own format names modules, which the sampler thread keeps up to date */
    if (cg_format == CG_FORMAT_CGPROF || (sampler && cg_hz)) {
        cg_sampler_expect(1); /* this thread opens its own event at once */
        int rc = cg_sampler_start(cg_hz && sampler ? cg_event : NULL, cg_hz, cg_period);
        if (rc == 0) {
            cg_sampler_thread_open();
            cg_sampler_thread_begin();
        }
        cg_sampler_expect(-1);
        if (rc != 0)
            return -1;
    }
    if (cg_hz == 0 || !cg_event || sampler)
        return 0;
    if (cg_event->kind == CG_EV_CPU)
        return cg_signals_sample(on_sample);
    /* itimer: ITIMER_PROF can only send SIGPROF, which becomes ours */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sample;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, NULL) != 0)
        return -1;
    return itimer_start();
}

/* Starts the calling thread's CPU-time timer (once per thread). */
void cg_thread_timer_start(void)
{
    struct cg_tls *t = &cg_tls;
    if (cg_hz == 0 || t->timer_on || !cg_event || cg_event->kind != CG_EV_CPU)
        return;
    int saved = errno;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = cg_sample_sig;
    sev.sigev_value.sival_ptr = &cg_sample_sig; /* tells our signals from the program's */
    sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
    timer_t id;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &id) == 0) {
        struct itimerspec its;
        long ns = 1000000000L / (long)cg_hz;
        its.it_interval.tv_sec = ns / 1000000000L;
        its.it_interval.tv_nsec = ns % 1000000000L;
        /* the first expiry at random in (0, period]: a thread that runs
         * for less than a period is sampled with the chance it should be */
        long first = 1 + (long)(cg_random64(sev.sigev_notify_thread_id) % (uint64_t)ns);
        its.it_value.tv_sec = first / 1000000000L;
        its.it_value.tv_nsec = first % 1000000000L;
        timer_settime(id, 0, &its, NULL);
        t->timer = id;
        t->timer_on = 1;
        struct timespec used; /* the thread's CPU time so far was not sampled */
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used) == 0) {
            uint64_t used_ns = (uint64_t)used.tv_sec * 1000000000u + (uint64_t)used.tv_nsec;
            cg_sampler_add_before(used_ns);
            if (t->rec)
                t->rec->base_ns = used_ns;
        }
    } else {
        t->timer_on = -1; /* tried: counted once per thread */
        __atomic_add_fetch(&cg_unsampled_threads, 1, __ATOMIC_RELAXED);
    }
    errno = saved;
}

void cg_thread_timer_stop(void)
{
    struct cg_tls *t = &cg_tls;
    if (t->timer_on != 1) {
        t->timer_on = 0;
        return;
    }
    int saved = errno;
    timer_delete((timer_t)t->timer);
    t->timer_on = 0;
    errno = saved;
}

/* Timers do not survive fork; the child's one thread needs a new one. */
void cg_sample_after_fork(void)
{
    cg_tls.timer_on = 0;
    cg_thread_recs_after_fork();
    cg_thread_rec_self();
    cg_tables_zero(&cg_sample_tables, cg_tls.samples);
    samples_lost = 0;
    cg_thread_timer_start();
    if (cg_event && cg_event->kind == CG_EV_ITIMER && cg_hz)
        itimer_start(); /* interval timers are not inherited */
    cg_sampler_after_fork();
}

/* Statistical sampling: a CPU-time timer per thread, a signal handler that
 * counts the interrupted PC in the main executable's histogram.
 *
 * Each thread owns a POSIX timer on its own CPU clock
 * (CLOCK_THREAD_CPUTIME_ID) that signals that thread alone
 * (SIGEV_THREAD_ID), so every thread is sampled in proportion to the CPU
 * it uses, and a blocked thread, whose clock stands still, is never
 * interrupted.  The kernel checks CPU timers on its tick; an expiry that
 * came late reports the periods it missed in si_overrun, and the sample
 * is weighted by them so the histogram's total stays CPU time * rate.
 *
 * The handler is async-signal-safe: atomic adds into preallocated memory,
 * nothing else.
 */
#include "rt.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>

struct cg_hist cg_hist;
unsigned cg_hz = 1000;
uint64_t cg_unsampled_threads;

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* A buffer registered by profil(): the classic interface, kept working. */
static struct {
    unsigned short *buf;
    size_t nshort;
    size_t offset;
    unsigned scale;
} user_profil;

static void count_pc(uintptr_t pc, uint32_t weight)
{
    __atomic_add_fetch(&cg_hist.samples, weight, __ATOMIC_RELAXED);
    uintptr_t off = pc - cg_hist.bias - cg_hist.lowpc;
    uintptr_t range = cg_hist.highpc - cg_hist.lowpc;
    if (cg_hist.bins && off < range) {
        /* gprof reads bin i as [lowpc + i*range/nbins, ...): match it. */
        uint64_t bin = (uint64_t)((unsigned __int128)off * cg_hist.nbins / range);
        __atomic_add_fetch(&cg_hist.bins[bin], weight, __ATOMIC_RELAXED);
    } else {
        __atomic_add_fetch(&cg_hist.outside, weight, __ATOMIC_RELAXED);
    }
    if (user_profil.buf && pc >= user_profil.offset) {
        uint64_t i =
            (uint64_t)((unsigned __int128)((pc - user_profil.offset) / 2) * user_profil.scale >>
                       16);
        if (i < user_profil.nshort)
            __atomic_add_fetch(&user_profil.buf[i], (unsigned short)weight, __ATOMIC_RELAXED);
    }
}

static void on_sample(int sig, siginfo_t *si, void *uc_)
{
    (void)sig;
    if (!cg_recording)
        return;
    ucontext_t *uc = uc_;
    uint32_t weight = 1;
    if (si->si_code == SI_TIMER && si->si_overrun > 0)
        weight += (uint32_t)si->si_overrun;
    count_pc((uintptr_t)uc->uc_mcontext.gregs[REG_RIP], weight);
}

int cg_sample_init(void)
{
    if (cg_hz == 0)
        return 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sample;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGPROF, &sa, NULL);
}

/* Starts the calling thread's CPU-time timer (once per thread). */
void cg_thread_timer_start(void)
{
    struct cg_tls *t = &cg_tls;
    if (cg_hz == 0 || t->timer_on)
        return;
    int saved = errno;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
    timer_t id;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &id) == 0) {
        struct itimerspec its;
        long ns = 1000000000L / (long)cg_hz;
        its.it_interval.tv_sec = ns / 1000000000L;
        its.it_interval.tv_nsec = ns % 1000000000L;
        its.it_value = its.it_interval;
        timer_settime(id, 0, &its, NULL);
        t->timer = id;
        t->timer_on = 1;
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
    if (cg_hist.bins)
        memset(cg_hist.bins, 0, (size_t)cg_hist.nbins * sizeof *cg_hist.bins);
    cg_hist.samples = 0;
    cg_hist.outside = 0;
    cg_thread_timer_start();
}

void cg_profil_set(unsigned short *buf, size_t bufsiz, size_t offset, unsigned scale)
{
    user_profil.buf = NULL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    user_profil.nshort = bufsiz / sizeof(unsigned short);
    user_profil.offset = offset;
    user_profil.scale = scale;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (scale != 0)
        user_profil.buf = buf;
}

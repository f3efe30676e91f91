/* Signals: the program's stay its own, and every deadly one leaves a
 * profile.
 *
 * Sampling uses a real-time signal nobody else uses (cg_sample_sig, the
 * highest one whose action is the default when the runtime starts), never
 * SIGPROF, so a program's own SIGPROF handler, setitimer(ITIMER_PROF),
 * profil() and sprofil() see nothing of the runtime.  Our timers mark
 * their signals (si_code SI_TIMER, si_value = &cg_sample_sig): should the
 * program claim that signal too, its own signals still reach its handler.
 *
 * A signal whose default action ends the process (SIGINT, SIGTERM,
 * SIGSEGV, abort's SIGABRT, ...) gets our handler while the program leaves
 * it at SIG_DFL: it writes the profile, puts the default action back and
 * lets the signal end the process as it would have -- same signal, same
 * core dump, same status for the parent.  A fault (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL raised by an instruction) simply happens again on return; any
 * other signal is sent again to the thread.
 *
 * sigaction() and signal() are interposed so the program sees only its
 * own settings: it reads back what it set, a handler it installs replaces
 * ours in the kernel (no cost, no change), and setting SIG_DFL again puts
 * ours back -- so a handler that does `signal(sig, SIG_DFL); raise(sig)`
 * still leaves a profile.  A handler installed with SA_RESETHAND (or by
 * sysv_signal) is called through ours, which emulates the reset.
 *
 * Our handlers run only async-signal-safe code (write.c's rules).  Updates
 * of the tables below are serialized by a spin lock taken with every
 * signal blocked, so a handler cannot interrupt its holder.
 */
#include "rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int cg_sample_sig;

/* glibc's own entry point, exported by libc.so and defined in libc.a: the
 * real sigaction whatever we interpose. */
extern int __sigaction(int, const struct sigaction *, struct sigaction *);

/* Signals whose default action ends the process. */
static const int deadly[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGILL,   SIGTRAP,   SIGABRT,
                             SIGBUS,  SIGFPE,  SIGUSR1, SIGSEGV,  SIGUSR2,   SIGPIPE,
                             SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ,  SIGVTALRM, SIGPROF,
                             SIGSYS,  SIGIO,   SIGPWR,  SIGSTKFLT};

static struct {
    struct sigaction prog; /* what the program believes is installed */
    unsigned char managed; /* a deadly signal, or the sampling signal */
    unsigned char ours;    /* the kernel runs our handler for it */
} sigs[NSIG];

static void (*sample_fn)(int, siginfo_t *, void *);
static int lock;
static uint64_t runtime_samples; /* atomic: samples that found a thread in the runtime */

void cg_runtime_samples_add(uint64_t n)
{
    __atomic_add_fetch(&runtime_samples, n, __ATOMIC_RELAXED);
}

uint64_t cg_runtime_samples(void)
{
    return __atomic_load_n(&runtime_samples, __ATOMIC_RELAXED);
}

static void take_lock(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, old);
    while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
        ;
}

static void drop_lock(const sigset_t *old)
{
    __atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

static int is_default(const struct sigaction *sa)
{
    return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_DFL;
}

/* Whether a timer can send SIG: qemu-user keeps the highest real-time
 * signals for itself (its sigaction takes them, but its timer_create
 * refuses them with EINVAL, and nothing would arrive). */
static int timer_can_send(int sig)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = sig;
    timer_t id;
    if (timer_create(CLOCK_MONOTONIC, &sev, &id) != 0)
        return 0;
    timer_delete(id);
    return 1;
}

static int is_handler(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) || (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN);
}

/* Calls the program's handler for SIG as the kernel would have. */
static void call_program(int sig, siginfo_t *si, void *uc)
{
    struct sigaction pa = sigs[sig].prog;
    if (pa.sa_flags & SA_RESETHAND) {
        memset(&sigs[sig].prog, 0, sizeof sigs[sig].prog);
        sigs[sig].prog.sa_handler = SIG_DFL;
    }
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &pa.sa_mask, &old);
    if (pa.sa_flags & SA_SIGINFO)
        pa.sa_sigaction(sig, si, uc);
    else
        pa.sa_handler(sig);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The default action of a deadly signal, after the profile is written. */
static void die(int sig, const siginfo_t *si)
{
    cg_write_final(CG_END_SIGNAL);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    __sigaction(sig, &dfl, NULL);
    sigs[sig].ours = 0;
    int fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
    if (fault && si->si_code > 0)
        return; /* the instruction runs again and faults under SIG_DFL */
    /* blocked while we run; delivered, with the default action, on return */
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

static void on_deadly(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    if (is_handler(&sigs[sig].prog)) {
        errno = saved;
        call_program(sig, si, uc);
        return;
    }
    if (sigs[sig].prog.sa_handler == SIG_IGN && !(sigs[sig].prog.sa_flags & SA_SIGINFO))
        return;
    die(sig, si);
    errno = saved;
}

CG_OWN static void on_sample_sig(int sig, siginfo_t *si, void *uc)
{
    if (si->si_code == SI_TIMER && si->si_value.sival_ptr == &cg_sample_sig) {
        if (cg_tls.in_runtime) {
            __atomic_add_fetch(&runtime_samples, 1 + (si->si_overrun > 0 ? si->si_overrun : 0),
                               __ATOMIC_RELAXED);
            return;
        }
        if (sample_fn)
            sample_fn(sig, si, uc);
        return;
    }
    /* the first overflow of a thread's perf event (sampler.c) */
    if (si->si_code > 0 && cg_sampler_phase_signal(si->si_fd, uc))
        return;
    /* the program's own use of the signal */
    int saved = errno;
    if (is_handler(&sigs[sig].prog)) {
        call_program(sig, si, uc);
    } else if (is_default(&sigs[sig].prog) && si->si_code <= 0) {
        /* a real-time signal's default action ends the process; one the
         * kernel sent for a descriptor (si_code > 0) can only be a late
         * one of ours, for an event closed since */
        die(sig, si);
    }
    errno = saved;
}

static int install_ours(int sig, const struct sigaction *like)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = sig == cg_sample_sig ? on_sample_sig : on_deadly;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    if (like && is_handler(like))
        sa.sa_flags |= like->sa_flags & SA_NODEFER;
    if (like)
        sa.sa_mask = like->sa_mask;
    else
        sigemptyset(&sa.sa_mask);
    /* Every other signal waits while a sample is taken, and comes after
     * it with the program's own context: a timer of the program that
     * expired on the same tick (profil's ITIMER_PROF) sees the program's
     * pc, not ours. */
    if (sig == cg_sample_sig)
        sigfillset(&sa.sa_mask);
    if (__sigaction(sig, &sa, NULL) != 0)
        return -1;
    sigs[sig].ours = 1;
    return 0;
}

/* Chooses the sampling signal and takes over the deadly ones left at
 * their default action.  Runs once, from cg_init. */
void cg_signals_init(int itimer)
{
    sigset_t old;
    take_lock(&old);
    for (int s = SIGRTMAX; s >= SIGRTMIN && !cg_sample_sig; s--) {
        struct sigaction cur;
        if (__sigaction(s, NULL, &cur) == 0 && is_default(&cur) && timer_can_send(s)) {
            cg_sample_sig = s;
            sigs[s].prog = cur;
            sigs[s].managed = 1;
        }
    }
    for (size_t i = 0; i < sizeof deadly / sizeof deadly[0]; i++) {
        int s = deadly[i];
        if (s == SIGPROF && itimer)
            continue; /* -e itimer: ITIMER_PROF and SIGPROF are the sampler's */
        struct sigaction cur;
        if (__sigaction(s, NULL, &cur) != 0)
            continue;
        sigs[s].managed = 1;
        sigs[s].prog = cur;
        if (is_default(&cur))
            install_ours(s, NULL);
    }
    drop_lock(&old);
}

/* Sampling starts: our handler takes the sampling signal. */
int cg_signals_sample(void (*fn)(int, siginfo_t *, void *))
{
    if (!cg_sample_sig)
        return -1;
    sample_fn = fn;
    sigset_t old;
    take_lock(&old);
    int rc = install_ours(cg_sample_sig, &sigs[cg_sample_sig].prog);
    drop_lock(&old);
    return rc;
}

/* The program changes or reads a managed signal's action. */
static int managed_action(int sig, const struct sigaction *act, struct sigaction *oact)
{
    sigset_t old;
    take_lock(&old);
    int rc = 0;
    if (!sigs[sig].ours) {
        /* the kernel holds the program's own action: keep it in step */
        rc = __sigaction(sig, act, oact);
        if (rc == 0 && act) {
            sigs[sig].prog = *act;
            if (is_default(act) || (act->sa_flags & SA_RESETHAND) || sig == cg_sample_sig)
                rc = install_ours(sig, act);
        }
        drop_lock(&old);
        return rc;
    }
    if (oact)
        *oact = sigs[sig].prog;
    if (act) {
        int keep = sig == cg_sample_sig || is_default(act) ||
                   (is_handler(act) && (act->sa_flags & SA_RESETHAND));
        if (keep) {
            sigs[sig].prog = *act;
            rc = install_ours(sig, act);
        } else {
            rc = __sigaction(sig, act, NULL);
            if (rc == 0) {
                sigs[sig].prog = *act;
                sigs[sig].ours = 0;
            }
        }
    }
    drop_lock(&old);
    return rc;
}

#define API __attribute__((visibility("default")))

API int sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
    if (sig <= 0 || sig >= NSIG || !sigs[sig].managed)
        return __sigaction(sig, act, oact);
    if (act && (sig == SIGKILL || sig == SIGSTOP)) {
        errno = EINVAL;
        return -1;
    }
    return managed_action(sig, act, oact);
}

/* signal() and its relatives: glibc's call its sigaction internally, past
 * our interposition, so they are redone here with the same flags. */
static sighandler_t set_handler(int sig, sighandler_t h, int flags)
{
    struct sigaction sa, old;
    if (h == SIG_ERR || sig <= 0 || sig >= NSIG) {
        errno = EINVAL;
        return SIG_ERR;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (!(flags & SA_NODEFER))
        sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

API sighandler_t signal(int sig, sighandler_t h)
{
    return set_handler(sig, h, SA_RESTART);
}

API sighandler_t bsd_signal(int sig, sighandler_t h)
{
    return set_handler(sig, h, SA_RESTART);
}

API sighandler_t sysv_signal(int sig, sighandler_t h)
{
    return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}

/* Alternate signal stacks.  A stack overflow raises SIGSEGV with no stack
 * left to run a handler on: without one of these the ending never runs
 * and the profile is lost.  Each thread the runtime knows gets its own
 * (mapped when the thread starts, never in a handler; our handlers are
 * installed SA_ONSTACK), unless the program set one: the program's own
 * sigaltstack stays its own.  sigaltstack() is interposed so the program
 * sees only what it set: "disabled" until it sets one, which then replaces
 * ours in the kernel. */
#define CG_ALTSTACK_SIZE (256 * 1024) /* the final write's frames, with room */

static __thread void *alt_ours __attribute__((tls_model("initial-exec")));
static __thread int alt_program __attribute__((tls_model("initial-exec"))); /* it set one */

/* The runtime's work (CG_OWN: samples in it are not the program's time) */
CG_OWN static int real_sigaltstack(const stack_t *ss, stack_t *old)
{
    return (int)syscall(SYS_sigaltstack, ss, old);
}

CG_OWN void cg_altstack_init(void)
{
    stack_t cur;
    if (alt_ours || real_sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
        return;
    void *p = mmap(NULL, CG_ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
        return;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = p;
    ss.ss_size = CG_ALTSTACK_SIZE;
    if (real_sigaltstack(&ss, NULL) != 0) {
        munmap(p, CG_ALTSTACK_SIZE);
        return;
    }
    alt_ours = p;
}

CG_OWN void cg_altstack_exit(void)
{
    if (!alt_ours)
        return;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_flags = SS_DISABLE;
    if (real_sigaltstack(&ss, NULL) == 0)
        munmap(alt_ours, CG_ALTSTACK_SIZE);
    alt_ours = NULL;
}

API int sigaltstack(const stack_t *ss, stack_t *old)
{
    if (!alt_ours || alt_program)
        return real_sigaltstack(ss, old);
    stack_t mine;
    memset(&mine, 0, sizeof mine);
    mine.ss_flags = SS_DISABLE;
    if (ss) {
        if (ss->ss_flags & SS_DISABLE) { /* nothing of the program's to disable */
            if (old)
                *old = mine;
            return 0;
        }
        if (real_sigaltstack(ss, NULL) != 0)
            return -1;
        munmap(alt_ours, CG_ALTSTACK_SIZE);
        alt_ours = NULL;
        alt_program = 1;
    }
    if (old)
        *old = mine;
    return 0;
}

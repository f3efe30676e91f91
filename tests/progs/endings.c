/* endings: works a known amount, then ends the way argv[1] says.
 *
 *   endings HOW [MS]
 *
 * First calls work() 1000 times (exact arcs main -> work 1000) and burns
 * MS milliseconds (default 300) of CPU in spin(); prints "cpu N" (ms of
 * CPU used so far) and "steal S" (ms of spin's real time that were neither
 * its CPU time nor waits for a CPU: on a virtual machine, the time the
 * hypervisor held the CPU, which perf's cpu-clock counts and the CPU
 * clock does not) on stderr; then ends:
 *
 *   exit            return 0 from main
 *   sig:NAME        raise(SIGNAME) with its default action
 *   abort           abort()
 *   segv fpe ill    a faulting instruction
 *   _exit _Exit     _exit(5), _Exit(6)
 *   thread-exit     exit(4) from a second thread
 *   own-exit:NAME   a handler of its own for SIGNAME, which calls _exit(7)
 *   own-reraise:NAME  a handler that puts SIG_DFL back and raises again
 *   own-return:NAME   a handler that returns; main then returns 0
 *   resethand:NAME  a handler with SA_RESETHAND; the signal sent twice
 *   wait            spins until killed (kill -9, a signal from outside)
 *   exec-self       execs itself once ("exit" the second time)
 *   chdir           chdir("/") and return 0
 *   overflow        unbounded recursion: SIGSEGV with no stack left
 *   thread-overflow the same in a second thread
 *   altstack        reads its alternate signal stack ("altstack off"),
 *                   sets one and reads it back ("altstack set"), returns 0
 *
 * A handler of its own writes "handler SIG" on stderr.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clocks.h"

#define NOINLINE __attribute__((noinline))

static volatile long sink;

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

static double stolen; /* ms of spin()'s real time neither CPU nor waits */

NOINLINE void spin(double ms)
{
    double r0 = clock_s(CLOCK_MONOTONIC) * 1e3, w0 = run_delay() * 1e3, c0 = cpu_ms(),
           end = c0 + ms;
    while (cpu_ms() < end)
        for (int i = 0; i < 200000; i++) /* mostly here, not in clock_gettime */
            sink += i;
    double s = clock_s(CLOCK_MONOTONIC) * 1e3 - r0 - (run_delay() * 1e3 - w0) - (cpu_ms() - c0);
    stolen += s > 0 ? s : 0;
}

static int signum(const char *name)
{
    static const struct {
        const char *n;
        int s;
    } t[] = {{"INT", SIGINT},   {"TERM", SIGTERM}, {"HUP", SIGHUP},   {"QUIT", SIGQUIT},
             {"PIPE", SIGPIPE}, {"ALRM", SIGALRM}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
             {"SEGV", SIGSEGV}, {"BUS", SIGBUS},   {"FPE", SIGFPE},   {"ILL", SIGILL},
             {"ABRT", SIGABRT}, {"PROF", SIGPROF}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(name, t[i].n) == 0)
            return t[i].s;
    fprintf(stderr, "unknown signal %s\n", name);
    exit(2);
}

static void say(int sig)
{
    char msg[32];
    int n = snprintf(msg, sizeof msg, "handler %d\n", sig);
    if (write(2, msg, (size_t)n) < 0)
        _exit(9);
}

static void h_exit(int sig)
{
    say(sig);
    _exit(7);
}

static void h_reraise(int sig)
{
    say(sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

static volatile sig_atomic_t got;

static void h_return(int sig)
{
    say(sig);
    got = sig;
}

/* Eats 4 KiB of stack a call; the addition after the call keeps it from
 * being a tail call. */
NOINLINE static long deep(long n)
{
    volatile char buf[4096];
    buf[n % 4096] = (char)n;
    return deep(n + 1) + buf[n % 4096];
}

static void *overflower(void *arg)
{
    sink = deep((long)arg);
    return NULL;
}

static void altstack(void)
{
    stack_t cur, mine;
    static char room[65536];
    if (sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE))
        fprintf(stderr, "altstack off\n");
    memset(&mine, 0, sizeof mine);
    mine.ss_sp = room;
    mine.ss_size = sizeof room;
    if (sigaltstack(&mine, NULL) == 0 && sigaltstack(NULL, &cur) == 0 && cur.ss_sp == room &&
        cur.ss_size == sizeof room && !(cur.ss_flags & SS_DISABLE))
        fprintf(stderr, "altstack set\n");
}

static void *exiter(void *arg)
{
    (void)arg;
    exit(4);
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "exit";
    double ms = argc > 2 ? atof(argv[2]) : 300;
    const char *arg = strchr(how, ':') ? strchr(how, ':') + 1 : "";
    for (int i = 0; i < 1000; i++)
        work();
    if (strcmp(how, "exec-self") == 0) {
        spin(ms);
        fprintf(stderr, "cpu %.0f steal %.0f\n", cpu_ms(), stolen);
        execl("/proc/self/exe", argv[0], "exit", "0", (char *)NULL);
        return 1;
    }
    spin(ms);
    fprintf(stderr, "cpu %.0f steal %.0f\n", cpu_ms(), stolen);
    if (strcmp(how, "exit") == 0)
        return 0;
    if (strncmp(how, "sig:", 4) == 0)
        raise(signum(arg));
    else if (strcmp(how, "abort") == 0)
        abort();
    else if (strcmp(how, "segv") == 0)
        *(volatile int *)(sink * 0) = 1;
    else if (strcmp(how, "fpe") == 0) {
        volatile long zero = 0;
        sink = (sink | 1) / zero;
    } else if (strcmp(how, "ill") == 0)
        __builtin_trap();
    else if (strcmp(how, "overflow") == 0)
        sink = deep(0);
    else if (strcmp(how, "thread-overflow") == 0) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 1 << 20);
        pthread_create(&t, &a, overflower, NULL);
        pthread_join(t, NULL);
    } else if (strcmp(how, "altstack") == 0) {
        altstack();
        return 0;
    } else if (strcmp(how, "_exit") == 0)
        _exit(5);
    else if (strcmp(how, "_Exit") == 0)
        _Exit(6);
    else if (strcmp(how, "thread-exit") == 0) {
        pthread_t th;
        pthread_create(&th, NULL, exiter, NULL);
        pthread_join(th, NULL);
    } else if (strncmp(how, "own-exit:", 9) == 0) {
        signal(signum(arg), h_exit);
        raise(signum(arg));
    } else if (strncmp(how, "own-reraise:", 12) == 0) {
        signal(signum(arg), h_reraise);
        raise(signum(arg));
    } else if (strncmp(how, "own-return:", 11) == 0) {
        signal(signum(arg), h_return);
        raise(signum(arg));
        return got == signum(arg) ? 0 : 8;
    } else if (strncmp(how, "resethand:", 10) == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = h_return;
        sa.sa_flags = SA_RESETHAND;
        sigaction(signum(arg), &sa, NULL);
        raise(signum(arg));
        if (got != signum(arg))
            return 8;
        raise(signum(arg)); /* the default action now */
    } else if (strcmp(how, "wait") == 0) {
        for (;;)
            spin(10);
    } else if (strcmp(how, "chdir") == 0) {
        return chdir("/") == 0 ? 0 : 1;
    }
    return 3;
}

/* libcalls_more: a -pg program whose library calls the profiler counts,
 * made in the places a program sees most of: with "see" as argument it
 * checks that it sees what it sees without a profiler and exits 42 when
 * every check holds (the check that failed is the exit status, 3..11);
 * with "counts N" it makes known numbers of calls in a thread, a signal
 * handler, a constructor, an atexit handler and a destructor, and a forked
 * child, and exits 43.  Used by tests/t0601-libcalls-more.sh.
 *
 * "see": built with -DTAKE_ADDRESS, &strlen and &getpid (the executable's own GOT entries for the
 * address) against dlsym(RTLD_DEFAULT) and against the value a library
 * built without -pg takes (lc_lib_strlen_ptr); errno after open() of a
 * missing file; longjmp out of a qsort comparator (qsort called through
 * the hooked PLT); snprintf and printf with doubles (xmm registers and
 * %al); malloc 1000 times (t0601 preloads an interposer counting them);
 * vfork + _exit(7) in the child; and at the end exit(42) through the PLT.
 *
 * "counts N": strlen N times in a thread (worker), N in the handler of N
 * raise(SIGUSR2) (on_usr2), 5 in a constructor (early), getuid 7 in an
 * atexit handler (late), getgid 9 in a destructor (last), getegid 13 in a
 * forked child (its own profile). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void *lc_lib_strlen_ptr(void);

static volatile size_t sink;
static char text[] = "hello"; /* not constant: strlen is called */
static const char *volatile textp = text;
static jmp_buf out;
static volatile int compared;

static int cmp_jump(const void *a, const void *b)
{
    if (++compared == 3)
        longjmp(out, 1);
    return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static int see(void)
{
#ifdef TAKE_ADDRESS
    /* pointer identity (built apart: an address the executable takes sends
     * its calls through an entry never hooked, docs/libcalls.md) */
    if ((void *)&strlen != dlsym(RTLD_DEFAULT, "strlen") || (void *)&strlen != lc_lib_strlen_ptr())
        return 3;
    if ((void *)&getpid != dlsym(RTLD_DEFAULT, "getpid"))
        return 4;
#endif
    /* errno after a failing counted call */
    errno = 0;
    if (open("/nonexistent/cgprof-t0601", O_RDONLY) != -1 || errno != ENOENT)
        return 5;
    /* longjmp out of a callback called by a counted call */
    int a[16] = {9, 3, 7, 1, 8, 2, 6, 4, 5, 0, 15, 11, 13, 10, 14, 12};
    volatile int jumped = 0;
    if (setjmp(out) == 0)
        qsort(a, 16, sizeof a[0], cmp_jump);
    else
        jumped = 1;
    if (!jumped || compared != 3)
        return 6;
    /* variadic calls with doubles: %al and the xmm registers */
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%.3f %d %.1e %s %g %g %g %g %g %g %g", 3.25, 17, 6.5e10, "x",
                     1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5);
    if (n < 0 || strcmp(buf, "3.250 17 6.5e+10 x 1.5 2.5 3.5 4.5 5.5 6.5 7.5") != 0)
        return 7;
    if (printf("printf %.2f %.2f %d\n", 0.25, -1.75, 3) != 20)
        return 8;
    fflush(stdout);
    /* malloc: the interposer (if preloaded) counts them */
    for (int i = 0; i < 1000; i++) {
        void *p = malloc(24);
        if (!p)
            return 9;
        sink += (size_t)p & 1;
        free(p);
    }
    /* vfork + _exit */
    pid_t pid = vfork();
    if (pid == 0)
        _exit(7);
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
        return 10;
    sink += strlen(textp);
    return 0;
}

/* counts */
__attribute__((constructor)) static void early(void)
{
    for (int i = 0; i < 5; i++)
        sink += strlen(textp);
}

static void late(void)
{
    for (int i = 0; i < 7; i++)
        sink += (size_t)getuid();
}

__attribute__((destructor)) static void last(void)
{
    for (int i = 0; i < 9; i++)
        sink += (size_t)getgid();
}

static void on_usr2(int sig)
{
    (void)sig;
    sink += strlen(textp);
}

static void *worker(void *arg)
{
    long n = *(long *)arg;
    for (long i = 0; i < n; i++)
        sink += strlen(textp);
    return NULL;
}

__attribute__((noinline)) static int counts(long n)
{
    if (atexit(late) != 0)
        return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, worker, &n) != 0 || pthread_join(t, NULL) != 0)
        return 2;
    signal(SIGUSR2, on_usr2);
    for (long i = 0; i < n; i++)
        raise(SIGUSR2);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 13; i++)
            sink += (size_t)getegid();
        _exit(0);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
        return 2;
    return 43;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "see") == 0) {
        int r = see();
        if (r)
            return r;
        exit(42); /* never returns: a counted call */
    }
    if (argc > 2 && strcmp(argv[1], "counts") == 0)
        return counts(atol(argv[2]));
    return 1;
}

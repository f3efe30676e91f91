/* libcalls: a -pg program that makes known numbers of library calls, for
 * N on the command line: strlen 3N (do_strlen), malloc and free 2N each
 * (do_malloc), qsort N (do_qsort), getpid 5N in a thread (worker), and
 * through the -pg library libcalls_lib.c strlen 7N more (lc_lib_strlen);
 * getuid 11 in a constructor (early), raise N and getppid N in the
 * handler of the signal raised (on_usr1), getegid 13 in a forked child.
 * It then checks that it sees what it would see without a profiler --
 * pointer identity against dlsym, errno after a failing call, a variadic
 * call -- and exits 42 when all hold (3, 4, 5 name the check that failed).
 * With "relro" after N, also that the GOT is not writable (6 if it is),
 * and that the page of main's code is not writable either (7 if it is:
 * the profiler may have patched call sites there, docs/libcalls.md).
 * Used by tests/t0600-libcalls.sh. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

size_t lc_lib_strlen(long n);
void *lc_lib_strlen_ptr(void);

static volatile size_t sink;
static char text[] = "hello, world"; /* not constant: strlen is called */
static void *volatile keep;
static const char *volatile textp = text;

static int cmp(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static void do_strlen(long n)
{
    for (long i = 0; i < n; i++) {
        text[0] = (char)('a' + (i & 7));
        sink += strlen(textp);
    }
}

__attribute__((noinline)) static void do_malloc(long n)
{
    for (long i = 0; i < n; i++) {
        keep = malloc(16 + (size_t)(i & 7));
        free(keep);
    }
}

__attribute__((noinline)) static void do_qsort(long n)
{
    int a[8] = {5, 3, 8, 1, 9, 2, 7, 4};
    for (long i = 0; i < n; i++)
        qsort(a, 8, sizeof a[0], cmp);
}

/* Whether the page at AT is writable now (the profiler made it writable
 * for a moment): the GOT's (read-only after start-up under -z now and
 * -z relro), or main's code. */
extern char _GLOBAL_OFFSET_TABLE_[];
static int page_writable(unsigned long at)
{
    FILE *f = fopen("/proc/self/maps", "r");
    unsigned long lo, hi;
    char perm[8];
    int w = -1;
    while (f && fscanf(f, "%lx-%lx %7s%*[^\n]", &lo, &hi, perm) == 3)
        if (at >= lo && at < hi)
            w = perm[1] == 'w';
    if (f)
        fclose(f);
    return w;
}

/* before main: 11 calls of getuid */
__attribute__((constructor)) static void early(void)
{
    for (int i = 0; i < 11; i++)
        sink += (size_t)getuid();
}

/* one getppid per signal */
static void on_usr1(int sig)
{
    (void)sig;
    sink += (size_t)getppid();
}

static void *worker(void *arg)
{
    long n = *(long *)arg;
    for (long i = 0; i < n; i++)
        sink += (size_t)getpid();
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    do_strlen(3 * n);
    do_malloc(2 * n);
    do_qsort(n);
    sink += lc_lib_strlen(7 * n);
    pthread_t t;
    long tn = 5 * n;
    if (pthread_create(&t, NULL, worker, &tn) != 0 || pthread_join(t, NULL) != 0)
        return 2;
    /* a signal handler's calls: N raise, N getppid */
    signal(SIGUSR1, on_usr1);
    for (long i = 0; i < n; i++)
        raise(SIGUSR1);
    /* a forked child's: 13 getegid, in its own profile */
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 13; i++)
            sink += (size_t)getegid();
        _exit(0);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
        return 2;
    /* the program sees nothing */
    /* (&f of a function also called here makes the linker send its calls
     * through the address's own GOT entry, which is never hooked: so the
     * pointer compared is one the library takes of a function both call) */
    void *d = dlsym(RTLD_DEFAULT, "strlen");
    if (lc_lib_strlen_ptr() != d || lc_lib_strlen_ptr() == NULL) {
        fprintf(stderr, "pointer identity: %p != %p\n", lc_lib_strlen_ptr(), d);
        return 3;
    }
    errno = 0;
    if (close(-1) != -1 || errno != EBADF) {
        fprintf(stderr, "errno after close(-1): %d\n", errno);
        return 4;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%d %.2f %s %ld", 7, 2.5, "x", 1L << 40);
    if (strcmp(buf, "7 2.50 x 1099511627776") != 0) {
        fprintf(stderr, "varargs: %s\n", buf);
        return 5;
    }
    if (argc > 2 && strcmp(argv[2], "relro") == 0 &&
        page_writable((unsigned long)(_GLOBAL_OFFSET_TABLE_ + 24))) /* the PLT slots */
        return 6;
    if (argc > 2 && strcmp(argv[2], "relro") == 0 && page_writable((unsigned long)main))
        return 7;
    return 42;
}

/* stackpaths MODE DEPTH ROUNDS: two call paths of the same shape that a
 * sampled stack must never mix.  Path A is pathA -> ra (DEPTH frames) ->
 * leafA, path B is pathB -> rb (DEPTH frames) -> leafB; the program
 * alternates between them, spinning about a millisecond of CPU at each
 * leaf, so the stack below the leaf changes from one path to the other
 * several times between two looks of a sampler.  A stack with leafA under
 * rb or pathB (or the reverse) mixes two moments.
 *   small  frames of a few dozen bytes
 *   big    frames of 20 KB each (run in a thread with a 64 MB stack)
 *   masked small frames, every signal blocked while they run
 *   sleep  small frames, each leaf sleeping a millisecond instead of
 *          spinning (a nanosleep system call made from the leaf itself,
 *          so that a blocked thread's user pc is the leaf's: -e wall)
 *   fault  small frames, each leaf also writing to 64 fresh pages (64
 *          page faults in the leaf itself: -e page-faults)
 * Prints "done". */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
volatile unsigned long sink;
static long depth = 400, rounds = 1000, big, sleepy, faulty;

/* nanosleep(1 ms) by the system call instruction itself, in the caller */
static inline __attribute__((always_inline)) void nap(void)
{
    struct timespec ts = {0, 1000000};
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
                     : "rcx", "r11", "memory");
    sink += (unsigned long)ret;
}

/* 64 page faults, in the function this is inlined into */
static inline __attribute__((always_inline)) void fault64(void)
{
    char *p = mmap(NULL, 64 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    for (int i = 0; i < 64; i++)
        ((volatile char *)p)[i << 12] = 1;
    munmap(p, 64 << 12);
}

NOINLINE void leafA(void)
{
    if (faulty)
        fault64();
    if (sleepy) {
        nap();
        return;
    }
    for (long i = 0; i < 1000000; i++)
        sink += (unsigned long)i;
}

NOINLINE void leafB(void)
{
    if (faulty)
        fault64();
    if (sleepy) {
        nap();
        return;
    }
    for (long i = 0; i < 1000000; i++)
        sink += (unsigned long)i ^ 1;
}

NOINLINE long ra(long d)
{
    volatile long pad[6]; /* a frame of some 80 bytes: 400 of them are 32 KB */
    pad[0] = d;
    if (d <= 1) {
        leafA();
        return 1;
    }
    long r = ra(d - 1) + pad[0];
    sink++;
    return r;
}

NOINLINE long rb(long d)
{
    volatile long pad[6]; /* a frame of some 80 bytes: 400 of them are 32 KB */
    pad[0] = d;
    if (d <= 1) {
        leafB();
        return 1;
    }
    long r = rb(d - 1) + pad[0];
    sink++;
    return r;
}

/* the same with a 20 KB frame each */
NOINLINE long bigA(long d)
{
    volatile char pad[20480];
    pad[0] = (char)d;
    pad[sizeof pad - 1] = (char)d;
    if (d <= 1) {
        leafA();
        return pad[0];
    }
    long r = bigA(d - 1) + pad[sizeof pad - 1];
    sink++;
    return r;
}

NOINLINE long bigB(long d)
{
    volatile char pad[20480];
    pad[0] = (char)d;
    pad[sizeof pad - 1] = (char)d;
    if (d <= 1) {
        leafB();
        return pad[0];
    }
    long r = bigB(d - 1) + pad[sizeof pad - 1];
    sink++;
    return r;
}

NOINLINE void pathA(void)
{
    sink += (unsigned long)(big ? bigA(depth) : ra(depth));
}

NOINLINE void pathB(void)
{
    sink += (unsigned long)(big ? bigB(depth) : rb(depth));
}

static void *run(void *arg)
{
    (void)arg;
    for (long i = 0; i < rounds; i++) {
        pathA();
        pathB();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    big = strcmp(argv[1], "big") == 0;
    int masked = strcmp(argv[1], "masked") == 0;
    sleepy = strcmp(argv[1], "sleep") == 0;
    faulty = strcmp(argv[1], "fault") == 0;
    if (!big && !masked && !sleepy && !faulty && strcmp(argv[1], "small") != 0)
        return 2;
    if (argc > 2)
        depth = atol(argv[2]);
    if (argc > 3)
        rounds = atol(argv[3]);
    if (big) {
        pthread_attr_t a;
        pthread_t t;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 64u << 20);
        if (pthread_create(&t, &a, run, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 2;
    } else {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, masked ? &all : NULL, &old);
        run(NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    puts("done");
    return 0;
}

/* eintr.c ROUNDS: a thread 400 frames deep that, each round, writes and
 * reads 64 KB through a pipe (time in the kernel), computes a little
 * (time in user mode) and sleeps 20 us.  A sampler that signals the
 * thread while it is in the kernel makes some nanosleep return EINTR:
 * counted, and the program exits 3 if any did.  Prints "eintr N of M". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static long rounds = 3000, eintr;
static int fds[2];
static char buf[65536];

__attribute__((noinline)) static void round_trip(void)
{
    for (int k = 0; k < 4; k++) {
        if (write(fds[1], buf, sizeof buf / 4) < 0 || read(fds[0], buf, sizeof buf / 4) < 0)
            exit(2);
    }
    for (long i = 0; i < 20000; i++)
        sink += (unsigned long)i;
    struct timespec ts = {0, 20000};
    if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
        eintr++;
}

__attribute__((noinline)) static long deep(long d)
{
    volatile long pad[6];
    pad[0] = d;
    if (d <= 1) {
        for (long r = 0; r < rounds; r++)
            round_trip();
        return 1;
    }
    long v = deep(d - 1) + pad[0];
    sink++;
    return v;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds = atol(argv[1]);
    if (pipe(fds) != 0)
        return 2;
    deep(400);
    printf("eintr %ld of %ld\n", eintr, rounds);
    return eintr ? 3 : 0;
}

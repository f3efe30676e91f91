/* faults.c: page faults in two functions, fa() and fb(), in a known
 * proportion, each a write to a fresh page (huge pages off), so that
 * each function's faults are exactly known.
 *   faults N        N faults in chunks of 64 pages, each chunk fa's or
 *                   fb's at random, 2 to 1: bursts of tens of thousands
 *                   of faults a second
 *   faults N slow   N faults, one at a time, each fa's or fb's at random
 *                   (2 to 1), 200 us of CPU apart: a few thousand a second
 * The choice is random (a fixed seed) so that no sampling period can fall
 * into step with the program's pattern.  Waits for a perf ring buffer to
 * be mapped (up to 10 s; the profiler's) before it starts, and prints
 * "fa A fb B": the faults each function took.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "perfwait.h"

#define REGION (8L << 20)
#define CHUNK 64

static char *region;
static long page, used, npages;
static unsigned long long seed = 0x9e3779b97f4a7c15ull;

static unsigned rnd3(void)
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(seed >> 33) % 3;
}

/* the next K fresh pages (the region emptied and reused when full) */
static volatile char *fresh(long k)
{
    if (used + k > npages) {
        if (madvise(region, REGION, MADV_DONTNEED) != 0)
            exit(1);
        used = 0;
    }
    volatile char *p = region + used * page;
    used += k;
    return p;
}

__attribute__((noinline)) void fa(volatile char *p, long k)
{
    for (long i = 0; i < k; i++)
        p[i * page] = 1;
}

__attribute__((noinline)) void fb(volatile char *p, long k)
{
    for (long i = 0; i < k; i++)
        p[i * page] = 2;
}

static void spin_us(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    do
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int slow = argc > 2 && strcmp(argv[2], "slow") == 0;
    wait_perf_mapped();
    page = sysconf(_SC_PAGESIZE);
    npages = REGION / page;
    region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED || madvise(region, REGION, MADV_NOHUGEPAGE) != 0)
        return 1;
    long a = 0, b = 0;
    long step = slow ? 1 : CHUNK;
    for (long done = 0; done < n; done += step) {
        long k = n - done < step ? n - done : step;
        volatile char *p = fresh(k);
        if (rnd3() < 2) {
            fa(p, k);
            a += k;
        } else {
            fb(p, k);
            b += k;
        }
        if (slow)
            spin_us(200);
    }
    printf("fa %ld fb %ld\n", a, b);
    return 0;
}

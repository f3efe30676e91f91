/* touch.c: an exactly known number of page faults, all at one instruction.
 *   touch N   writes to N fresh pages in touch_pages() (a 4 MB region,
 *             emptied with MADV_DONTNEED after each pass, huge pages off),
 *             so that instruction takes N page faults; prints N.
 * For a profiler sampling page faults through a perf ring buffer: it
 * starts once such a buffer is mapped in the process (waiting up to 10 s),
 * and pauses 10 ms after every 256 faults, so that a reader draining the
 * ring every few ms never lets it overflow.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "perfwait.h"

#define REGION (4L << 20)
#define PASS   256

__attribute__((noinline)) void touch_pages(volatile char *p, long npages, long step)
{
    for (long i = 0; i < npages; i++)
        p[i * step] = 1;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    long page = sysconf(_SC_PAGESIZE);
    struct timespec pause = {0, 10000000L};
    wait_perf_mapped();
    char *p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || madvise(p, REGION, MADV_NOHUGEPAGE) != 0)
        return 1;
    long used = 0;
    for (long done = 0; done < n;) {
        long k = n - done < PASS ? n - done : PASS;
        if (used + k > REGION / page) {
            if (madvise(p, REGION, MADV_DONTNEED) != 0)
                return 1;
            used = 0;
        }
        touch_pages(p + used * page, k, page);
        used += k;
        done += k;
        nanosleep(&pause, NULL);
    }
    printf("%ld\n", n);
    return 0;
}

/* ratecap.c: the highest rate a perf clock event can sample at on this
 * machine without taking the program's CPU from it.
 *
 * Each sample of a perf cpu-clock or task-clock event is a high-resolution
 * timer interrupt of the sampled thread.  On bare metal one costs a
 * microsecond or two; in a virtual machine, where every timer is a trap to
 * the hypervisor, 30-50 us (docs/runtime.md, "What sampling costs").
 * Above 1 / cost the timer expires again before its interrupt returns and
 * the program barely runs: `-F 100000` (a 10 us period) kept a 0.5 s
 * program running for 10 minutes, 7.5 of them in the kernel.
 *
 * So above HANDLER_MAX_HZ (10 kHz) the runtime measures, once per process
 * and before any event of its own is open, what one such sample costs this
 * thread: a fixed loop timed on the thread's CPU clock without and with a
 * sampling event at the rate asked, its samples counted by their records
 * in a small read-only ring (the timer interrupt and a 16-byte record,
 * the least a sample can cost; a whole sample -- its ring record,
 * stack copy and walk -- costs about twice that).  If the samples would
 * take more than half the CPU, the rate comes down to the highest whole
 * kHz that would not, never below 10 kHz, and one line says so.  The loop with the event
 * stops after 30 ms of CPU however little of it ran, so a machine where
 * the rate asked livelocks pays 30 ms, once.
 */
#include "events.h"
#include "rt.h"

#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CAP_FLOOR_HZ 10000u    /* rates up to this are never measured nor lowered */
#define STOP_NS      30000000u /* the loop under the event gives up after this */

static volatile uint64_t sink;

/* N rounds of work that touch nothing but registers */
CG_OWN static void spin(uint64_t n)
{
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    sink = x;
}

/* thread CPU ns of spin(N) in chunks of N/8, the least of TRIES runs; with
 * a deadline STOP ns in, *done gets the fraction of N that ran (in 8ths) */
static uint64_t timed(uint64_t n, int tries, uint64_t stop, unsigned *done)
{
    uint64_t best = UINT64_MAX;
    for (int k = 0; k < tries; k++) {
        uint64_t t0 = cg_thread_cpu_ns(), t = 0;
        unsigned chunks = 0;
        while (chunks < 8) {
            spin(n / 8);
            chunks++;
            t = cg_thread_cpu_ns() - t0;
            if (stop && t > stop)
                break;
        }
        if (t < best) {
            best = t;
            *done = chunks;
        }
    }
    return best;
}

/* The rate for HZ of the perf clock event TYPE/CONFIG: HZ, or lower
 * (above); *cost_ns gets one sample's measured cost, or 0 unmeasured. */
static unsigned rate_cap(uint32_t type, uint64_t config, unsigned hz, uint64_t *cost_ns)
{
    *cost_ns = 0;
    if (hz <= CAP_FLOOR_HZ)
        return hz;
    /* a loop of about 2 ms of CPU without the event */
    uint64_t n = 1u << 16;
    unsigned done = 8;
    uint64_t base = timed(n, 1, 0, &done);
    while (base < 2000000u && n < (1ull << 36)) {
        n *= 2;
        base = timed(n, 1, 0, &done);
    }
    base = timed(n, 3, 0, &done);
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    a.sample_period = 1000000000u / hz;
    a.sample_type = PERF_SAMPLE_IP;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        a.exclude_kernel = 1;
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd < 0)
        return hz; /* the sampler will say why its own event cannot open */
    /* the samples counted by their records: a ring mapped read-only is
     * overwritten, and its head counts every record's bytes (where the
     * interrupt costs more than the period, the timer skips periods: the
     * periods in the time would count samples that never were) */
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    void *ring = mmap(NULL, 2 * pg, PROT_READ, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED) {
        close(fd);
        return hz;
    }
    struct perf_event_mmap_page *h = ring;
    uint64_t head0 = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE);
    uint64_t with = timed(n, 1, STOP_NS, &done);
    uint64_t bytes = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE) - head0;
    munmap(ring, 2 * pg);
    close(fd);
    /* what the interrupts added to the part of the loop that ran */
    uint64_t ran = base * done / 8;
    if (with <= ran)
        return hz;
    /* a record: its header and the ip */
    uint64_t samples = bytes / (sizeof(struct perf_event_header) + 8);
    if (!samples)
        return hz;
    uint64_t cost = (with - ran) / samples;
    *cost_ns = cost;
    /* samples taking at most half the CPU, a whole sample (its ring
     * record, stack copy and walk) costing about twice its interrupt
     * alone (1.6 times, measured at 50 kHz): 2 * hz * cost <= 1e9 / 2 */
    if ((uint64_t)hz * cost <= 250000000u)
        return hz;
    uint64_t cap = 250000000u / (cost ? cost : 1) / 1000 * 1000;
    return cap < CAP_FLOOR_HZ ? CAP_FLOOR_HZ : (unsigned)cap;
}

/* cg_hz lowered where the event asked (cg_event) is a perf clock (the
 * cpu-clock and task-clock events, and wall, which runs on cpu-clock) and
 * cg_hz would take more than half the CPU; one line says so. */
void cg_rate_check(void)
{
    const struct cg_event *ev = cg_event;
    if (!ev || cg_hz <= CAP_FLOOR_HZ)
        return;
    uint32_t type;
    uint64_t config;
    if (ev->kind == CG_EV_WALL) {
        type = PERF_TYPE_SOFTWARE;
        config = PERF_COUNT_SW_CPU_CLOCK;
    } else if (ev->kind == CG_EV_PERF && ev->is_time) {
        type = ev->type;
        config = ev->config;
    } else {
        return;
    }
    uint64_t cost;
    unsigned hz = rate_cap(type, config, cg_hz, &cost);
    if (hz >= cg_hz)
        return;
    /* "cgprof: -F 100000 (CGPROF_FREQ): each cpu-clock sample's timer
     * interrupt costs 46 us of CPU here, a whole sample about twice that:
     * sampling at 10000 Hz, where samples take at most half the CPU" */
    char asked[24], us[24], got[24], line[256];
    const char *parts[] = {"-F ",
                           cg_utoa(cg_hz, asked + sizeof asked),
                           " (CGPROF_FREQ): each ",
                           ev->kind == CG_EV_WALL ? "cpu-clock" : ev->name,
                           " sample's timer interrupt costs ",
                           cg_utoa((cost + 500) / 1000, us + sizeof us),
                           " us of CPU here, a whole sample about twice that: sampling at ",
                           cg_utoa(hz, got + sizeof got)};
    line[0] = '\0';
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        strncat(line, parts[i], sizeof line - strlen(line) - 1);
    cg_say(line, " Hz, where samples take at most half the CPU", NULL);
    cg_hz = hz;
}

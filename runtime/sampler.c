/* The sampler thread: perf_event_open events and wall-clock time, gathered
 * with as few signals to the program as can be (below).
 *
 * For every thread of the process (found by scanning /proc/self/task, and
 * at once when pthread_create tells us), the sampler opens the chosen perf
 * event with a ring buffer and drains the samples' pcs into its own sample
 * table.  For `wall`, the event is cpu-clock (running time) and, at every
 * tick, each thread blocked in the kernel is read from
 * /proc/self/task/TID/syscall, whose last field is the user pc the thread
 * is blocked at -- inside read, nanosleep, pthread_cond_wait -- so blocked
 * time is attributed without interrupting anything: no system call can
 * return EINTR because of us and no sleep is cut short.
 *
 * With no event (cpu or itimer sampling, or none) the thread only keeps
 * the module list up to date, for the cgprof profile format.
 *
 * Every thread opens its own event as it starts (cg_sampler_thread_open,
 * from our pthread_create, cg_init and fork) and hands it over here, so a
 * thread is sampled from its first instruction however short it is; the
 * scan opens events only for threads that did not (raw clones, threads
 * older than us).  An event's first period is drawn at random in (0, P]:
 * a thread that runs for L < P is then sampled once with probability L/P,
 * as its CPU time deserves.  At the first overflow the kernel sends the
 * sampler thread our signal (O_ASYNC; not the sampled thread, which may be
 * in a system call that a handler would interrupt), and the sampler sets
 * the period to P (sleep_tick); samples the first period left in between
 * (closer than 3P/4 to the last one kept) are dropped here.
 *
 * With CGPROF_STACK_SYNC=2 a time event is two per thread: its user-mode
 * samples come from a "handler event" (exclude_kernel, no ring, so no
 * locked memory) whose every overflow sends the thread our signal; the
 * handler counts the sample and walks the stack where the thread stopped,
 * as the cpu event's does (sample.c).  The signal comes on the way back
 * to user mode, never in a system call, so nothing returns EINTR because
 * of it.  Time in the kernel, where it may be sampled, comes from a second
 * event (exclude_user) with a ring, unwound here from its copy as below.
 *
 * A sample's stack is walked here from the registers and the 8 KB of stack
 * perf copied with it, and nothing else.  A thread whose stack is deeper
 * than that gets our signal at every sample from then on and walks its
 * stack itself, at that instant (struct snapring; docs/stacks.md).
 *
 * The sampler thread blocks every signal, so no signal meant for the
 * program is ever handled on it, runs no profiled code, and is not itself
 * sampled.  Its state is its own: only the flush handshake and the rescan
 * flag are shared, through atomics.
 */
#include "rt.h"
#include "unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* Data pages per thread's ring (plus one header page): with stacks, each
 * sample carries STACK_COPY bytes of the thread's stack; the ring holds two
 * ticks' worth of samples at the rate and at least 20 ms', 16 to 512 pages
 * (cg_sampler_start). */
#define RING_PAGES   ring_pages
#define STACK_COPY   8192
#define SMALL_COPY   512           /* without stacks: enough to see our own frames */
#define SCAN_NS      100000000L    /* pthread_create asks for a scan at once */
#define HOLD_NS      1000000000ull /* how long a scan leaves new threads to open their own */
#define PHASE_FDS    4096          /* descriptors that can be in their first period */
#define NSLOTS       1024          /* events handed over, not yet taken */
#define MIN_FIRST_NS 50000u        /* shortest random first period of a time event */
#define WAIT_NS      50000000u     /* longest wait of a record for its thread's snapshot */

/* the period of the kernel's event beside a handler event (kernel_keep) */
#define KERNEL_PERIOD (perf_period / 16 * 15)
/* The highest rate at which a thread is signalled at every sample by
 * default (handler events: go_deep, a thread without a ring).  Each
 * signal costs the thread some 10-30 us on these VMs besides its walk (at
 * most a quarter of the period, stacks.c): at 20 kHz a 400-frame thread's
 * signals queued faster than it took them until the user's real-time
 * signal queue was full, the kernel sent SIGIO, and the program died of
 * it; at 10 kHz 99% of the rate, the program's own time unharmed. */
#define HANDLER_MAX_HZ 10000u

struct tracked {
    pid_t tid;
    struct cg_thread_rec *rec; /* its totals */
    int fd;                    /* perf event, or -1 */
    void *ring;                /* header page + RING_PAGES data pages */
    int seen;                  /* in the last /proc scan */
    int phasing;               /* opened with a random first period: samples filtered */
    int rearmed;               /* its period set to P again since the last kept */
    uint64_t kept;             /* samples kept (the last at event count last_count) */
    uint64_t grid;             /* before the switch to P: the next count one is kept at */
    uint64_t last_count;
    uint64_t prev_count; /* event count at its previous sample (time events) */
    uint64_t ev_taken;   /* at_rate: the event's count up to its last sample taken */
    uint64_t rate_count, rate_at, rate_period; /* at_rate: count and time at the last
                                                * look, and the period set then */
    int have_prev;
    uint64_t lost_since; /* samples the kernel lost since then (PERF_RECORD_LOST) */
    /* wall: where it was last seen (a sample or a look while blocked), to
     * charge its time waiting for a CPU to; the runqueue wait so far */
    uintptr_t last_pc;
    uint32_t last_leaf;         /* its stack's leaf node, UINT32_MAX: none */
    struct cg_stree *last_tree; /* the tree that node is in */
    uint64_t wait_since;        /* its ring's first record waits for a snapshot since */
    uint64_t wait_ns, wait_carry;
    int wait_known;
    int64_t late_carry;  /* wall: its samples' delays not yet charged (ns) */
    uint32_t hlast_seen; /* its handler event's hlast seq at the last look */
    /* its handler event at the last scan: count, samples, whether seen;
     * its signals stopped (blocked) */
    uint64_t h_count, h_samples;
    int64_t h_late; /* its share of late_ns so far */
    int h_seen, h_quiet;
    uint64_t k_credit; /* its kernel event's time not yet counted, ns (kernel_keep) */
    /* deep (go_deep): 1 its user-mode samples taken by a handler event
     * since its ring event counted deep_count; -1 tried, not possible.
     * deep_s0: its samples then; deep_pre: samples of its ring's records
     * from before that, taken since */
    int deep;
    unsigned deep_cuts; /* its walks cut by the copy's end so far */
    uint64_t since;     /* tracked since (CLOCK_MONOTONIC ns) */
    uint64_t h_at;      /* the scan that read h_count (watch_blocked) */
    uint64_t deep_count, deep_s0, deep_pre, deep_retry;
    /* wall: its stack at its last look while blocked, and where it was
     * then (its CPU run time, pc, sp): while it has not run, the same */
    uint32_t blk_leaf;
    struct cg_stree *blk_tree;
    uint64_t blk_run;
    uintptr_t blk_pc, blk_sp;
};

static const struct cg_event *event;
static unsigned start_hz;
static uint64_t start_period;
static uint64_t sample_weight; /* events per sample of a counting event, else 1 */
/* a counting event without a period: sampled at the rate (rate_adjust),
 * each sample weighted by the events since its thread's last */
static int at_rate;
/* ... its period until a thread's first look: the event's own (a
 * hardware counter's million), or 16 events.  Not 1: a thread faulting
 * 600,000 times a second overflowed past the kernel's limit per tick
 * (perf_event_max_sample_rate / HZ, 400 here), and a throttled software
 * event counts nothing until the next tick -- up to 1.3% of a burst
 * run's faults were never counted */
#define RATE_FIRST (perf_period > 16 ? perf_period : 16)
static uint64_t tick_ns;      /* mean interval between looks (10 ms; 100 without rings) */
static uint64_t hz_period_ns; /* one sample's worth of time at the rate */
static uint64_t perf_period;  /* perf sample_period */
static uint32_t stack_copy;   /* stack bytes copied with each sample, or 0 */
static size_t ring_pages;     /* data pages of each thread's ring */
static size_t page;
static pid_t sampler_tid;
static int running;                    /* atomic: the sampler thread exists */
static int rescan;                     /* atomic: a thread was created */
static unsigned flush_req, flush_done; /* atomic handshake with the writer */
/* why threads went unsampled: the first failure, and the first one
 * of another cause (-1: no locked memory for a ring) */
static int perf_errno[2];

/* Notes why a thread's event could not be opened (E an errno, or -1). */
static void note_open_error(int e)
{
    int zero = 0;
    if (__atomic_compare_exchange_n(&perf_errno[0], &zero, e, 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED) ||
        zero == e)
        return;
    zero = 0;
    __atomic_compare_exchange_n(&perf_errno[1], &zero, e, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
static uint64_t unsampled;        /* threads the event could not be opened for */
static uint64_t throttled;        /* atomic: at_rate, times the kernel throttled an event */
static uint64_t self_unsampled;   /* atomic: threads whose open failed (their own or a scan's), not
                                     opened since */
static int starting;              /* atomic: threads created, not yet handed over */
static int kernel_denied;         /* atomic: kernel-mode samples not permitted */
static uint64_t start_cpu_ns;     /* atomic: program threads' CPU in our set-up */
static uint64_t before_cpu_ns;    /* atomic: their CPU before they were sampled */
static int64_t late_ns;           /* atomic: time events' samples came late by */
static int time_event;            /* the perf event counts time (cpu-clock, wall) */
static int with_chain;            /* record --kernel: the kernel's frames kept */
static int chain_rec;             /* records carry the kernel's callchain */
static uint64_t irqw_lo, irqw_hi; /* the kernel's irq_work entry (kallsyms), or 0 */
static uint16_t chain_max;        /* the callchain's frames asked for */
static uint64_t hold_since;       /* a scan first left new threads alone, or 0 */

/* Per descriptor: 0 not ours, 1 ours in its first period, 2 ours after it
 * (atomic).  Read by the signal handler to tell our signals from strays. */
static unsigned char phased[PHASE_FDS];
/* Per ring event in its first period: that period (events or ns), and the
 * event's count when its period became P, + 1 (0: not yet) -- the
 * samples up to then came at the first period's pace (keep_sample). */
static uint64_t first_period[PHASE_FDS], switched_at[PHASE_FDS];
/* Handler events (CGPROF_STACK_SYNC=2): per descriptor, 1 if it is one
 * (atomic; read by the handler); and per ring event, its thread's handler
 * event + 1, closed with it. */
static unsigned char hev[PHASE_FDS];
static int hev_of[PHASE_FDS];
/* at_rate, per handler event: its count up to its last sample taken, or
 * charged by the sampler at a thread's end or a write (advance_taken) */
static uint64_t hev_taken[PHASE_FDS];
static int handler_mode;  /* a time event's user samples taken by the threads */
static int deep_switch;   /* a thread deeper than its copies goes to a handler event (go_deep) */
static int deep_handlers; /* atomic: some thread did */
static int ring_less;     /* atomic: some thread got a handler event for want of a ring */

/* Stacks walked by their own threads.  With stacks on, every overflow of
 * a thread's perf event also sends the thread our signal (O_ASYNC); its
 * handler walks the stack where the thread stopped -- every frame from
 * that one moment, to any depth -- into the thread's own tree, without
 * counting, and leaves a snapshot {pc, sp, bp, leaf node} here, in the
 * ring of the event's descriptor.  The sampler, taking the ring buffer's
 * record of the same sample, finds the snapshot with the record's user
 * registers and counts the sample at its leaf; with none (the thread had
 * our signal blocked, or had not run its handler yet) it walks the record's
 * copy of the stack, and only that: the stack past the copy is cut and
 * marked, never read as it is later (docs/stacks.md). */
#define SNAPS 64
struct snap {
    uint32_t seq; /* index + 1 once written; 0 while being written */
    uint32_t leaf;
    int cut, own;
    uintptr_t pc, sp, bp;
    struct cg_stree *tree;
};
struct snapring {
    uint32_t w;         /* snapshots written (atomic; the thread's handler) */
    uint32_t r;         /* the first not yet matched (the sampler's) */
    int on;             /* atomic: the event signals every sample (the sampler sets it) */
    int can;            /* its signal is set up: it may */
    uint32_t unmatched; /* records with no snapshot in a row (the sampler's) */
    uint32_t quiet;     /* the sampler stopped its signals at w = quiet - 1, or 0 */
    struct snap s[SNAPS];
};
static struct snapring *snaps[PHASE_FDS]; /* per descriptor, mapped once, kept */
static int execing; /* atomic: a thread is about to exec: no signals turned on */

/* Events opened by their own threads, handed to the sampler (lock-free:
 * a slot goes FREE -> FILLING by its thread, READY, and FREE again when
 * the sampler has taken it). */
enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };
static struct handoff {
    int state;
    pid_t tid;
    int fd;
    int phasing;
    void *ring;
    struct cg_thread_rec *rec; /* the thread's own record of its totals */
} slots[NSLOTS];

static struct tracked *trk;
static size_t ntrk, trk_cap;
static struct cg_table *table; /* the sampler's own sample table */
static struct cg_stree *stree; /* the sampler's own stack tree */
static int sync_stacks;        /* a perf event's stacks are walked by its thread (below) */
/* one record, out of the ring: with its stack copy and the kernel's
 * callchain (CHAIN_MAX frames and perf's context markers) -- a record cut
 * short here lost its stack's end (a kernel sample's walk stopped at its
 * first frame, and the runtime's own work in a system call was counted as
 * the program's) */
#define CHAIN_MAX 127
static unsigned char rec[64 + 8 * (CHAIN_MAX + 8) + STACK_COPY + 64];

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* the calling thread's CPU time in ns (0 if unreadable) */
uint64_t cg_thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Walks a stack from REGS over M into FRAMES (at most MAX); how many. */
static unsigned walk(const struct cg_regs *regs, const struct cg_mem *m, uintptr_t *frames,
                     unsigned max, int *cut)
{
    __atomic_store_n(&cg_modules_stale, 0, __ATOMIC_RELAXED);
    unsigned n = cg_unwind(regs, m, frames, max, cut);
    /* code in a module not seen yet (a dlopen since the last look): this
     * thread may take a snapshot at once, and walks again -- at most once
     * per tick, as code in no module at all (JIT) keeps asking */
    static uint64_t last_forced;
    if (__atomic_exchange_n(&cg_modules_stale, 0, __ATOMIC_RELAXED) &&
        now_ns() - last_forced >= tick_ns) {
        last_forced = now_ns();
        cg_modules_snapshot();
        n = cg_unwind(regs, m, frames, max, cut);
    }
    return n;
}

/* Where a sample's frames go: the stack tree's scratch, or (no stacks
 * kept) a few frames, enough to see whether the runtime is on the stack. */
static uintptr_t *frames_for(unsigned *max)
{
    static uintptr_t few[16];
    if (cg_stacks_on && !stree)
        stree = cg_stree_acquire();
    if (cg_stacks_on && stree) {
        *max = CG_STACK_MAX;
        return cg_stree_scratch(stree);
    }
    *max = sizeof few / sizeof few[0];
    return few;
}

static void count(struct tracked *t, uintptr_t pc, uint64_t weight)
{
    if (t) {
        t->last_pc = pc;
        t->last_leaf = UINT32_MAX;
    }
    if (t && t->rec)
        __atomic_add_fetch(&t->rec->samples, weight, __ATOMIC_RELAXED);
    if (!table)
        table = cg_table_acquire(&cg_sample_tables);
    if (table)
        cg_table_add(table, cg_pc_tag(pc), CG_EVENT_KEY, weight);
    else
        cg_samples_add_lost(weight);
}

/* A random number, different in every thread and call (splitmix64 over
 * the clock, the thread and a counter): the random first periods of perf
 * events and of the cpu event's timers (sample.c). */
CG_OWN uint64_t cg_random64(pid_t tid)
{
    static uint64_t calls;
    uint64_t x = now_ns() ^ (uint64_t)tid << 32 ^
                 __atomic_add_fetch(&calls, 0x9E3779B97F4A7C15ull, __ATOMIC_RELAXED);
    x = (x ^ x >> 30) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ x >> 27) * 0x94D049BB133111EBull;
    return x ^ x >> 31;
}

/* Whether events start with a random first period: not for a period of
 * one event, nor below 100 us of time (the kernel's clocks do not go
 * below 10 us, and a thread shorter than that is all there is to miss). */
static int phase_on(void)
{
    if (at_rate)
        return 0; /* its period follows the thread's events (rate_adjust) */
    int timed = event->kind == CG_EV_WALL || event->is_time;
    return perf_period >= (timed ? 100000u : 2u);
}

/* Whether a thread whose ring cannot be mapped may be sampled by a
 * handler event instead: a time event sampled at a rate, with our signal
 * (not wall, whose runqueue time needs the sampler to see every sample,
 * nor counting events, whose count is not time). */
static int can_ring_less(void)
{
    return event->kind == CG_EV_PERF && event->is_time && start_hz && start_hz <= HANDLER_MAX_HZ &&
           cg_sample_sig;
}

/* wall: a handler event's last sample in its thread (pc, stack leaf and
 * tree), for the sampler to charge the thread's time waiting for a CPU to
 * (sample_waiting), as it charges a ring event's last sample.  Per handler
 * event descriptor; seq odd while being written. */
struct hlast {
    uint32_t seq;
    uint32_t leaf;
    uintptr_t pc;
    struct cg_stree *tree;
};
static struct hlast hlast[PHASE_FDS];

/* Opens TID's handler event (CGPROF_STACK_SYNC=2, or a thread with no
 * ring): user mode only, no ring, our signal at every overflow, to TID
 * alone; its first period at random when PHASE.  The descriptor, or -1
 * (errno set). */
CG_OWN static int open_handler_event(pid_t tid, int phase)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = event->kind == CG_EV_WALL ? PERF_TYPE_SOFTWARE : event->type;
    a.config = event->kind == CG_EV_WALL ? PERF_COUNT_SW_CPU_CLOCK : event->config;
    a.sample_period = phase ? 1 + cg_random64(tid) % perf_period : perf_period;
    if (phase && a.sample_period < MIN_FIRST_NS)
        a.sample_period = MIN_FIRST_NS;
    a.sample_type = PERF_SAMPLE_IP;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.disabled = 1;
    a.wakeup_events = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -1;
    struct f_owner_ex own = {F_OWNER_TID, tid};
    if (fd >= PHASE_FDS || fcntl(fd, F_SETSIG, cg_sample_sig) != 0 ||
        fcntl(fd, F_SETOWN_EX, &own) != 0) {
        close(fd);
        errno = EMFILE;
        return -1;
    }
    __atomic_store_n(&phased[fd], phase ? 1 : 2, __ATOMIC_RELEASE);
    __atomic_store_n(&hlast[fd].seq, 0, __ATOMIC_RELEASE); /* nothing published yet */
    __atomic_store_n(&hev_taken[fd], 0, __ATOMIC_RELEASE);
    __atomic_store_n(&hev[fd], 1, __ATOMIC_RELEASE);
    if (fcntl(fd, F_SETFL, O_ASYNC) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        int e = errno;
        __atomic_store_n(&hev[fd], 0, __ATOMIC_RELEASE);
        __atomic_store_n(&phased[fd], 0, __ATOMIC_RELEASE);
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Opens the event for TID, its ring mapped; with a random first period,
 * the event is enabled only once our signal is set to reach TID at the
 * first overflow.  0, or -1 (errno set), or -2 if the ring could not be
 * mapped (errno set). */
CG_OWN static int open_event(pid_t tid, int *fdp, void **ringp, int *phasing)
{
    *fdp = -1;
    *ringp = NULL;
    *phasing = 0;
    if (!event)
        return -1;
    int phase = phase_on();
    /* handler events: the user-mode samples; the ring event below, if the
     * kernel's may be sampled, takes those (at P from the start) */
    int h = -1;
    if (handler_mode) {
        h = open_handler_event(tid, phase);
        if (h < 0)
            return -1;
        phase = 0;
        if (__atomic_load_n(&kernel_denied, __ATOMIC_RELAXED)) {
            *fdp = h;
            return 0;
        }
    }
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = event->kind == CG_EV_WALL ? PERF_TYPE_SOFTWARE : event->type;
    a.config = event->kind == CG_EV_WALL ? PERF_COUNT_SW_CPU_CLOCK : event->config;
    a.sample_period = phase ? 1 + cg_random64(tid) % perf_period : perf_period;
    /* a first period under 50 us: 50 us (the kernel was seen not to take
     * the switch to P after first periods under 25 us; a thread shorter
     * than 50 us is then never sampled, one longer as often as before) */
    if (phase && (event->kind == CG_EV_WALL || event->is_time) && a.sample_period < MIN_FIRST_NS)
        a.sample_period = MIN_FIRST_NS;
    /* the event's count at each sample: drops the first period's extras;
     * at_rate, weighs the sample (its period: RATE_FIRST, then rate_adjust) */
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ;
    if (at_rate)
        a.sample_period = RATE_FIRST;
    /* registers and the top of the stack, unwound here afterwards: whole
     * for the stacks kept, else a few frames' worth for a time event, to
     * tell the runtime's own work from the program's */
    if (stack_copy) {
        a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a.sample_regs_user = CG_PERF_REGS_USER; /* fp, sp, pc */
        a.sample_stack_user = stack_copy;
    }
    a.exclude_hv = 1;
    /* A time event also counts the thread's time in the kernel (system
     * calls, page faults), charged, as a CPU timer's signal would be, to
     * the user pc it entered the kernel from: the user registers that come
     * with the sample.  Where kernel samples are not permitted
     * (perf_event_paranoid >= 2 without CAP_PERFMON), user time only, and
     * the report says how much CPU time went unsampled. */
    int kernel = stack_copy && (event->kind == CG_EV_WALL || event->is_time) &&
                 !__atomic_load_n(&kernel_denied, __ATOMIC_RELAXED);
    a.exclude_kernel = !kernel;
    a.exclude_user = h >= 0;
    /* beside a handler event: a period of its own, so that its ticks
     * cannot lock onto the handler event's (kernel_keep) */
    if (h >= 0)
        a.sample_period = KERNEL_PERIOD;
    /* the kernel's frames of a sample taken in it: kept with record
     * --kernel (the user frames come from the copy, as always), and
     * beside handler events read for where the kernel was entered from
     * (in_signal_path); every event's records have the same layout, with
     * or without kernel samples */
    if (chain_rec) {
        a.sample_type |= PERF_SAMPLE_CALLCHAIN;
        a.exclude_callchain_user = 1;
        a.sample_max_stack = chain_max; /* (whatever perf_event_max_stack says) */
    }
    /* the first overflow signals the thread: O_ASYNC, set before the
     * event is enabled, sends our signal at every overflow until the
     * first period's end clears it.  No wakeup_events: it cannot be
     * cleared on an open event, and would queue the kernel's irq_work (a
     * self-interrupt, ~10-15 us on VMs) at every sample of the event's
     * life to wake a reader that never sleeps on it (docs/runtime.md) */
    a.disabled = phase;
    int fd = h >= 0 && !kernel
                 ? -1
                 : (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && kernel && (errno == EACCES || errno == EPERM)) {
        __atomic_store_n(&kernel_denied, 1, __ATOMIC_RELAXED);
        a.exclude_kernel = 1;
        if (h < 0)
            fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd < 0 && h >= 0) { /* user mode only: the handler event alone */
        *fdp = h;
        return 0;
    }
    if (fd < 0)
        return -1;
    void *r = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r == MAP_FAILED) {
        int e = errno;
        close(fd);
        errno = e;
        if (h >= 0) { /* no locked memory for the kernel's samples */
            *fdp = h;
            return 0;
        }
        /* no locked memory left for a ring (an ordinary user's limits):
         * this thread's user-mode samples come from a handler event,
         * which needs none; its kernel time goes unsampled (late) */
        if (can_ring_less()) {
            h = open_handler_event(tid, phase);
            if (h >= 0) {
                __atomic_store_n(&ring_less, 1, __ATOMIC_RELEASE);
                *fdp = h;
                return 0;
            }
            /* what stopped it is the handler event's failure (it needs
             * no locked memory): most often no descriptor left, taken
             * by another thread since this one's was closed */
            return -1;
        }
        return -2; /* EPERM: the user's locked memory for rings is used up */
    }
    if (h >= 0 && fd < PHASE_FDS)
        hev_of[fd] = h + 1;
    if (fd < PHASE_FDS) { /* (a descriptor used again: afresh) */
        first_period[fd] = a.sample_period;
        __atomic_store_n(&switched_at[fd], 0, __ATOMIC_RELEASE);
    }
    /* stacks walked by the thread itself: its snapshot ring */
    struct snapring *q = NULL;
    if (sync_stacks && fd < PHASE_FDS && cg_sample_sig) {
        q = __atomic_load_n(&snaps[fd], __ATOMIC_ACQUIRE);
        if (!q) {
            q = mmap(NULL, sizeof *q, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            q = q == MAP_FAILED ? NULL : q;
            if (q)
                __atomic_store_n(&snaps[fd], q, __ATOMIC_RELEASE);
        }
        if (q) {
            __atomic_store_n(&q->on, 0, __ATOMIC_SEQ_CST);
            q->can = 0;
            q->r = __atomic_load_n(&q->w, __ATOMIC_ACQUIRE);
            q->unmatched = q->quiet = 0;
        }
    }
    if ((phase || q) && fd < PHASE_FDS && cg_sample_sig) {
        /* the first overflow's signal goes to the sampler thread, not to
         * the sampled one, if the event samples the kernel: it may come
         * while the thread is in a system call, where a handler run would
         * make its nanosleep, poll or read return EINTR (sleep_tick).  An
         * event of user mode only overflows there only, its signal comes
         * on the way back to user mode, and the thread's handler ends the
         * period at once (no samples at the first period's pace pile up
         * while a busy machine keeps the sampler waiting).  Snapshots
         * (CGPROF_STACK_SYNC=1) are taken by the thread itself. */
        pid_t to = __atomic_load_n(&sampler_tid, __ATOMIC_ACQUIRE);
        struct f_owner_ex own = {F_OWNER_TID, !q && to && !a.exclude_kernel ? to : tid};
        __atomic_store_n(&phased[fd], phase ? 1 : 2, __ATOMIC_RELEASE);
        if (fcntl(fd, F_SETSIG, cg_sample_sig) == 0 && fcntl(fd, F_SETOWN_EX, &own) == 0 &&
            (!phase || fcntl(fd, F_SETFL, O_ASYNC) == 0)) {
            *phasing = phase;
            if (q)
                q->can = 1; /* the sampler may have it signal every sample */
        } else {
            __atomic_store_n(&phased[fd], 2, __ATOMIC_RELEASE);
        }
    }
    if (phase && !*phasing) /* no signal to end it: the period is P from now */
        ioctl(fd, PERF_EVENT_IOC_PERIOD, &perf_period);
    if (phase)
        ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    *fdp = fd;
    *ringp = r;
    return 0;
}

/* The first period of FD's event is over: its period becomes P, and no
 * more signals.  Once per event, by whichever comes first: the thread's
 * signal handler or the sampler. */
CG_OWN static void end_phase(int fd)
{
    if (fd < 0 || fd >= PHASE_FDS)
        return;
    unsigned char one = 1;
    if (!__atomic_compare_exchange_n(&phased[fd], &one, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    int saved = errno;
    uint64_t t0 = cg_thread_cpu_ns();
    if (!__atomic_load_n(&hev[fd], __ATOMIC_ACQUIRE)) { /* a handler event signals on */
        fcntl(fd, F_SETFL, 0);                          /* no more signals... */
        const struct snapring *q = __atomic_load_n(&snaps[fd], __ATOMIC_ACQUIRE);
        if (q && __atomic_load_n(&q->on, __ATOMIC_SEQ_CST))
            fcntl(fd, F_SETFL, O_ASYNC); /* ...unless the sampler wants them for stacks */
    }
    ioctl(fd, PERF_EVENT_IOC_PERIOD, &perf_period);
    uint64_t c;
    if (!__atomic_load_n(&hev[fd], __ATOMIC_ACQUIRE) && read(fd, &c, sizeof c) == (ssize_t)sizeof c)
        __atomic_store_n(&switched_at[fd], c + 1, __ATOMIC_RELEASE);
    if (!cg_sampler_here())
        __atomic_add_fetch(&start_cpu_ns, cg_thread_cpu_ns() - t0, __ATOMIC_RELAXED);
    errno = saved;
}

/* Whether a stack passes through the runtime's own code that runs on
 * program threads (CG_OWN: starting a thread's event, ending its first
 * period): such a sample is the runtime's time, not the program's. */
static int in_runtime(const uintptr_t *frames, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (frames[i] >= (uintptr_t)__start_cgprof_own && frames[i] < (uintptr_t)__stop_cgprof_own)
            return 1;
    return 0;
}

/* In the thread's handler: walks its stack from UC, where the sample
 * stopped it, and leaves the snapshot in Q (see struct snapring). */
CG_OWN static void snapshot(struct snapring *q, void *uc_)
{
    if (!cg_recording || cg_tls.in_runtime)
        return;
    __atomic_add_fetch(&cg_sampling_inflight, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&cg_paused, __ATOMIC_SEQ_CST)) {
        const ucontext_t *uc = uc_;
        struct cg_stree *tree;
        const uintptr_t *frames;
        unsigned n;
        int cut;
        uint32_t leaf = cg_stack_path_uc(uc_, &tree, &frames, &n, &cut);
        uint32_t w = q->w;
        struct snap *e = &q->s[w % SNAPS];
        __atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        e->leaf = leaf;
        e->cut = cut;
        e->own = in_runtime(frames, n);
        e->pc = cg_uc_pc(uc);
        e->sp = cg_uc_sp(uc);
        e->bp = cg_uc_fp(uc);
        e->tree = tree;
        __atomic_store_n(&e->seq, w + 1, __ATOMIC_RELEASE);
        __atomic_store_n(&q->w, w + 1, __ATOMIC_RELEASE);
    }
    __atomic_sub_fetch(&cg_sampling_inflight, 1, __ATOMIC_RELEASE);
}

/* at_rate: T's period now (events a sample). */
static uint64_t rate_now(const struct tracked *t)
{
    return t->rate_period ? t->rate_period : RATE_FIRST;
}

/* Whether a handler event's signal (FIRST: its first, the random first
 * period's) is a sample at the rate: not a second overflow of the first
 * period, which the kernel can fire at the old period after the switch to
 * P -- closer than 3P/4 to the first by the event's count.  Reads the
 * count at the first two samples only.  Later signals are all kept: each
 * is one overflow in user mode (those in the kernel send nothing), and
 * one that waited, queued, while its thread blocked the signal is the
 * time spent meanwhile, charged where the thread unblocked it, as the cpu
 * event's timer charges its overruns. */
CG_OWN static int keep_in_thread(int fd, int first)
{
    struct cg_tls *t = &cg_tls;
    uint64_t c;
    int saved = errno, keep = 1;
    if (first) {
        t->hev_fd = read(fd, &c, sizeof c) == (ssize_t)sizeof c ? fd + 1 : 0;
        t->hev_last = c;
    } else if (t->hev_fd == fd + 1) {
        if (read(fd, &c, sizeof c) == (ssize_t)sizeof c && c - t->hev_last < perf_period / 4 * 3)
            keep = 0;
        else
            t->hev_fd = 0;
    }
    errno = saved;
    return keep;
}

/* T's handler event, or -1. */
static int handler_fd(const struct tracked *t)
{
    if (t->fd < 0 || t->fd >= PHASE_FDS)
        return -1;
    if (__atomic_load_n(&hev[t->fd], __ATOMIC_ACQUIRE))
        return t->fd;
    return hev_of[t->fd] - 1;
}

/* At each scan: a thread whose handler event counted 32 periods or more
 * with no sample taken, and whose /proc status says our signal is blocked,
 * has its signals stopped (real-time signals queue: a thread that blocks
 * them for long would fill the user's queue, and the kernel then sends
 * SIGIO), and noted (THREADS flag 2); they start again once it unblocks. */
static void watch_blocked(struct tracked *t)
{
    int h = handler_fd(t);
    uint64_t c;
    if (h < 0 || !t->rec || read(h, &c, sizeof c) != (ssize_t)sizeof c)
        return;
    uint64_t s = __atomic_load_n(&t->rec->samples, __ATOMIC_RELAXED);
    uint64_t taken = __atomic_load_n(&t->rec->taken, __ATOMIC_RELAXED);
    /* what no sample stands for, as note_late's: the event's clock less
     * the thread's samples' periods (the kernel's time, where it may not
     * be sampled; jitter) -- but not while its signals were stopped: the
     * report says that time went unsampled, and why */
    int64_t late = (int64_t)c - (int64_t)(s * perf_period);
    if (t->deep == 1) /* since its handler event began (its clock runs in the kernel too) */
        late = (int64_t)c - (int64_t)((s - t->deep_s0 - t->deep_pre) * perf_period);
    /* nor for a thread seen with the signal blocked (at its end, say,
     * before 32 periods): the report says why its time went unsampled;
     * nor for a counting event, whose count is not time */
    if ((__atomic_load_n(&t->rec->flags, __ATOMIC_RELAXED) & CG_THREAD_SIGBLOCKED) || !time_event)
        late = 0;
    /* a deep thread of a counting event signalled faster than
     * HANDLER_MAX_HZ since the last scan: back to its ring (copies) */
    uint64_t now = now_ns();
    if (!time_event && !at_rate && t->deep == 1 && t->h_seen && !t->h_quiet &&
        (c - t->h_count) / perf_period * 1000000000u >
            (uint64_t)HANDLER_MAX_HZ * (now - t->h_at + 1)) {
        fcntl(h, F_SETFL, 0);
        ioctl(h, PERF_EVENT_IOC_DISABLE, 0);
        t->deep = -1; /* its user records are taken again */
        ioctl(t->fd, PERF_EVENT_IOC_ENABLE, 0);
    }
    t->h_at = now;
    if (!t->h_quiet)
        __atomic_add_fetch(&late_ns, late - t->h_late, __ATOMIC_RELAXED);
    /* wall: a deep thread's delays (stolen time: wall_late) are charged
     * where its handler event last sampled it (sample_waiting) */
    if (!t->h_quiet && event->kind == CG_EV_WALL && t->deep == 1)
        t->late_carry += late - t->h_late;
    t->h_late = late;
    if (t->h_quiet) {
        if (!cg_thread_sig_blocked(t->tid)) {
            fcntl(h, F_SETFL, O_ASYNC);
            t->h_quiet = 0;
        }
    } else if (t->h_seen && c - t->h_count >= 32 * (at_rate ? rate_now(t) : perf_period) &&
               taken == t->h_samples && cg_thread_sig_blocked(t->tid)) {
        fcntl(h, F_SETFL, 0);
        t->h_quiet = 1;
        __atomic_or_fetch(&t->rec->flags, CG_THREAD_SIGBLOCKED, __ATOMIC_RELAXED);
    }
    t->h_count = c;
    t->h_samples = taken;
    t->h_seen = 1;
}

CG_OWN static void publish_last(int fd, uintptr_t pc, uint32_t leaf, struct cg_stree *tree)
{
    if (event->kind != CG_EV_WALL && !at_rate)
        return;
    struct hlast *h = &hlast[fd];
    uint32_t q = __atomic_load_n(&h->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&h->seq, q + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    h->pc = pc;
    h->leaf = leaf;
    h->tree = tree;
    __atomic_store_n(&h->seq, q + 2, __ATOMIC_RELEASE);
}

/* The last sample FD's thread published since the sampler's look at SEEN
 * (updated): 1 and *PC, *LEAF, *TREE, or 0. */
static int read_last(int fd, uint32_t *seen, uintptr_t *pc, uint32_t *leaf, struct cg_stree **tree)
{
    struct hlast *h = &hlast[fd];
    uint32_t q = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
    if ((q & 1) || q == *seen)
        return 0;
    *pc = h->pc;
    *leaf = h->leaf;
    *tree = h->tree;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&h->seq, __ATOMIC_RELAXED) != q)
        return 0; /* written meanwhile: the next look */
    *seen = q;
    return 1;
}

/* at_rate: handler event FD's count taken up to C, by its thread's
 * handler or by the sampler (a thread's end, a write): the events since
 * the count taken before, each counted once whoever comes first.  Async-
 * signal-safe. */
CG_OWN static uint64_t advance_taken(int fd, uint64_t c)
{
    uint64_t old = __atomic_load_n(&hev_taken[fd], __ATOMIC_ACQUIRE);
    while (c > old)
        if (__atomic_compare_exchange_n(&hev_taken[fd], &old, c, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return c - old;
    return 0;
}

/* A handler event's sample, in its thread's handler: counted and its
 * stack walked here, as the cpu event's are (sample.c), or the runtime's
 * if the thread was in the runtime's own code.  At the rate (a counting
 * event without -c), it weighs its event's count since the last one
 * taken, read here. */
CG_OWN static void take_in_thread(int fd, void *uc_)
{
    struct cg_tls *t = &cg_tls;
    if (!cg_recording)
        return;
    uint32_t w = (uint32_t)sample_weight;
    if (at_rate) {
        uint64_t c, d;
        int saved = errno;
        ssize_t got = read(fd, &c, sizeof c);
        errno = saved;
        if (got != (ssize_t)sizeof c)
            return;
        d = advance_taken(fd, c);
        if (!d || __atomic_load_n(&cg_paused, __ATOMIC_ACQUIRE))
            return; /* none since (a tail charged at a write), or the writer's */
        w = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
    }
    if (t->in_runtime) {
        cg_runtime_samples_add(w);
        return;
    }
    __atomic_add_fetch(&cg_sampling_inflight, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&cg_paused, __ATOMIC_SEQ_CST)) {
        const ucontext_t *uc = uc_;
        uintptr_t pc = cg_uc_pc(uc);
        if (!cg_stacks_on) {
            cg_sample_count_pc(pc, w);
            publish_last(fd, pc, UINT32_MAX, NULL);
        } else {
            struct cg_stree *tree;
            const uintptr_t *frames;
            unsigned n;
            int cut;
            uint32_t leaf = cg_stack_path_uc(uc_, &tree, &frames, &n, &cut);
            if (frames && in_runtime(frames, n)) {
                cg_runtime_samples_add(w);
            } else {
                cg_sample_count_pc(pc, w);
                if (tree)
                    cg_stree_take(tree, leaf, cut, w);
                publish_last(fd, pc, tree ? leaf : UINT32_MAX, tree);
            }
        }
    }
    __atomic_sub_fetch(&cg_sampling_inflight, 1, __ATOMIC_RELEASE);
}

/* Our signal, sent by the kernel for descriptor FD (si_code > 0) with the
 * interrupted context UC: 1 if the descriptor is one of our events (its
 * first period ends now; with stacks, the thread's stack is walked), 0 if
 * the signal is not ours.  Async-signal-safe. */
CG_OWN int cg_sampler_phase_signal(int fd, void *uc)
{
    if (fd < 0 || fd >= PHASE_FDS || !__atomic_load_n(&phased[fd], __ATOMIC_ACQUIRE))
        return 0;
    if (__atomic_load_n(&hev[fd], __ATOMIC_ACQUIRE)) { /* every sample, taken here */
        int first = __atomic_load_n(&phased[fd], __ATOMIC_ACQUIRE) == 1;
        end_phase(fd);
        if (uc && keep_in_thread(fd, first))
            take_in_thread(fd, uc);
        return 1;
    }
    end_phase(fd);
    struct snapring *q = __atomic_load_n(&snaps[fd], __ATOMIC_ACQUIRE);
    if (q && uc && __atomic_load_n(&q->on, __ATOMIC_ACQUIRE))
        snapshot(q, uc);
    return 1;
}

/* Before exec: no signal of ours may reach the next image, which starts
 * with the default action (termination) for it.  Every event's first
 * period is ended and no thread walks its own stack any more (no more
 * signals), and one already sent to this thread
 * but blocked is taken off. */
void cg_sampler_before_exec(void)
{
    if (!cg_sample_sig)
        return;
    int saved = errno;
    /* (left set if the exec fails: threads then walk from copies only) */
    __atomic_store_n(&execing, 1, __ATOMIC_SEQ_CST);
    for (int fd = 0; fd < PHASE_FDS; fd++) {
        struct snapring *q = __atomic_load_n(&snaps[fd], __ATOMIC_ACQUIRE);
        if (q && __atomic_exchange_n(&q->on, 0, __ATOMIC_SEQ_CST))
            fcntl(fd, F_SETFL, 0);                         /* nor for stacks */
        if (__atomic_load_n(&hev[fd], __ATOMIC_ACQUIRE)) { /* nor for samples */
            ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
            fcntl(fd, F_SETFL, 0);
        }
        if (__atomic_load_n(&phased[fd], __ATOMIC_ACQUIRE) == 1)
            end_phase(fd);
    }
    sigset_t ours, old;
    sigemptyset(&ours);
    sigaddset(&ours, cg_sample_sig);
    pthread_sigmask(SIG_BLOCK, &ours, &old);
    struct timespec none = {0, 0};
    siginfo_t si;
    while (sigtimedwait(&ours, &si, &none) == cg_sample_sig) {
        /* ours (si_code > 0, from a descriptor) or a timer's: dropped */
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
}

/* 1: every thread's user-mode samples are taken in the thread (handler
 * events, CGPROF_STACK_SYNC=2); 2: some threads' are (those with
 * CG_THREAD_RINGLESS); 0: none. */
int cg_sampler_in_threads(void)
{
    return handler_mode ? 1
           : __atomic_load_n(&ring_less, __ATOMIC_ACQUIRE) ||
                   __atomic_load_n(&deep_handlers, __ATOMIC_ACQUIRE)
               ? 2
               : 0;
}

/* Notes in R that its thread's event FD is a handler event for want of a
 * ring (the report names the limit if it matters). */
static void note_ring_less(struct cg_thread_rec *r, int fd)
{
    if (!handler_mode && r && fd >= 0 && fd < PHASE_FDS &&
        __atomic_load_n(&hev[fd], __ATOMIC_ACQUIRE))
        __atomic_or_fetch(&r->flags, CG_THREAD_RINGLESS, __ATOMIC_RELAXED);
}

/* An exec returned (it failed): the handler events sample again (the
 * stacks of ring events stay with their copies). */
void cg_sampler_exec_failed(void)
{
    if (!cg_sampler_in_threads())
        return;
    int saved = errno;
    for (int fd = 0; fd < PHASE_FDS; fd++)
        if (__atomic_load_n(&hev[fd], __ATOMIC_ACQUIRE)) {
            fcntl(fd, F_SETFL, O_ASYNC);
            ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
        }
    errno = saved;
}

static void close_event(int fd, void *ring)
{
    if (fd >= 0 && fd < PHASE_FDS && hev_of[fd]) { /* its handler event too */
        close_event(hev_of[fd] - 1, NULL);
        hev_of[fd] = 0;
    }
    if (fd >= 0 && fd < PHASE_FDS && __atomic_load_n(&hev[fd], __ATOMIC_ACQUIRE)) {
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        __atomic_store_n(&hev[fd], 0, __ATOMIC_RELEASE);
    }
    if (fd >= 0 && fd < PHASE_FDS && snaps[fd])
        __atomic_store_n(&snaps[fd]->on, 0, __ATOMIC_RELEASE);
    if (ring)
        munmap(ring, (RING_PAGES + 1) * page);
    if (fd >= 0 && fd < PHASE_FDS)
        __atomic_store_n(&phased[fd], 0, __ATOMIC_RELEASE);
    if (fd >= 0)
        close(fd);
}

/* Where a sample record's user registers start (after ip, count and,
 * with record --kernel, the kernel's callchain: nr, then nr ips); the
 * callchain's ips and number into IPS and NR (0 without). */
static size_t regs_offset(const unsigned char *p, size_t n, const unsigned char **ips, uint64_t *nr)
{
    *ips = NULL;
    *nr = 0;
    if (!chain_rec)
        return 16;
    uint64_t k = 0;
    if (n >= 24)
        memcpy(&k, p + 16, 8);
    if (k > (n - 24) / 8)
        return n; /* not a record of ours: no registers */
    *ips = p + 24;
    *nr = k;
    return 24 + 8 * (size_t)k;
}

/* A sample record's body (ip, count, [callchain,] abi, bp sp ip, stack
 * size, stack bytes, dynamic size): its registers and the copy of its
 * stack. */
static void regs_of_record(const unsigned char *p, size_t n, struct cg_regs *r, struct cg_mem *m)
{
    uint64_t ip, abi = 0, regs[CG_PERF_NREGS] = {0}, size = 0, dyn = 0, nr;
    const unsigned char *ips;
    memcpy(&ip, p, 8);
    size_t base = regs_offset(p, n, &ips, &nr);
    if (n >= base + 8)
        memcpy(&abi, p + base, 8);
    size_t at = base + 8;
    if (abi && n < at + sizeof regs)
        abi = 0;
    if (abi) {
        memcpy(regs, p + at, sizeof regs);
        at += sizeof regs;
    }
    if (n >= at + 8) {
        memcpy(&size, p + at, 8);
        at += 8;
    }
    const unsigned char *stack = p + at;
    if (size && n >= at + size + 8)
        memcpy(&dyn, p + at + size, 8);
    if (dyn > size)
        dyn = 0;
    *r = (struct cg_regs){(uintptr_t)(abi ? regs[CG_PERF_PC] : ip),
                          (uintptr_t)regs[CG_PERF_SP],
                          (uintptr_t)regs[CG_PERF_FP],
                          abi != 0,
                          CG_PERF_LR >= 0 ? (uintptr_t)regs[CG_PERF_LR < 0 ? 0 : CG_PERF_LR] : 0,
                          CG_PERF_LR >= 0 && abi != 0};
    *m = (struct cg_mem){r->sp, r->sp + dyn, stack, 1, 0};
    if (!abi)
        m->lo = m->hi = 0;
}

/* T's copy of a stack ended before the stack did: from now on, its thread
 * walks its stack itself at every sample. */
static void want_snapshots(struct tracked *t)
{
    if (t->fd < 0 || t->fd >= PHASE_FDS)
        return;
    struct snapring *q = snaps[t->fd];
    if (!q || !q->can || __atomic_load_n(&q->on, __ATOMIC_RELAXED) ||
        __atomic_load_n(&execing, __ATOMIC_SEQ_CST))
        return;
    q->r = __atomic_load_n(&q->w, __ATOMIC_ACQUIRE);
    q->unmatched = q->quiet = 0;
    __atomic_store_n(&q->on, 1, __ATOMIC_SEQ_CST);
    int saved = errno;
    fcntl(t->fd, F_SETFL, O_ASYNC);
    if (__atomic_load_n(&execing, __ATOMIC_SEQ_CST)) { /* cg_sampler_before_exec */
        __atomic_store_n(&q->on, 0, __ATOMIC_SEQ_CST);
        fcntl(t->fd, F_SETFL, 0);
    }
    errno = saved;
}

/* By default (CGPROF_STACK_SYNC unset), a thread whose stack a walk
 * found deeper than its 8 KB copy: from now on its user-mode samples are
 * taken in the thread by a handler event (user mode only: each stack
 * whole, to the depth limit, from one moment, and no system call of the
 * thread interrupted: docs/stacks.md), and its ring event keeps only the
 * kernel's samples, at KERNEL_PERIOD with credit (kernel_keep), as
 * CGPROF_STACK_SYNC=2 has them (where the kernel may not be sampled, the
 * ring event is disabled).  The records its ring holds from before (count
 * up to deep_count) are taken as before.  Once per thread. */
static void go_deep(struct tracked *t)
{
    if (t->deep || t->fd < 0 || t->fd >= PHASE_FDS || hev_of[t->fd] ||
        __atomic_load_n(&hev[t->fd], __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&execing, __ATOMIC_SEQ_CST))
        return;
    /* a thread that blocks our signal now would go unsampled: it stays
     * with its copies, and is looked at again a scan later */
    uint64_t now = now_ns();
    if (now < t->deep_retry)
        return;
    int saved = errno;
    __atomic_store_n(&deep_handlers, 1, __ATOMIC_RELEASE); /* some threads sample in themselves */
    if (cg_thread_sig_blocked(t->tid)) {
        t->deep_retry = now + SCAN_NS;
        errno = saved;
        return;
    }
    uint64_t c;
    if (read(t->fd, &c, sizeof c) != (ssize_t)sizeof c) {
        errno = saved;
        return;
    }
    /* a counting event's samples come at the rate its events do: only a
     * thread whose event overflowed at a quarter of HANDLER_MAX_HZ or
     * less so far (its count: samples a full ring lost included) */
    if (!time_event && !at_rate &&
        c / perf_period * 1000000000u > (uint64_t)HANDLER_MAX_HZ / 4 * (now - t->since + 1)) {
        t->deep_retry = now + SCAN_NS;
        errno = saved;
        return;
    }
    t->deep = -1;
    int h = open_handler_event(t->tid, 0);
    if (h < 0) {
        errno = saved;
        return;
    }
    hev_of[t->fd] = h + 1;
    t->deep = 1;
    t->deep_count = c;
    if (at_rate) {
        /* the rate's period goes on in the handler event, whose count
         * starts at 0 (rate_adjust); the ring's events after its last
         * record are charged by rate_tail, at the thread's end or a write */
        uint64_t p = rate_now(t);
        int e = errno;
        ioctl(h, PERF_EVENT_IOC_PERIOD, &p);
        errno = e;
        t->rate_count = 0;
        t->rate_at = now;
    }
    t->deep_s0 = t->rec ? __atomic_load_n(&t->rec->samples, __ATOMIC_RELAXED) : 0;
    t->deep_pre = 0;
    t->k_credit = cg_random64(t->tid) % perf_period;
    t->h_seen = 0;
    /* its first period is over (this sample came after it): keep_sample's
     * checks of it end here, or one of them, seeing two samples closer
     * than 3P/4 (jitter on a busy machine), would set the period back to
     * P, where its ticks lock onto the handler event's and catch the
     * thread in the kernel at tick after tick (149% of the rate once, in
     * a full check) */
    end_phase(t->fd);
    t->phasing = 0;
    if (__atomic_load_n(&kernel_denied, __ATOMIC_RELAXED) || !time_event) {
        /* its samples were all user mode (a counting event's ring is) */
        ioctl(t->fd, PERF_EVENT_IOC_DISABLE, 0);
    } else {
        uint64_t kp = KERNEL_PERIOD;
        ioctl(t->fd, PERF_EVENT_IOC_PERIOD, &kp);
    }
    if (t->rec)
        __atomic_or_fetch(&t->rec->flags, CG_THREAD_DEEP, __ATOMIC_RELAXED);
    __atomic_store_n(&deep_handlers, 1, __ATOMIC_RELEASE);
    if (__atomic_load_n(&execing, __ATOMIC_SEQ_CST)) { /* cg_sampler_before_exec ran meanwhile */
        ioctl(h, PERF_EVENT_IOC_DISABLE, 0);
        fcntl(h, F_SETFL, 0);
    }
    errno = saved;
}

/* The snapshot T's thread took of the sample whose user registers are R,
 * if it took one: the first written since the last matched with R's pc,
 * sp and rbp (a snapshot whose sample was not kept, or that came late,
 * matches nothing and is passed over).  A thread that takes none for 64
 * samples in a row has our signal blocked: its event stops signalling, so
 * that signals cannot pile up, and its stacks are walked from the copies
 * until the signals sent before have been handled. */
static int match(struct tracked *t, const struct cg_regs *r, struct snap *out)
{
    if (t->fd < 0 || t->fd >= PHASE_FDS || !r->bp_known)
        return 0;
    struct snapring *q = snaps[t->fd];
    if (!q || !__atomic_load_n(&q->on, __ATOMIC_ACQUIRE))
        return 0;
    uint32_t w = __atomic_load_n(&q->w, __ATOMIC_ACQUIRE), i = q->r;
    if (q->quiet && q->quiet - 1 != w) {
        int saved = errno;
        fcntl(t->fd, F_SETFL, O_ASYNC); /* unblocked: signals again */
        errno = saved;
        q->quiet = 0;
        q->unmatched = 0;
    }
    if (w - i > SNAPS)
        i = w - SNAPS;
    for (; i != w; i++) {
        struct snap *e = &q->s[i % SNAPS];
        if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != i + 1)
            continue;
        struct snap c = *e;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != i + 1)
            continue; /* written over meanwhile */
        if (c.pc == r->pc && c.sp == r->sp && c.bp == r->bp && c.leaf != UINT32_MAX && c.tree) {
            q->r = i + 1;
            q->unmatched = 0;
            *out = c;
            return 1;
        }
    }
    if (!q->quiet && ++q->unmatched >= 64) {
        int saved = errno;
        fcntl(t->fd, F_SETFL, 0);
        errno = saved;
        q->quiet = w + 1;
    }
    return 0;
}

/* record --kernel: puts the kernel's frames of the sample (body P, N
 * bytes) before the NF user frames at FRAMES (room for MAX), innermost
 * first, as perf gives them; the new number of frames.  A sample taken in
 * user mode has none.  Kernel addresses keep their top bits (all ones),
 * which no user pc has: the profile names them apart (docs/stacks.md). */
static unsigned kernel_frames(const unsigned char *p, size_t n, uintptr_t *frames, unsigned nf,
                              unsigned max, int *cut)
{
    const unsigned char *ips;
    uint64_t nr, k = 0;
    regs_offset(p, n, &ips, &nr);
    for (uint64_t i = 0; i < nr; i++) { /* the kernel's frames, markers left out */
        uint64_t v;
        memcpy(&v, ips + 8 * i, 8);
        if (v < (uint64_t)-4095 && v > CG_PC_MASK)
            k++;
    }
    if (k == 0)
        return nf;
    if (k > max / 2)
        k = max / 2;
    unsigned keep = nf + k > max ? max - (unsigned)k : nf; /* user frames kept */
    if (keep < nf)
        *cut = 1;
    memmove(frames + k, frames, keep * sizeof *frames);
    uint64_t j = 0;
    for (uint64_t i = 0; i < nr && j < k; i++) {
        uint64_t v;
        memcpy(&v, ips + 8 * i, 8);
        if (v < (uint64_t)-4095 && v > CG_PC_MASK)
            frames[j++] = (uintptr_t)v;
    }
    return keep + (unsigned)k;
}

/* Counts one sample (a record's body, N bytes, at least ip and count) for
 * T: the program's, or the runtime's when its stack shows our own code. */
static void take_sample(struct tracked *t, const unsigned char *p, size_t n, uint64_t weight)
{
    uint64_t ip;
    memcpy(&ip, p, 8);
    struct cg_regs r;
    struct cg_mem m;
    regs_of_record(p, n, &r, &m);
    struct snap sn;
    if (match(t, &r, &sn)) {
        /* the thread walked its stack itself, at this sample */
        if (sn.own) {
            cg_runtime_samples_add(weight);
            return;
        }
        count(t, r.pc, weight);
        cg_stree_take(sn.tree, sn.leaf, sn.cut, weight);
        t->last_leaf = sn.leaf;
        t->last_tree = sn.tree;
        return;
    }
    unsigned max;
    uintptr_t *frames = frames_for(&max);
    int cut;
    unsigned nf = walk(&r, &m, frames, max, &cut);
    if (cut && nf < max && sync_stacks)
        want_snapshots(t); /* cut by the copy's end: the stack is deeper */
    if (in_runtime(frames, nf)) {
        cg_runtime_samples_add(weight);
        return;
    }
    /* the program's own stack cut by the copy's end, a third time (once
     * can be a walk past the outermost frame of a shallow stack, into
     * what lies above it, as at start-up) */
    if (cut && nf < max && deep_switch && ++t->deep_cuts >= 3)
        go_deep(t);
    /* the user pc: where the thread was, or entered the kernel from */
    count(t, r.pc ? r.pc : (uintptr_t)ip, weight);
    if (with_chain && stree)
        nf = kernel_frames(p, n, frames, nf, max, &cut);
    if (cg_stacks_on && stree) {
        t->last_leaf = cg_stree_add(stree, frames, nf, cut, weight);
        t->last_tree = stree;
    }
}

/* For an event opened with a random first period: whether a sample at
 * event count C is one at the rate.  The first one is, and ends the first
 * period if the thread's signal has not (the thread had it blocked).
 * After it, a sample less than 3P/4 past the last one kept came at the
 * first period's pace, before the switch to P took effect, and is
 * dropped; one after the second kept (a switch that did not take, which
 * 6.x kernels were seen to do for first periods under 25 us) also sets
 * the period to P again. */
static int keep_sample(struct tracked *t, uint64_t c)
{
    uint64_t sw = t->fd >= 0 && t->fd < PHASE_FDS
                      ? __atomic_load_n(&switched_at[t->fd], __ATOMIC_ACQUIRE)
                      : 1;
    /* before the switch to P (the sampler may end the first period late,
     * on a busy machine): the samples came at the first period's pace,
     * and one is kept per P of count from the first -- not one per 3P/4,
     * which kept up to a third too many */
    if (t->kept && (!sw || c < sw - 1)) {
        if (c < t->grid)
            return 0;
        while (t->grid <= c)
            t->grid += perf_period;
        t->kept++;
        t->last_count = c;
        return 1;
    }
    if (t->kept && c - t->last_count < perf_period - perf_period / 4) {
        if (t->kept >= 2 && !t->rearmed && t->fd >= 0) {
            int saved = errno;
            ioctl(t->fd, PERF_EVENT_IOC_PERIOD, &perf_period);
            errno = saved;
            t->rearmed = 1;
        }
        return 0;
    }
    if (!t->kept) {
        end_phase(t->fd);
        t->grid = c + perf_period;
    }
    t->kept++;
    t->rearmed = 0;
    t->last_count = c;
    return 1;
}

/* A time event's sample at event count C (ns of the thread's CPU): the
 * event's count at each sample is the thread's CPU time then, so the
 * time between two samples beyond their period (late firings, whole
 * periods the kernel's timer skipped) is CPU time no sample stands for
 * (at 10 kHz on these VMs, 1-5% of it).  Summed for the report's check of
 * unsampled time; the samples keep weight 1, the delays falling on any
 * pc alike. */
static void note_late(struct tracked *t, uint64_t c)
{
    if (!time_event)
        return;
    /* samples lost in between (a full ring) are not late: their periods
     * are the lost samples' own, counted as lost.  Signed: a sample that
     * came early (jitter) gives back what the previous one's delay took,
     * so the sum is each thread's span between samples less their
     * periods -- what no sample stands for */
    uint64_t d = c - t->prev_count, lost = t->lost_since * perf_period;
    if (t->have_prev) {
        int64_t late = (int64_t)d - (int64_t)lost - (int64_t)perf_period;
        __atomic_add_fetch(&late_ns, late, __ATOMIC_RELAXED);
        if (event->kind == CG_EV_WALL)
            t->late_carry += late;
    }
    t->prev_count = c;
    t->have_prev = 1;
    t->lost_since = 0;
}

/* wall: the whole periods T's sample came late by, as more samples at
 * its pc.  A virtual machine's CPU taken by the hypervisor (steal time)
 * runs the event's clock and the thread's real time, but the kernel's
 * timer, due meanwhile, fires once as the CPU comes back: one sample
 * where many periods went by, at the pc the thread stood at all along.
 * Steal is neither the thread's CPU time nor its runqueue wait (docs/
 * events.md), so wall would miss it: on these VMs 5-40% of a busy
 * thread's real time beside two busy loops.  Early samples (jitter) give
 * back what late ones took (the carry is signed).  A deep thread's carry
 * comes from its handler event's count (watch_blocked) and is charged
 * at the sampler's looks (sample_waiting). */
static uint64_t wall_late(struct tracked *t)
{
    if (event->kind != CG_EV_WALL || t->late_carry < (int64_t)perf_period)
        return 0;
    uint64_t extra = (uint64_t)t->late_carry / perf_period;
    t->late_carry -= (int64_t)(extra * perf_period);
    return extra;
}

/* Beside a handler event (CGPROF_STACK_SYNC=2) the kernel's time is
 * sampled by a ring event whose period is 15/16 of P.  With P, the two
 * events' ticks locked together, and the ring event caught the thread in
 * the kernel delivering the handler event's signal at tick after tick
 * (split.c at 1 kHz, root: 100-110% of CPU time x rate); with 15/16 of P
 * they drift past each other (100.5-102.1%; docs/stacks.md).  Each of its
 * samples adds its period to the thread's credit and one is kept per P of
 * credit (15 of 16), so each kept sample stands for P of the kernel's
 * time, with no fractional weights; the credit starts at random in
 * [0, P), so a thread's expected count is its kernel time / P. */
static int kernel_keep(struct tracked *t)
{
    t->k_credit += KERNEL_PERIOD;
    if (t->k_credit < perf_period)
        return 0;
    t->k_credit -= perf_period;
    return 1;
}

/* Whether the newest sample record of T's ring (body P, N bytes) should
 * wait there for its thread's snapshot: none is pending, so the thread was
 * stopped before it could run its handler, and the record is left for a
 * later look, for up to WAIT_NS -- unless FINAL (the writer waits, or the
 * thread is gone).  A thread that runs takes its snapshot at once. */
static int wait_for_snapshot(struct tracked *t, const unsigned char *p, size_t n, int final)
{
    if (final || t->fd < 0 || t->fd >= PHASE_FDS || n < 24)
        return 0;
    const struct snapring *q = snaps[t->fd];
    uint64_t abi = 0, nr;
    const unsigned char *ips;
    size_t base = regs_offset(p, n, &ips, &nr);
    if (n >= base + 8)
        memcpy(&abi, p + base, 8);
    if (!q || !abi || !__atomic_load_n(&q->on, __ATOMIC_ACQUIRE) || q->quiet ||
        __atomic_load_n(&q->w, __ATOMIC_ACQUIRE) != q->r) {
        t->wait_since = 0;
        return 0;
    }
    uint64_t now = now_ns();
    if (!t->wait_since)
        t->wait_since = now;
    if (now - t->wait_since < WAIT_NS)
        return 1;
    t->wait_since = 0;
    return 0;
}

/* Whether the kernel-mode sample record P (N bytes) of a thread with a
 * handler event was taken on the kernel's way back to user mode from the
 * irq_work interrupt -- the one that sends a handler event's signal --
 * entered from user mode: its outermost kernel frame is the irq_work
 * entry (irqw_lo, from /proc/kallsyms at start).  Such a tick of the ring
 * event fell in the time the handler event's own overflow took (the
 * interrupt, the signal's delivery), time the handler event's ticks never
 * fall in, one period on: each handler sample stands for it already, and
 * counting these too put deep threads 1-5% over their CPU time
 * (docs/stacks.md).  Other interrupts from user mode are the thread's
 * time like any other, sampled alike by both events. */
static int in_signal_path(const unsigned char *p, size_t n)
{
    if (!irqw_lo)
        return 0;
    const unsigned char *ips;
    uint64_t nr, a;
    regs_offset(p, n, &ips, &nr);
    for (uint64_t i = nr; i-- > 0;) {
        memcpy(&a, ips + 8 * i, 8);
        if (a >= (uint64_t)PERF_CONTEXT_MAX)
            continue; /* perf's context markers */
        return a >= irqw_lo && a < irqw_hi;
    }
    return 0;
}

/* Finds the kernel's irq_work interrupt entry in /proc/kallsyms
 * (irqw_lo, irqw_hi: to the next symbol), among the first 64 KB -- the
 * entry code comes first, and the file is the kernel's to generate, 5 MB
 * of it.  None (addresses hidden, another name): no sample is dropped. */
static void find_irq_work_entry(void)
{
    static const char name[] = " T asm_sysvec_irq_work\n";
    char buf[4096 + 64];
    size_t have = 0, total = 0;
    int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    uint64_t lo = 0;
    while (total < 65536) {
        ssize_t r = read(fd, buf + have, sizeof buf - 1 - have);
        if (r <= 0)
            break;
        have += (size_t)r;
        total += (size_t)r;
        buf[have] = 0;
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            uint64_t a = 0;
            int digits = 0;
            for (const char *c = line; c < nl; c++, digits++) {
                int v = *c >= '0' && *c <= '9'   ? *c - '0'
                        : *c >= 'a' && *c <= 'f' ? *c - 'a' + 10
                                                 : -1;
                if (v < 0)
                    break;
                a = a << 4 | (uint64_t)v;
            }
            if (lo && a > lo && digits == 16) {
                irqw_lo = lo;
                irqw_hi = a;
                close(fd);
                return;
            }
            if (!lo && a && digits == 16 && (size_t)(nl + 1 - line) == 16 + sizeof name - 1 &&
                memcmp(line + 16, name, sizeof name - 1) == 0)
                lo = a;
            line = nl + 1;
        }
        have -= (size_t)(line - buf);
        memmove(buf, line, have);
        if (have >= sizeof buf - 1)
            have = 0; /* a line longer than the buffer: not one of these */
    }
    close(fd);
}

/* Reads every sample of T's ring buffer (FINAL: without waiting for
 * snapshots); the number of samples read. */
static uint64_t drain(struct tracked *t, int final)
{
    uint64_t got = 0;
    if (!t->ring)
        return 0;
    struct perf_event_mmap_page *h = t->ring;
    const unsigned char *data = (const unsigned char *)t->ring + page;
    uint64_t size = (uint64_t)RING_PAGES * page;
    uint64_t head = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = h->data_tail;
    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header eh;
        for (size_t i = 0; i < sizeof eh; i++)
            ((unsigned char *)&eh)[i] = data[(tail + i) % size];
        if (eh.size < sizeof eh || tail + eh.size > head)
            break;
        size_t n = eh.size < sizeof rec ? eh.size : sizeof rec;
        size_t at = (size_t)(tail % size), first = n < size - at ? n : size - at;
        memcpy(rec, data + at, first);
        memcpy(rec + first, data, n - first);
        uint64_t v, c;
        if (eh.type == PERF_RECORD_SAMPLE && n >= sizeof eh + 16 && tail + eh.size == head &&
            wait_for_snapshot(t, rec + sizeof eh, n - sizeof eh, final))
            break;
        if (eh.type == PERF_RECORD_SAMPLE && n >= sizeof eh + 16) {
            memcpy(&v, rec + sizeof eh, 8);
            memcpy(&c, rec + sizeof eh + 8, 8);
            /* a deep thread's sample since its handler event began */
            int deep = t->deep == 1 && c > t->deep_count;
            if (t->phasing && !keep_sample(t, c)) {
                /* a second sample of the first period: not a sample at the rate */
            } else if (deep && !t->h_quiet &&
                       (eh.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER) {
                /* user mode: its handler event took this one (unless the
                 * thread blocks its signal: then this one, from the copy) */
            } else if ((handler_mode || (deep && time_event)) &&
                       in_signal_path(rec + sizeof eh, n - sizeof eh)) {
                /* in the delivery of its handler event's signal: that
                 * event's sample stands for this time (in_signal_path) */
            } else if ((handler_mode || (deep && time_event)) && !kernel_keep(t)) {
                /* a kernel sample's period not yet a whole P of credit */
            } else if (handler_mode || deep ? 0 : (note_late(t, c), 0),
                       __atomic_load_n(&cg_paused, __ATOMIC_ACQUIRE)) {
                /* the profile is being written: not the program's time */
                if (c > t->ev_taken)
                    t->ev_taken = c;
                t->late_carry = 0; /* (wall: nor its delays) */
            } else if (at_rate) {
                /* the events since the thread's last sample taken, those
                 * of records the kernel lost meanwhile included */
                uint64_t w = c > t->ev_taken ? c - t->ev_taken : 0;
                if (w) /* (0: a record older than a tail charged at a write) */
                    t->ev_taken = c;
                if (w) {
                    take_sample(t, rec + sizeof eh, n - sizeof eh, w);
                    got++;
                }
            } else {
                take_sample(t, rec + sizeof eh, n - sizeof eh, sample_weight + wall_late(t));
                t->deep_pre += t->deep == 1 && !deep;
                got++;
            }
        } else if (eh.type == PERF_RECORD_THROTTLE && at_rate) {
            /* the kernel stopped the event until its next tick: it counts
             * nothing meanwhile (a software event), so those events are
             * lost -- said at the end; the thread's period doubled, so
             * that its samples come less often than what set it off */
            __atomic_add_fetch(&throttled, 1, __ATOMIC_RELAXED);
            uint64_t p2 = (t->rate_period ? t->rate_period : RATE_FIRST) * 2;
            int saved = errno;
            if (t->fd >= 0 && p2 <= UINT32_MAX && ioctl(t->fd, PERF_EVENT_IOC_PERIOD, &p2) == 0)
                t->rate_period = p2;
            errno = saved;
        } else if (eh.type == PERF_RECORD_LOST && n >= sizeof eh + 16) {
            memcpy(&v, rec + sizeof eh + 8, 8);
            /* lost before the switch to P: records at the first period's
             * pace, which a full ring could not hold while the sampler had
             * not yet ended it: as many samples at the rate as P goes
             * into what they spanned */
            if (t->phasing && t->fd >= 0 && t->fd < PHASE_FDS) {
                uint64_t sw = __atomic_load_n(&switched_at[t->fd], __ATOMIC_ACQUIRE);
                if (!sw || t->last_count < sw - 1)
                    v = v * first_period[t->fd] / perf_period;
            }
            if (v && at_rate) {
                /* their events are in the next sample's count: charged
                 * there, not lost (said in one line at the end) */
                cg_samples_add_merged(v);
            } else if (v) {
                cg_samples_add_lost(v);
                t->lost_since += v;
            }
        }
        tail += eh.size;
    }
    __atomic_store_n(&h->data_tail, tail, __ATOMIC_RELEASE);
    return got;
}

static int schedstat(pid_t tid, uint64_t *run, uint64_t *wait);

/* wall, a thread gone: the time it waited for a CPU since the sampler's
 * last look (it read its own at its end: cg_sampler_thread_end), with the
 * part of a period left over, charged where it was last sampled -- or,
 * never sampled (a thread shorter than the sampler's looks), at its start
 * routine.  The part of a period counts as one sample with that
 * probability, so that a thousand short threads' waiting is not lost. */
/* wall: T's runqueue wait is WAIT (schedstat) now: what it grew by since
 * the last look, or since the thread's sampling began, into its carry. */
static void add_wait(struct tracked *t, uint64_t wait)
{
    uint64_t w0 = t->rec ? __atomic_load_n(&t->rec->start_wait, __ATOMIC_ACQUIRE) : 0;
    if (!t->wait_known && w0) { /* its first look: since its sampling began */
        t->wait_ns = w0 - 1;
        t->wait_known = 1;
    }
    if (t->wait_known && wait > t->wait_ns)
        t->wait_carry += wait - t->wait_ns;
    t->wait_ns = wait;
    t->wait_known = 1;
}

/* wall: WEIGHT samples of T's waiting at PC, on the stack of its last
 * sample if PC is its pc (the last sample's leaf and tree kept). */
static void charge_wait(struct tracked *t, uintptr_t pc, uint64_t weight)
{
    uint32_t leaf = pc == t->last_pc ? t->last_leaf : UINT32_MAX;
    struct cg_stree *tree = t->last_tree;
    count(t, pc, weight);
    t->last_leaf = leaf;
    t->last_tree = tree;
    if (cg_stacks_on && tree && leaf != UINT32_MAX)
        cg_stree_count(tree, leaf, weight);
    else if (cg_stacks_on && stree)
        cg_stree_add(stree, &pc, 1, 0, weight);
}

static void wait_at_end(struct tracked *t)
{
    uint64_t w = t->rec ? __atomic_load_n(&t->rec->end_wait, __ATOMIC_ACQUIRE) : 0;
    if (!w)
        return;
    add_wait(t, w - 1);
    uint64_t weight = t->wait_carry / hz_period_ns, part = t->wait_carry % hz_period_ns;
    if (cg_random64(t->tid) % hz_period_ns < part)
        weight++;
    t->wait_carry = 0;
    uintptr_t pc = t->last_pc ? t->last_pc : t->rec->entry;
    if (weight && pc && !__atomic_load_n(&cg_paused, __ATOMIC_ACQUIRE))
        charge_wait(t, pc, weight);
}

/* Under wall, the calling thread's waiting time so far (its own
 * schedstat) into *TO, + 1: as its sampling begins and as it ends, for
 * sample_waiting and wait_at_end. */
CG_OWN static void own_wait(uint64_t *to)
{
    uint64_t run, wait;
    if (!event || event->kind != CG_EV_WALL)
        return;
    int saved = errno;
    if (schedstat((pid_t)syscall(SYS_gettid), &run, &wait) == 0)
        __atomic_store_n(to, wait + 1, __ATOMIC_RELEASE);
    errno = saved;
}

CG_OWN void cg_sampler_thread_end(struct cg_thread_rec *r)
{
    if (r && __atomic_load_n(&running, __ATOMIC_ACQUIRE))
        own_wait(&r->end_wait);
}

/* The calling thread's own code begins (its start routine, main): under
 * wall, its waiting is counted from here (as the thread's own clocks
 * would count it), not from the runtime's set-up before. */
CG_OWN void cg_sampler_thread_begin(void)
{
    struct cg_thread_rec *r = cg_tls.rec;
    if (r && __atomic_load_n(&running, __ATOMIC_ACQUIRE))
        own_wait(&r->start_wait);
}

/* at_rate: T's period, set at each look to the events it counted since
 * the last look over the samples the rate asks for in that time.  Not
 * the kernel's frequency mode (attr.freq): a few events microseconds
 * apart, as at a thread's start, raise its period there to thousands,
 * and a thread whose events then come slowly is not sampled again for
 * seconds (5 samples in a run of 3,000 faults 200 us apart, where this
 * takes hundreds).  A period that changes by less than a quarter stays
 * (an ioctl per thread per look saved). */
static void rate_adjust(struct tracked *t, uint64_t now)
{
    uint64_t v;
    int fd = t->deep == 1 ? handler_fd(t) : t->fd; /* a deep thread's: its handler event */
    if (!at_rate || fd < 0 || read(fd, &v, sizeof v) != (ssize_t)sizeof v)
        return;
    uint64_t d = v - t->rate_count, dt = now - t->rate_at;
    int first = !t->rate_at;
    t->rate_count = v;
    t->rate_at = now;
    if (first || !d || !dt)
        return; /* no events: the period stays what it was */
    /* events per sample at the rate: d / (hz * dt / 1e9) */
    /* (d < 2^34 in one look: d * 10^9 fits) */
    uint64_t want = d < (1ull << 34) ? d * 1000000000u / dt / start_hz : UINT32_MAX;
    uint64_t p = want < 1 ? 1 : want > UINT32_MAX ? UINT32_MAX : want;
    uint64_t cur = rate_now(t);
    if (p * 4 >= cur * 3 && p * 4 <= cur * 5)
        return;
    int saved = errno;
    if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &p) == 0)
        t->rate_period = p;
    errno = saved;
}

/* at_rate: W events of T no sample weighs, on its last sample's pc and
 * stack (the thread's entry if it has none) -- not while paused: the
 * writer's, left out. */
static void tail_charge(struct tracked *t, uint64_t w)
{
    uintptr_t pc = t->last_pc ? t->last_pc : t->rec ? t->rec->entry : 0;
    if (pc && cg_recording && !__atomic_load_n(&cg_paused, __ATOMIC_ACQUIRE))
        charge_wait(t, pc, w);
}

/* at_rate: T's events since its last sample (its ring drained), which no
 * sample will weigh if the thread ends or the profile is written now:
 * charged to its last sample's pc and stack, so that every event is
 * counted somewhere -- the next sample would have taken them, from
 * wherever it came.  Written while paused: the writer's, left out. */
static void rate_tail(struct tracked *t)
{
    uint64_t v;
    if (!at_rate || t->fd < 0)
        return;
    /* (a deep thread's ring, stopped when it went deep, first) */
    if (read(t->fd, &v, sizeof v) == (ssize_t)sizeof v && v > t->ev_taken) {
        uint64_t w = v - t->ev_taken;
        t->ev_taken = v;
        tail_charge(t, w);
    }
    /* a deep thread: its handler event's, on its last handler sample's stack */
    int h = t->deep == 1 ? handler_fd(t) : -1;
    if (h < 0 || read(h, &v, sizeof v) != (ssize_t)sizeof v)
        return;
    uintptr_t hpc;
    uint32_t hleaf;
    struct cg_stree *htree;
    if (read_last(h, &t->hlast_seen, &hpc, &hleaf, &htree)) {
        t->last_pc = hpc;
        t->last_leaf = hleaf;
        t->last_tree = htree;
    }
    uint64_t w = advance_taken(h, v);
    if (w)
        tail_charge(t, w);
}

static void untrack(size_t i)
{
    struct tracked *t = &trk[i];
    drain(t, 1);
    rate_tail(t);
    if (event && event->kind == CG_EV_WALL && cg_recording)
        wait_at_end(t);
    if (cg_sampler_in_threads())
        watch_blocked(t); /* its last count */
    if (t->rec)
        __atomic_or_fetch(&t->rec->flags, CG_THREAD_ENDED, __ATOMIC_RELEASE);
    close_event(t->fd, t->ring);
    trk[i] = trk[--ntrk];
}

/* Starts tracking TID: with the event its thread opened (FD >= 0), else
 * with one opened here. */
static void track(pid_t tid, int fd, void *ring, int phasing, struct cg_thread_rec *own)
{
    if (ntrk == trk_cap) {
        size_t cap = trk_cap ? trk_cap * 2 : 256;
        struct tracked *n =
            mmap(NULL, cap * sizeof *n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (n == MAP_FAILED) {
            close_event(fd, ring);
            return;
        }
        if (trk) {
            memcpy(n, trk, ntrk * sizeof *n);
            munmap(trk, trk_cap * sizeof *trk);
        }
        trk = n;
        trk_cap = cap;
    }
    struct tracked *t = &trk[ntrk++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->seen = 1;
    t->fd = fd;
    t->ring = ring;
    t->phasing = phasing;
    t->last_leaf = UINT32_MAX;
    t->blk_leaf = UINT32_MAX;
    t->k_credit = handler_mode ? cg_random64(tid) % perf_period : 0;
    t->since = now_ns();
    t->rec = own ? own : event ? cg_thread_rec_of(tid) : NULL;
    if (!event)
        return;
    /* ended since the scan listed it: nothing to open, and its own
     * record says what it was (a new one counted it twice) */
    if (fd < 0 && t->rec && (__atomic_load_n(&t->rec->flags, __ATOMIC_ACQUIRE) & CG_THREAD_ENDED))
        return;
    /* A thread's failed open is counted once, by its record's mark,
     * whoever failed first: the thread itself, or a scan that tried
     * before it did (a scan holds off new threads for HOLD_NS only: 50
     * threads started one after another under sanitizers were counted
     * 51) -- and not at all once it is sampled after all. */
    int rc = fd >= 0 ? 0 : open_event(tid, &t->fd, &t->ring, &t->phasing);
    if (fd < 0)
        note_ring_less(t->rec, t->fd);
    if (rc == 0) {
        if (t->rec && __atomic_exchange_n(&t->rec->open_failed, 0, __ATOMIC_ACQ_REL))
            __atomic_sub_fetch(&self_unsampled, 1, __ATOMIC_RELAXED);
        return;
    }
    note_open_error(rc == -2 && errno == EPERM ? -1 : errno); /* -1: no locked memory */
    if (!t->rec)
        unsampled++; /* (no record left for it) */
    else if (!__atomic_exchange_n(&t->rec->open_failed, 1, __ATOMIC_ACQ_REL))
        __atomic_add_fetch(&self_unsampled, 1, __ATOMIC_RELAXED);
}

/* Takes the events threads opened for themselves. */
static void take_slots(void)
{
    for (size_t i = 0; i < NSLOTS; i++) {
        struct handoff *h = &slots[i];
        if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != SLOT_READY)
            continue;
        pid_t tid = h->tid;
        int fd = h->fd;
        void *ring = h->ring;
        int phasing = h->phasing;
        struct cg_thread_rec *own = h->rec;
        __atomic_store_n(&h->state, SLOT_FREE, __ATOMIC_RELEASE);
        size_t j = 0;
        while (j < ntrk && trk[j].tid != tid)
            j++;
        if (j < ntrk) /* a tid used again: the old thread is gone */
            untrack(j);
        track(tid, fd, ring, phasing, own);
    }
}

/* Finds new threads and forgets finished ones.  A thread found here that
 * may still be about to hand over its own event (one of ours is starting)
 * is left for the next scan, for up to HOLD_NS. */
static void scan(void)
{
    pid_t fresh[512];
    size_t nfresh = 0;
    for (size_t i = 0; i < ntrk; i++)
        trk[i].seen = 0;
    /* the runtime's reserve is this directory, open: read where it is,
     * so that with every descriptor taken (RLIMIT_NOFILE: one event per
     * thread) the events of threads gone are still closed */
    int dir = cg_reserve_borrow();
    if (dir < 0)
        return;
    char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            const char *name = buf + off + 19; /* d_ino 8, d_off 8, d_reclen 2, d_type 1 */
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, 2);
            off += reclen;
            pid_t tid = 0;
            for (const char *p = name; *p >= '0' && *p <= '9'; p++)
                tid = tid * 10 + (*p - '0');
            if (tid <= 0 || tid == sampler_tid)
                continue;
            size_t i = 0;
            while (i < ntrk && trk[i].tid != tid)
                i++;
            if (i < ntrk)
                trk[i].seen = 1;
            else if (nfresh < sizeof fresh / sizeof fresh[0])
                fresh[nfresh++] = tid;
        }
    }
    cg_reserve_return(dir);
    /* in this order: a thread listed above whose creator counted it in
     * `starting` either still counts (and waits) or has put its event in
     * a slot before it stopped counting, and take_slots finds it */
    int waiting = __atomic_load_n(&starting, __ATOMIC_SEQ_CST) > 0;
    take_slots();
    uint64_t now = now_ns();
    if (!waiting)
        hold_since = 0;
    else if (!hold_since)
        hold_since = now;
    int hold = waiting && now - hold_since < HOLD_NS;
    for (size_t k = 0; k < nfresh; k++) {
        size_t i = 0;
        while (i < ntrk && trk[i].tid != fresh[k])
            i++;
        if (i < ntrk)
            trk[i].seen = 1;
        else if (hold)
            __atomic_store_n(&rescan, 1, __ATOMIC_RELEASE); /* look again soon */
        else
            track(fresh[k], -1, NULL, 0, NULL);
    }
    for (size_t i = 0; i < ntrk; i++)
        if (trk[i].seen && trk[i].rec)
            cg_thread_rec_refresh(trk[i].rec); /* last CPU time, before it may go */
    /* closing an event costs some 15 us: between batches of them, the
     * live threads' rings are drained, so they cannot fill meanwhile */
    unsigned closed = 0;
    for (size_t i = 0; i < ntrk;) {
        if (trk[i].seen) {
            i++;
            continue;
        }
        untrack(i);
        if (++closed % 64 == 0)
            for (size_t j = 0; j < ntrk; j++)
                if (trk[j].seen)
                    drain(&trk[j], 0);
    }
}

static int parse_hex(const char *p, uintptr_t *v)
{
    if (p[0] != '0' || p[1] != 'x')
        return -1;
    uintptr_t x = 0;
    for (p += 2; *p && *p != '\n'; p++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        x = x * 16 + (uintptr_t)d;
    }
    *v = x;
    return 0;
}

/* Reads /proc/self/task/TID/FILE into BUF (NUL-terminated); its length,
 * or -1.  No allocation, no stdio: the sampler thread may not use them. */
static ssize_t read_task(pid_t tid, const char *file, char *buf, size_t cap)
{
    char path[64], num[24];
    char *p = path;
    const char *parts[3] = {"/proc/self/task/", cg_utoa((uint64_t)tid, num + sizeof num), file};
    for (int i = 0; i < 3; i++)
        for (const char *s = parts[i]; *s; s++)
            *p++ = *s;
    *p = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n >= 0)
        buf[n] = '\0';
    return n;
}

/* TID's /proc/self/task/TID/schedstat: its time on a CPU and its time
 * runnable but waiting for one, in ns.  0, or -1 if it cannot be read. */
static int schedstat(pid_t tid, uint64_t *run, uint64_t *wait)
{
    char buf[128];
    if (read_task(tid, "/schedstat", buf, sizeof buf) <= 0)
        return -1;
    const char *p = buf;
    uint64_t v[2] = {0, 0};
    for (int i = 0; i < 2; i++, p++) {
        if (*p < '0' || *p > '9')
            return -1;
        for (; *p >= '0' && *p <= '9'; p++)
            v[i] = v[i] * 10 + (uint64_t)(*p - '0');
        if (*p != ' ' && i == 0)
            return -1;
    }
    *run = v[0];
    *wait = v[1];
    return 0;
}

/* The CPU time TID has run, in ns, or 0 if unknown. */
static uint64_t task_runtime(pid_t tid)
{
    uint64_t run, wait;
    return schedstat(tid, &run, &wait) == 0 ? run : 0;
}

/* wall: time a thread spent runnable but waiting for a CPU (the second
 * field of /proc/self/task/TID/schedstat, in ns) is real time no clock
 * sample sees: it is charged, in samples of the rate, to where the thread
 * was last seen -- a preempted thread stands where it last ran, a woken
 * one where it slept. */
static void sample_waiting(struct tracked *t)
{
    uint64_t run, wait;
    if (schedstat(t->tid, &run, &wait) != 0)
        return;
    add_wait(t, wait);
    /* a thread sampled by its handler event: where that was last */
    int h = handler_fd(t);
    uintptr_t hpc;
    uint32_t hleaf;
    struct cg_stree *htree;
    if (h >= 0 && read_last(h, &t->hlast_seen, &hpc, &hleaf, &htree)) {
        t->last_pc = hpc;
        t->last_leaf = hleaf;
        t->last_tree = htree;
    }
    if (!t->last_pc)
        return;
    uint64_t weight = t->wait_carry / hz_period_ns;
    uint64_t late = t->deep == 1 ? wall_late(t) : 0; /* (its ring's samples: in drain) */
    if (!(weight + late))
        return;
    t->wait_carry -= weight * hz_period_ns;
    charge_wait(t, t->last_pc, weight + late);
}

/* Reads N bytes of this process's memory at A into TO, page by page, so
 * that a read running past the stack's end still returns the pages
 * before it: the bytes read. */
static size_t read_mem(uintptr_t a, unsigned char *to, size_t n)
{
    size_t done = 0;
    while (done < n) {
        struct iovec local = {to + done, n - done}, remote[64];
        int nr = 0;
        for (uintptr_t x = a + done; x < a + n && nr < 64; nr++) {
            uintptr_t end = (x | (page - 1)) + 1;
            if (end > a + n)
                end = a + n;
            remote[nr].iov_base = (void *)x;
            remote[nr].iov_len = end - x;
            x = end;
        }
        ssize_t got = process_vm_readv(getpid(), &local, 1, remote, (unsigned long)nr, 0);
        if (got <= 0)
            break;
        done += (size_t)got;
        size_t asked = 0;
        for (int i = 0; i < nr; i++)
            asked += remote[i].iov_len;
        if ((size_t)got < asked)
            break; /* the stack's end */
    }
    return done;
}

#define BLOCKED_COPY_MAX (1u << 20) /* a blocked thread's stack read, at most */

/* wall: a thread blocked in the kernel counts one tick at its user pc,
 * with its stack: read while it is blocked, 8 KB and then more (64 KB,
 * 512 KB, 1 MB) while the walk runs past what was read, whole to the
 * depth limit where it fits.  Its CPU run time, read before and after,
 * must not have moved (a thread that ran meanwhile would give a stack of
 * two moments: its pc alone, marked cut); and while it has not run since
 * the last look, and waits at the same pc and sp, its stack is the one
 * read then, not read again. */
static void sample_blocked(struct tracked *t, uint64_t weight)
{
    char buf[256];
    uint64_t run = cg_stacks_on ? task_runtime(t->tid) : 0;
    ssize_t n = read_task(t->tid, "/syscall", buf, sizeof buf);
    if (n <= 0 || buf[0] == 'r') /* "running": its cpu-clock samples it */
        return;
    /* "nr args... sp pc", or "-1 sp pc" outside a system call */
    char *last = strrchr(buf, ' ');
    if (!last)
        return;
    *last = '\0';
    char *prev = strrchr(buf, ' ');
    uintptr_t pc = 0, sp = 0;
    if (!prev || parse_hex(last + 1, &pc) != 0 || parse_hex(prev + 1, &sp) != 0)
        return;
    count(t, pc, weight);
    unsigned max;
    uintptr_t *frames = frames_for(&max);
    if (!cg_stacks_on || !stree)
        return;
    if (run && run == t->blk_run && pc == t->blk_pc && sp == t->blk_sp &&
        t->blk_leaf != UINT32_MAX && t->blk_tree == stree) { /* it has not run since */
        cg_stree_count(stree, t->blk_leaf, weight);
        t->last_leaf = t->blk_leaf;
        t->last_tree = stree;
        return;
    }
    static unsigned char small[STACK_COPY];
    static unsigned char *big;
    if (!big && run) {
        void *b = mmap(NULL, BLOCKED_COPY_MAX, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        big = b == MAP_FAILED ? NULL : b;
    }
    /* without its run time (no schedstat) a thread could have run during
     * a longer read: the first 8 KB only, as perf's copies */
    unsigned char *copy = big && run ? big : small;
    size_t cap = copy == big ? BLOCKED_COPY_MAX : STACK_COPY;
    struct cg_regs r = {pc, sp, 0, 0, 0, 0}; /* rbp (and the link register) not known */
    size_t have = 0, want = STACK_COPY;
    unsigned nf;
    int cut;
    for (;;) {
        have += read_mem(sp + have, copy + have, want - have);
        struct cg_mem m = {sp, sp + have, copy, 1, 0};
        nf = walk(&r, &m, frames, max, &cut);
        if (!cut || nf >= max || have < want || want >= cap)
            break;
        want = want * 8 < cap ? want * 8 : cap;
    }
    if (run && task_runtime(t->tid) != run) { /* it ran meanwhile */
        nf = nf ? 1 : 0;
        cut = 1;
    }
    uint32_t leaf = cg_stree_add(stree, frames, nf, cut, weight);
    t->last_leaf = leaf;
    t->last_tree = stree;
    t->blk_leaf = leaf;
    t->blk_tree = stree;
    t->blk_run = run;
    t->blk_pc = pc;
    t->blk_sp = sp;
}

/* The sampler's loop.  It wakes at random intervals averaging tick_ns
 * (uniform in [0.5, 1.5) ticks), so its looks at blocked threads cannot
 * lock onto a program's own period; a blocked thread found at a look is
 * credited with the time since the previous look, in samples of the
 * rate: on average exactly the time it spent blocked. */
/* Our signal, taken by the sampler (every signal is blocked here): a
 * ring event's first overflow, whose first period ends now; a writer's
 * flush request (tgkill, cg_sampler_flush); or the program's own use of
 * the signal, sent to the process and not to us, which goes back to the
 * process -- with its siginfo where the kernel lets a thread queue it
 * (si_code < 0: sigqueue, timers), else as kill() -- while the sampler
 * sleeps on the futex alone for 100 ms, so that the program's threads
 * take it. */
static uint64_t sig_backoff; /* until then, no sigtimedwait */

static int take_sig(const siginfo_t *si)
{
    if (si->si_code > 0) { /* from a descriptor */
        int fd = si->si_fd;
        if (fd >= 0 && fd < PHASE_FDS && __atomic_load_n(&phased[fd], __ATOMIC_ACQUIRE) == 1 &&
            !__atomic_load_n(&hev[fd], __ATOMIC_ACQUIRE)) {
            end_phase(fd);
            return 1;
        }
        return 0; /* or a late one, for an event closed since */
    }
    if (si->si_code == SI_TKILL && si->si_pid == getpid())
        return 0; /* a writer's wake-up */
    siginfo_t copy = *si;
    if (si->si_code >= 0 || si->si_code == SI_TKILL ||
        syscall(SYS_rt_sigqueueinfo, getpid(), cg_sample_sig, &copy) != 0)
        kill(getpid(), cg_sample_sig);
    sig_backoff = now_ns() + 100000000u;
    return 0;
}

/* Sleeps WAIT ns, until the next look, or until a writer asks for a
 * flush; takes our signal meanwhile (take_sig).  A first period's end
 * also ends the sleep (at most once a millisecond): its ring may be full
 * of the first period's samples, taken at its pace until now, and the
 * samples at the rate from now on need the room (drain). */
static uint64_t last_early;

static void sleep_tick(uint64_t wait)
{
    unsigned seen = __atomic_load_n(&flush_req, __ATOMIC_ACQUIRE);
    uint64_t now = now_ns(), until = now + wait;
    if (!cg_sample_sig || now < sig_backoff) {
        struct timespec ts = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
        if (seen == __atomic_load_n(&flush_done, __ATOMIC_ACQUIRE))
            syscall(SYS_futex, &flush_req, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
        return;
    }
    sigset_t ours;
    sigemptyset(&ours);
    sigaddset(&ours, cg_sample_sig);
    while (seen == __atomic_load_n(&flush_done, __ATOMIC_ACQUIRE) && now < until &&
           now >= sig_backoff) {
        uint64_t left = until - now;
        struct timespec ts = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
        siginfo_t si;
        int s = (int)syscall(SYS_rt_sigtimedwait, &ours, &si, &ts, (size_t)(_NSIG / 8));
        now = now_ns();
        if (s == cg_sample_sig && take_sig(&si) && now - last_early >= 1000000u) {
            last_early = now;
            return;
        }
        if (s < 0 && errno != EINTR)
            return; /* EAGAIN: the time is up */
        if (__atomic_load_n(&flush_req, __ATOMIC_ACQUIRE) != seen)
            return;
    }
}

static void *sampler_main(void *arg)
{
    (void)arg;
    __atomic_store_n(&sampler_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    syscall(SYS_futex, &sampler_tid, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
    prctl(PR_SET_NAME, "cgprof-helper"); /* what the program sees of it */
    uint64_t last = now_ns(), last_scan = 0, carry = 0;
    uint64_t rng = last ^ 0x9E3779B97F4A7C15ull;
    for (;;) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        uint64_t wait = tick_ns / 2 + rng % tick_ns;
        sleep_tick(wait);
        uint64_t now = now_ns();
        carry += now - last;
        last = now;
        uint64_t weight = carry / hz_period_ns;
        carry -= weight * hz_period_ns;
        unsigned req = __atomic_load_n(&flush_req, __ATOMIC_ACQUIRE);
        int flushing = req != __atomic_load_n(&flush_done, __ATOMIC_RELAXED);
        if (flushing)
            weight = carry = 0; /* the writer waits for us: not blocked time of its own */
        /* a walk met code in no known module or without its unwind table
         * yet (a dlopen since the last look): look again now */
        if (__atomic_exchange_n(&cg_modules_stale, 0, __ATOMIC_ACQ_REL))
            cg_modules_snapshot();
        if (now - last_scan >= SCAN_NS || __atomic_exchange_n(&rescan, 0, __ATOMIC_ACQ_REL)) {
            for (size_t i = 0; event && i < ntrk; i++) {
                drain(&trk[i], 0); /* before a scan's slower work */
                if (cg_sampler_in_threads())
                    watch_blocked(&trk[i]);
            }
            if (event)
                scan();
            if (now - last_scan >= SCAN_NS)
                cg_modules_snapshot();
            __atomic_store_n(&cg_modules_stale, 0, __ATOMIC_RELAXED);
            last_scan = now;
        }
        for (size_t i = 0; i < ntrk; i++) {
            drain(&trk[i], 0);
            rate_adjust(&trk[i], now);
            if (event && event->kind == CG_EV_WALL && cg_recording &&
                !__atomic_load_n(&cg_paused, __ATOMIC_ACQUIRE)) {
                if (weight)
                    sample_blocked(&trk[i], weight);
                sample_waiting(&trk[i]);
            }
        }
        if (flushing) {
            if (event)
                scan();
            for (size_t i = 0; i < ntrk; i++) {
                drain(&trk[i], 1);
                rate_tail(&trk[i]);
                if (cg_sampler_in_threads())
                    watch_blocked(&trk[i]);
            }
            __atomic_store_n(&flush_done, req, __ATOMIC_RELEASE);
            syscall(SYS_futex, &flush_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
        }
        cg_helper_tick(now); /* writes asked for, checkpoints (endings.c) */
    }
    return NULL;
}

/* Whether EV is sampled at a rate though it counts events: a counting
 * event with no period given (-c), sampled at HZ (profile.c writes its
 * period as 0: each sample has its own weight). */
int cg_sampler_at_rate(const struct cg_event *ev, unsigned hz, uint64_t period)
{
    return ev && ev->kind == CG_EV_PERF && !ev->is_time && !period && hz;
}

int cg_sampler_start(const struct cg_event *ev, unsigned hz, uint64_t period)
{
    if (__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        return 0; /* started already (for checkpoints, or the own format) */
    event = ev;
    start_hz = hz;
    start_period = period;
    page = (size_t)sysconf(_SC_PAGESIZE);
    uint64_t hz_ns = 1000000000u / (hz ? hz : 1000);
    int timed = !ev || ev->kind == CG_EV_WALL || ev->is_time;
    time_event = ev && timed;
    with_chain = cg_kernel_frames && cg_stacks_on && ev && (ev->kind == CG_EV_WALL || ev->is_time);
    /* a counting event without a period (-c): at the rate, as perf
     * record samples it, each sample weighted by its count (docs/events.md) */
    at_rate = cg_sampler_at_rate(ev, hz, period);
    cg_reserve_take(); /* for the scan, when the program's threads take every descriptor */
    perf_period = timed ? hz_ns : period ? period : ev->period;
    sample_weight = timed || at_rate ? 1 : perf_period;
    /* a look every 10 ms; above 1 kHz more often (not below 1 ms), so a
     * ring holds the samples between two looks */
    tick_ns = hz > 1000 ? 10000000000u / hz : 10000000u;
    /* nothing to drain and no walk waiting for a module snapshot (counts
     * only, or the cpu and itimer events without stacks): it wakes only
     * for the module list, checkpoints and thread checks, every 100 ms or
     * the checkpoint interval if shorter (each wake-up is a timer
     * interrupt: tens of us on VMs, docs/runtime.md) */
    if (!ev && !(hz && cg_stacks_on)) {
        uint64_t cp = cg_checkpoint_ns();
        tick_ns = cp && cp < SCAN_NS ? cp : SCAN_NS;
    }
    if (tick_ns < 1000000u)
        tick_ns = 1000000u;
    /* stacks walked by the sampled threads themselves, in our signal's
     * handler (CGPROF_STACK_SYNC=0: from the copies only, to compare) */
    /* (a signal at every sample: not above HANDLER_MAX_HZ, whatever the
     * mode asked for -- above it the threads keep their copies) */
    /* (at_rate: a sample's weight is in its record; a thread's own walk
     * has none, so such threads keep their copies) */
    sync_stacks = cg_stacks_on && cg_stacks_sync == 1 && ev && cg_sample_sig &&
                  hz <= HANDLER_MAX_HZ && !at_rate;
    handler_mode = cg_stacks_sync == 2 && ev && ev->kind == CG_EV_PERF && ev->is_time && hz &&
                   hz <= HANDLER_MAX_HZ && cg_sample_sig;
    /* by default, threads deeper than their copies go to handler events */
    /* (a counting event's rate with -c is not known: go_deep measures
     * it; without, it is the rate asked, as a time event's) */
    deep_switch = cg_stacks_on && cg_stacks_sync == 3 && ev &&
                  (ev->kind == CG_EV_WALL || ev->kind == CG_EV_PERF) &&
                  ((!timed && !at_rate) || (hz && hz <= HANDLER_MAX_HZ)) && cg_sample_sig;
    /* beside handler events, a time event's kernel samples say where the
     * kernel was entered from (in_signal_path) */
    chain_rec = with_chain || (time_event && (handler_mode || deep_switch));
    if (chain_rec && !irqw_lo)
        find_irq_work_entry();
    /* at most CHAIN_MAX (rec's room), and no more than the system's
     * limit, which the kernel refuses to exceed */
    chain_max = CHAIN_MAX;
    char lim[32];
    int lf = chain_rec ? open("/proc/sys/kernel/perf_event_max_stack", O_RDONLY | O_CLOEXEC) : -1;
    if (lf >= 0) {
        ssize_t got = read(lf, lim, sizeof lim - 1);
        close(lf);
        unsigned v = 0;
        for (ssize_t i = 0; i < got && lim[i] >= '0' && lim[i] <= '9'; i++)
            v = v * 10 + (unsigned)(lim[i] - '0');
        if (got > 0 && v < chain_max)
            chain_max = (uint16_t)v;
    }
    stack_copy = cg_stacks_on                                    ? STACK_COPY
                 : ev && (ev->kind == CG_EV_WALL || ev->is_time) ? SMALL_COPY
                                                                 : 0;
    /* a ring holds two ticks' samples at the rate, and at least 20 ms'
     * (a sampler kept off its CPU that long by a busy machine loses none:
     * at 10 kHz with stacks two looks' worth was 3 ms, and a loaded
     * 2-CPU machine lost 52 of 6,000); a counting event's rate is
     * unknown: as many as 16 pages hold; 16 to 512 pages */
    uint64_t size = 24 + (stack_copy ? 48 + stack_copy : 0);
    int rated = timed || at_rate;
    uint64_t per_tick = rated ? tick_ns / hz_ns + 1 : 0;
    uint64_t want = 2 * per_tick * size, busy = rated ? (20000000u / hz_ns + 1) * size : 0;
    if (want < busy)
        want = busy;
    ring_pages = cg_stacks_on ? 64 : 16;
    while (ring_pages < 512 && ring_pages * page < want)
        ring_pages *= 2;
    hz_period_ns = hz_ns;
    ntrk = 0;
    cg_create_fn real = cg_real_pthread_create();
    if (!real)
        return -1;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_t th;
    __atomic_store_n(&sampler_tid, 0, __ATOMIC_RELEASE);
    int rc = real(&th, &attr, sampler_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* its thread id, before any event is opened: their first overflows
     * signal it (open_event) */
    for (int i = 0; rc == 0 && i < 1000 && !__atomic_load_n(&sampler_tid, __ATOMIC_ACQUIRE); i++) {
        struct timespec ts = {0, 1000000};
        syscall(SYS_futex, &sampler_tid, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    }
    if (rc == 0)
        __atomic_store_n(&running, 1, __ATOMIC_RELEASE);
    return rc == 0 ? 0 : -1;
}

int cg_sampler_running(void)
{
    return __atomic_load_n(&running, __ATOMIC_ACQUIRE);
}

int cg_sampler_here(void)
{
    return running && syscall(SYS_gettid) == sampler_tid;
}

void cg_sampler_thread_created(void)
{
    __atomic_store_n(&rescan, 1, __ATOMIC_RELEASE);
}

/* A thread is about to start (+1) and will hand over its own event, or
 * has (-1): scans leave new threads alone meanwhile. */
void cg_sampler_expect(int delta)
{
    __atomic_add_fetch(&starting, delta, __ATOMIC_SEQ_CST);
}

/* The calling thread opens its own event, so that it is sampled from now
 * on, and hands it to the sampler.  Not in a signal handler. */
CG_OWN void cg_sampler_thread_open(void)
{
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE) || !event)
        return;
    int saved = errno;
    uint64_t t0 = cg_thread_cpu_ns();
    pid_t tid = (pid_t)syscall(SYS_gettid);
    /* its record first: a handler event's first sample may come at once */
    struct cg_thread_rec *own = cg_thread_rec_self();
    int fd, phasing;
    void *ring;
    int rc = open_event(tid, &fd, &ring, &phasing);
    __atomic_add_fetch(&start_cpu_ns, cg_thread_cpu_ns() - t0, __ATOMIC_RELAXED);
    note_ring_less(own, fd);
    if (rc == 0) { /* the loader's and constructors' time, for the main thread */
        __atomic_add_fetch(&before_cpu_ns, t0, __ATOMIC_RELAXED);
        if (own) /* its CPU time is final when it ends */
            own->base_ns = t0;
    }
    if (rc != 0) {
        /* the sampler's scan tries again; counted unsampled now, in case
         * the thread is gone before a scan sees it (512 short threads
         * under `ulimit -n 300`: most ended unseen and uncounted) */
        note_open_error(rc == -2 && errno == EPERM ? -1 : errno);
        if (own && !__atomic_exchange_n(&own->open_failed, 1, __ATOMIC_ACQ_REL))
            __atomic_add_fetch(&self_unsampled, 1, __ATOMIC_RELAXED);
        errno = saved;
        return;
    }
    for (size_t i = 0; i < NSLOTS; i++) {
        int free_ = SLOT_FREE;
        struct handoff *h = &slots[i];
        if (!__atomic_compare_exchange_n(&h->state, &free_, SLOT_FILLING, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED))
            continue;
        h->tid = tid;
        h->fd = fd;
        h->ring = ring;
        h->phasing = phasing;
        h->rec = own;
        __atomic_store_n(&h->state, SLOT_READY, __ATOMIC_RELEASE);
        __atomic_store_n(&rescan, 1, __ATOMIC_RELEASE);
        errno = saved;
        return;
    }
    close_event(fd, ring); /* every slot taken: the sampler's scan opens it */
    errno = saved;
}

/* Wakes the sampler and waits (up to 200 ms) until it has drained every
 * ring buffer.  futex: no file descriptor, async-signal-safe. */
CG_OWN void cg_sampler_flush(void)
{
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE) || syscall(SYS_gettid) == sampler_tid)
        return;
    unsigned req = __atomic_add_fetch(&flush_req, 1, __ATOMIC_ACQ_REL);
    syscall(SYS_futex, &flush_req, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    pid_t to = __atomic_load_n(&sampler_tid, __ATOMIC_ACQUIRE);
    if (cg_sample_sig && to > 0) /* it may sleep in sigtimedwait (sleep_tick) */
        syscall(SYS_tgkill, getpid(), to, cg_sample_sig);
    for (int i = 0; i < 200; i++) {
        unsigned done = __atomic_load_n(&flush_done, __ATOMIC_ACQUIRE);
        if ((int)(done - req) >= 0)
            return;
        struct timespec ts = {0, 1000000};
        syscall(SYS_futex, &flush_done, FUTEX_WAIT_PRIVATE, done, &ts, NULL, 0);
    }
}

uint64_t cg_sampler_start_cpu_ns(void)
{
    return __atomic_load_n(&start_cpu_ns, __ATOMIC_RELAXED);
}

void cg_sampler_add_before(uint64_t ns)
{
    __atomic_add_fetch(&before_cpu_ns, ns, __ATOMIC_RELAXED);
}

int cg_sampler_kernel_denied(void)
{
    return __atomic_load_n(&kernel_denied, __ATOMIC_RELAXED);
}

uint64_t cg_sampler_late_ns(void)
{
    int64_t v = __atomic_load_n(&late_ns, __ATOMIC_RELAXED);
    return v > 0 ? (uint64_t)v : 0;
}

uint64_t cg_sampler_before_cpu_ns(void)
{
    return __atomic_load_n(&before_cpu_ns, __ATOMIC_RELAXED);
}

/* At a rate: how often the kernel throttled a counting event (its events
 * meanwhile not counted). */
uint64_t cg_sampler_throttled(void)
{
    return __atomic_load_n(&throttled, __ATOMIC_RELAXED);
}

uint64_t cg_sampler_unsampled(int err[2])
{
    err[0] = __atomic_load_n(&perf_errno[0], __ATOMIC_RELAXED);
    err[1] = __atomic_load_n(&perf_errno[1], __ATOMIC_RELAXED);
    return unsampled + __atomic_load_n(&self_unsampled, __ATOMIC_RELAXED);
}

/* In a fork child the sampler is gone and its descriptors watch the
 * parent's threads: drop them and start again. */
void cg_sampler_after_fork(void)
{
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        return;
    running = 0;
    /* the parent's handler events are shared with it: closed, not disabled */
    memset(hev, 0, sizeof hev);
    cg_tls.hev_fd = 0;
    for (size_t i = 0; i < ntrk; i++)
        close_event(trk[i].fd, trk[i].ring);
    for (size_t i = 0; i < NSLOTS; i++)
        if (slots[i].state == SLOT_READY)
            close_event(slots[i].fd, slots[i].ring);
    memset(slots, 0, sizeof slots);
    ntrk = 0;
    table = NULL;
    stree = NULL;
    unsampled = 0;
    self_unsampled = 0;
    throttled = 0;
    perf_errno[0] = perf_errno[1] = 0;
    flush_req = flush_done = 0;
    start_cpu_ns = 0;
    before_cpu_ns = 0;
    late_ns = 0;
    ring_less = 0;
    deep_handlers = 0;
    execing = 0;
    starting = 1; /* this thread, below */
    hold_since = 0;
    if (cg_sampler_start(event, start_hz, start_period) == 0) {
        cg_sampler_thread_open();
        cg_sampler_thread_begin();
    }
    starting = 0;
}

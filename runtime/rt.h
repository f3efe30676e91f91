/* Internal declarations shared by the libcgprof runtime's files. */
#ifndef CGPROF_RT_H
#define CGPROF_RT_H

#include "arch.h" /* runtime/arch/$(ARCH)/ */
#include "archash.h"
#include "events.h"

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Everything not named in runtime/exports.map is hidden; this makes it so
 * at compile time too, so calls between our files need no PLT. */
#define CG_HIDDEN __attribute__((visibility("hidden")))

/* The runtime's own code that runs on program threads while they are
 * sampled by perf events (opening a thread's event, ending its first
 * period): a sample whose stack passes through it is the runtime's time.
 * The linker marks the section's bounds. */
#define CG_OWN __attribute__((section("cgprof_own"), noinline))
extern const char __start_cgprof_own[] CG_HIDDEN, __stop_cgprof_own[] CG_HIDDEN;

/* Multiplier of the stack-node hash (Fibonacci hashing). */
#define CG_HASH_MUL 0x9E3779B97F4A7C15ull

/* Multiplier of the arc hash, CG_ARC_MUL32 sign-extended (archash.h). */
#define CG_ARC_MUL ((uint64_t)(int64_t)CG_ARC_MUL32)

/* One slot of a thread's arc table: the arc's key and its count, in one
 * half cache line, so that counting a call touches one line.  A slot is
 * empty while self == 0 (no function starts at address 0). */
struct cg_slot {
    uintptr_t from;
    uintptr_t self;  /* written last, with release order, when filled */
    uint64_t count;  /* changed only by its own thread, one instruction at a time */
    uint64_t unused; /* pads the slot to 32 bytes */
};

/* One generation of a table: an open-addressing array of 2^k slots.  When
 * it is half full, a new generation twice its size is made holding the
 * same keys with zero counts, and becomes current.  Old generations keep
 * the counts they gathered and are never unmapped: a call counted into
 * one by a fast path that a signal handler interrupted is still counted,
 * and the writer sums an arc over all generations.
 *
 * The header is 32 bytes, so that a generation (mapped page-aligned) has
 * every slot in one cache line.  `budget` counts down the slots the fast
 * path looked at beyond an arc's home slot in this generation; when it
 * reaches zero the slow path lays the keys out again, hottest first
 * (cg_table_relayout).  mcount.S reads it at slots - 16, and bmask at
 * slots - 8: the slots and their mask come from one generation. */
struct cg_gen {
    struct cg_gen *older;
    uint64_t nslots;
    int64_t budget; /* probes left before a relayout (fast path: one subq) */
    uint64_t bmask; /* (nslots - 1) * sizeof(struct cg_slot): byte offsets */
    struct cg_slot slots[];
};
#define CG_PROBE_BUDGET (1 << 20)

/* Per-thread arc table.  It outlives its thread: on thread exit it is
 * released (in_use = 0) and the next new thread adopts it, counts and all,
 * since counts of one arc are simply summed.  It is never unmapped, so the
 * writer can read every table of every thread at any time. */
struct cg_table {
    struct cg_table *next; /* registry list; entries are never removed */
    int in_use;            /* atomic: 1 while a live thread owns it */
    struct cg_gen *gen;    /* current generation (atomic pointer) */
    uint64_t nkeys;        /* keys in the current generation */
    uint64_t lost;         /* calls not recorded for want of memory */
    int capped;            /* an arc table: its memory counts against CGPROF_ARC_MEMORY */
};

/* A list of tables of one kind (atomic head; tables are never removed). */
struct cg_registry {
    struct cg_table *head;
};

#define CG_PENDING 32 /* nested calls queued while the slow path is busy */

struct cg_stree;

/* Thread-local state: the one field the entry stubs read first, then the rest.
 * Initial-exec TLS: one %fs-relative load, no __tls_get_addr. */
struct cg_tls {
    struct cg_slot *slots;    /* the current generation's slots (its header before them) */
    int busy;                 /* inside cg_arc_slow: nested calls go to pending */
    struct cg_table *table;   /* this thread's arcs */
    struct cg_table *samples; /* this thread's samples (SIGPROF handler only) */
    unsigned npending;        /* atomic: calls seen while busy (signal handlers) */
    uintptr_t pending[CG_PENDING][2];
    int timer_on;              /* 1: running, -1: timer_create failed, 0: not tried */
    struct cg_thread_rec *rec; /* this thread's totals */
    int key_set;
    void *timer;                  /* timer_t */
    struct cg_stree *stree;       /* this thread's sampled stacks (handler only) */
    uintptr_t stack_lo, stack_hi; /* its stack, if known: read directly when unwinding */
    unsigned table_retry; /* no arc table (CGPROF_ARC_MEMORY): calls lost before trying again */
    int in_runtime;    /* writing the profile: its samples are the runtime's, not the program's */
    int hev_fd;        /* its handler event (sampler.c) + 1, and its count at */
    uint64_t hev_last; /* its first sample, until the second */
};

extern __thread struct cg_tls cg_tls __attribute__((tls_model("initial-exec"))) CG_HIDDEN;
/* A generation of two empty slots, where a thread's slots point before it
 * has a table: its first call misses and reaches cg_arc_slow. */
extern struct cg_slot *const cg_empty_slots CG_HIDDEN;

/* Global switches and configuration, set up once by cg_init. */
extern int cg_recording CG_HIDDEN; /* moncontrol(): 0 stops arcs and samples */
/* Set while the profile is written: samples are not taken, so the writer's
 * own work is not the program's time, and samples and stacks stay in step. */
extern int cg_paused CG_HIDDEN;
extern int cg_sampling_inflight CG_HIDDEN;        /* signal handlers taking a sample now */
extern unsigned cg_hz CG_HIDDEN;                  /* sampling rate, 0 = no sampling */
extern const struct cg_event *cg_event CG_HIDDEN; /* what is sampled; NULL: nothing */
extern uint64_t cg_period CG_HIDDEN;              /* CGPROF_PERIOD, 0: the event's default */
/* Set once the program shows it was built with -pg (gcrt1's __monstartup
 * or a first mcount); a process without it writes no profile, so that a
 * shell or tool started by a profiled program leaves gmon.out alone. */
extern int cg_instrumented CG_HIDDEN;

/* modules.c: what is mapped where */
#define CG_PATH_MAX     1024
#define CG_MOD_MAIN     1u
#define CG_MOD_VDSO     2u
#define CG_MOD_UNLOADED 4u
struct cg_cfi;
struct cg_module {
    char path[CG_PATH_MAX];
    struct cg_cfi *cfi;     /* unwind table (atomic; built once, never freed) */
    uintptr_t eh_hdr;       /* run-time address of .eh_frame_hdr, or 0 */
    uintptr_t eh_lo, eh_hi; /* the mapped segment holding it */
    uintptr_t bias;         /* load bias: pc - bias is the link-time address */
    uintptr_t lo, hi;       /* mapped range of its PT_LOAD segments */
    unsigned flags;
    unsigned seen;       /* snapshot that last saw it */
    unsigned load_gen;   /* cg_mod_gen when it was first seen mapped */
    unsigned unload_gen; /* cg_mod_gen from which it was gone (UINT_MAX: mapped) */
    unsigned build_id_len;
    unsigned char build_id[32];
};
void cg_modules_snapshot(void) CG_HIDDEN;
void cg_modules_after_fork(void) CG_HIDDEN;
const struct cg_module *cg_modules(unsigned *n) CG_HIDDEN;
int cg_module_of(uintptr_t pc) CG_HIDDEN;
/* Code can be unmapped (dlclose) and other code mapped at the same
 * addresses, so a pc alone does not say which module ran.  cg_mod_gen
 * counts the dlcloses; every pc the runtime keeps for later (samples,
 * stack frames) carries the generation it was taken in, in the bits above
 * 48 that no user-space code address uses, and is named by the module
 * mapped there in that generation (cg_module_at). */
extern unsigned cg_mod_gen CG_HIDDEN;
#define CG_GEN_SHIFT 48
#define CG_GEN_MAX   0xFFFEu /* 0xFFFF above bit 48: an untagged kernel-half address */
#define CG_PC_MASK   (((uintptr_t)1 << CG_GEN_SHIFT) - 1)
static inline uintptr_t cg_pc_tag(uintptr_t pc)
{
    unsigned g = __atomic_load_n(&cg_mod_gen, __ATOMIC_RELAXED);
    if (g == 0 || pc > CG_PC_MASK)
        return pc;
    return pc | (uintptr_t)(g < CG_GEN_MAX ? g : CG_GEN_MAX) << CG_GEN_SHIFT;
}
int cg_module_at(uintptr_t tagged_pc) CG_HIDDEN;
/* write.c: notes the counts of the arcs into or out of the ranges
 * [LO[k], HI[k]) as made before generation GEN (modules.c, at unmapping) */
void cg_arcs_freeze(const uintptr_t *lo, const uintptr_t *hi, unsigned nranges,
                    unsigned gen) CG_HIDDEN;
void cg_arcs_freeze_reserve(void) CG_HIDDEN; /* before an unmapping: room for every arc */

/* threadlog.c: per-thread totals */
#define CG_THREAD_ENDED      1u
#define CG_THREAD_SIGBLOCKED 2u  /* seen with the sampling signal blocked (the cpu event) */
#define CG_THREAD_FROM_BASE  4u  /* written: its CPU counted from its sampling's start */
#define CG_THREAD_RINGLESS   8u  /* no locked memory for its ring: sampled by a handler event */
#define CG_THREAD_DEEP       16u /* deeper than its stack copies: user mode by a handler event */
struct cg_thread_rec {
    pid_t tid;
    unsigned flags;
    uint64_t samples; /* atomic: samples taken in the thread (weighted) */
    uint64_t cpu_ns;  /* its CPU time: final once ended */
    uint64_t base_ns; /* its CPU time before its sampling began (in RUNTIME's before) */
    uint64_t taken;   /* atomic: signals its handler took as samples (CGPROF_STACK_SYNC=2) */
    /* wall: its time waiting for a CPU (schedstat) when its sampling began
     * and when it ended, + 1; 0 unknown.  Its start routine (threads.c), or 0 */
    uint64_t start_wait, end_wait;
    uintptr_t entry;
    /* atomic: 1 while the thread could not open its own event and the
     * sampler has not opened one for it (counted unsampled meanwhile) */
    int open_failed;
};
struct cg_thread_rec *cg_thread_rec_self(void) CG_HIDDEN;
struct cg_thread_rec *cg_thread_rec_of(pid_t tid) CG_HIDDEN;
void cg_thread_rec_end(void) CG_HIDDEN;
void cg_thread_rec_refresh(struct cg_thread_rec *r) CG_HIDDEN;
int cg_thread_sig_blocked(pid_t tid) CG_HIDDEN; /* our sampling signal blocked in TID (0: this) */
const struct cg_thread_rec *cg_thread_recs(unsigned *n) CG_HIDDEN;
void cg_thread_recs_after_fork(void) CG_HIDDEN;

/* init.c */
void cg_init(void) CG_HIDDEN;

/* libcalls.c: calls from -pg modules through their PLT (docs/libcalls.md) */
void cg_libcalls_init(void) CG_HIDDEN;
void cg_libcalls_rescan(void) CG_HIDDEN;
/* a note in the profile (NOTES record), once per distinct line; callers serialize */
void cg_note(const char *a, const char *b,
             const char *c) CG_HIDDEN; /* after a dlclose: forget what went */

/* signals.c: the sampling signal, deadly signals, sigaction/signal */
extern int cg_sample_sig CG_HIDDEN; /* real-time signal of our timers */
void cg_signals_init(int itimer) CG_HIDDEN;
/* The calling thread's alternate signal stack, where the program has none
 * (signals.c): mapped at its start, unmapped at its exit. */
void cg_altstack_init(void) CG_HIDDEN;
void cg_altstack_exit(void) CG_HIDDEN;
int cg_signals_sample(void (*fn)(int, siginfo_t *, void *)) CG_HIDDEN;
uint64_t cg_runtime_samples(void) CG_HIDDEN;
void cg_runtime_samples_add(uint64_t n) CG_HIDDEN;

/* endings.c: the final write of every ending, exec, checkpoints */
enum { CG_END_EXIT = 1, CG_END_SIGNAL = 2, CG_END_EXEC = 3 };
int cg_write_final(int how) CG_HIDDEN;
void cg_endings_init(void) CG_HIDDEN;
void cg_endings_after_fork(void) CG_HIDDEN;
void cg_helper_start(void) CG_HIDDEN;
void cg_helper_tick(uint64_t now_ns) CG_HIDDEN;
uint64_t cg_checkpoint_ns(void) CG_HIDDEN; /* CGPROF_CHECKPOINT in ns, 0: none */
extern unsigned cg_exec_gen CG_HIDDEN;     /* images of this process before this one */
extern int cg_exec_child CG_HIDDEN;        /* the first image was a forked child */
/* The run this process belongs to: 16 random bytes made by cgprof record
 * (CGPROF_RUN) or by the first profiled process, kept by forked children
 * and passed on to exec'd images, written in the profile (record RUN). */
extern unsigned char cg_run_id[16] CG_HIDDEN;
struct cg_runtime_cost {
    uint64_t helper_cpu_ns; /* the runtime's own thread */
    uint64_t write_cpu_ns;  /* program threads writing the profile themselves */
    uint64_t writes;        /* profile writes, checkpoints included */
    uint64_t samples;       /* samples that found a thread in the runtime */
    uint64_t start_cpu_ns;  /* program threads opening their own events */
    uint64_t before_cpu_ns; /* program threads' CPU before their sampling began */
    uint64_t late_ns;       /* CPU time a time event's samples came late by */
};
void cg_runtime_cost(struct cg_runtime_cost *c) CG_HIDDEN;

/* The file format written: GNU gmon.out (default) or cgprof's own
 * (CGPROF_FORMAT=cgprof, which cgprof record sets). */
enum { CG_FORMAT_GMON, CG_FORMAT_CGPROF };
extern int cg_format CG_HIDDEN;
extern int cg_is_root CG_HIDDEN; /* the process cgprof record started */
extern int cg_inert
    CG_HIDDEN; /* libcgprof.so in a program holding libcgprof.a: passes calls through */

/* Main executable: histogram range in link-time addresses and load bias.
 * The histogram itself is made from the sample tables at write time. */
struct cg_hist {
    uintptr_t lowpc, highpc, bias;
    uintptr_t image_lo, image_hi; /* whole mapped image, link-time */
    uint32_t nbins;
};

/* The second word of a sample's key (a key's second word is never 0). */
#define CG_EVENT_KEY 1
extern struct cg_hist cg_hist CG_HIDDEN;

/* table.c */
extern struct cg_registry cg_arc_tables CG_HIDDEN;    /* (frompc, selfpc) -> calls */
extern struct cg_registry cg_sample_tables CG_HIDDEN; /* (pc, 0) -> samples */
struct cg_table *cg_tables(const struct cg_registry *r) CG_HIDDEN;
struct cg_table *cg_table_acquire(struct cg_registry *r) CG_HIDDEN;
void cg_table_release(struct cg_table *tb) CG_HIDDEN;
/* Adds WEIGHT to key (from, self); -1 if it had to be counted as lost. */
int cg_table_add(struct cg_table *tb, uintptr_t from, uintptr_t self, uint64_t weight) CG_HIDDEN;
/* The fast path spent the current generation's probe budget: lay it out again. */
void cg_table_relayout(struct cg_table *tb) CG_HIDDEN;
void cg_tables_zero(struct cg_registry *r, const struct cg_table *keep) CG_HIDDEN;
uint64_t cg_tables_lost(const struct cg_registry *r) CG_HIDDEN;
void cg_tables_set_limit(uint64_t bytes) CG_HIDDEN;
void *cg_map(size_t bytes) CG_HIDDEN;
void cg_unmap(void *p, size_t bytes) CG_HIDDEN;

/* arcs.c */
void cg_arc_slow(uintptr_t from, uintptr_t self) CG_HIDDEN;
void cg_arcs_thread_exit(void) CG_HIDDEN;
void cg_arcs_after_fork(void) CG_HIDDEN;
uint64_t cg_arcs_lost(void) CG_HIDDEN;

/* sample.c */
extern uint64_t cg_unsampled_threads CG_HIDDEN; /* timer_create failed (atomic) */
int cg_sample_init(void) CG_HIDDEN;
void cg_thread_timer_start(void) CG_HIDDEN;
void cg_thread_timer_stop(void) CG_HIDDEN;
void cg_sample_after_fork(void) CG_HIDDEN;
void cg_samples_thread_exit(void) CG_HIDDEN;
uint64_t cg_samples_lost(void) CG_HIDDEN;
void cg_samples_add_lost(uint64_t n) CG_HIDDEN;
void cg_samples_add_merged(uint64_t n) CG_HIDDEN; /* at_rate: lost records, counted in later ones */
uint64_t cg_samples_merged(void) CG_HIDDEN;

/* sampler.c: the sampler thread (perf events, wall) */
int cg_sampler_start(const struct cg_event *ev, unsigned hz, uint64_t period) CG_HIDDEN;
int cg_sampler_at_rate(const struct cg_event *ev, unsigned hz, uint64_t period) CG_HIDDEN;
uint64_t cg_sampler_throttled(void) CG_HIDDEN;
int cg_sampler_running(void) CG_HIDDEN; /* in this process */
int cg_sampler_here(void) CG_HIDDEN;    /* called on the sampler thread */
void cg_sampler_thread_created(void) CG_HIDDEN;
void cg_sampler_expect(int delta) CG_HIDDEN;             /* threads about to open their own event */
void cg_sampler_thread_open(void) CG_HIDDEN;             /* the calling thread's event, from now */
int cg_sampler_phase_signal(int fd, void *uc) CG_HIDDEN; /* in our signal's handler */
void cg_sampler_exec_failed(void) CG_HIDDEN;             /* an exec returned */
int cg_sampler_in_threads(void) CG_HIDDEN;               /* sampled in threads: 1 all, 2 some */
void cg_sample_count_pc(uintptr_t pc,
                        uint32_t weight) CG_HIDDEN; /* sample.c: a handler event's sample */
void cg_sampler_before_exec(void) CG_HIDDEN;        /* none of our signals left pending */
void cg_sampler_flush(void) CG_HIDDEN;
void cg_sampler_after_fork(void) CG_HIDDEN;
uint64_t cg_sampler_unsampled(int err[2]) CG_HIDDEN;
void cg_sampler_thread_end(struct cg_thread_rec *r) CG_HIDDEN; /* its last wall figures */
void cg_sampler_thread_begin(void) CG_HIDDEN;                  /* its own code begins */
uint64_t cg_sampler_start_cpu_ns(void) CG_HIDDEN;  /* program threads' own event set-up */
uint64_t cg_sampler_before_cpu_ns(void) CG_HIDDEN; /* their CPU before their sampling began */
uint64_t cg_sampler_late_ns(void) CG_HIDDEN;
int cg_sampler_kernel_denied(void) CG_HIDDEN;
/* kernel-mode samples were refused */             /* time events' samples late by, in all */
void cg_sampler_add_before(uint64_t ns) CG_HIDDEN; /* (the cpu event's timers) */
uint64_t cg_random64(pid_t tid) CG_HIDDEN;         /* for random first periods */

/* threads.c */
void cg_thread_track(void) CG_HIDDEN;
typedef int (*cg_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
cg_create_fn cg_real_pthread_create(void) CG_HIDDEN;

/* write.c */
/* final: 0 a dump or checkpoint, 1 the end (exit, exec), 2 the end in a
 * signal handler (no module snapshot: the loader's lock may be held) */
#define CG_WRITE_CHECKPOINT 3 /* a checkpoint: quiet when another write is under way */
int cg_write_profile(int final) CG_HIDDEN;
int cg_output_check(void) CG_HIDDEN;
int cg_output_child(void) CG_HIDDEN; /* writes NAME.PID: a forked child */
void cg_count_write(uint64_t cpu_ns) CG_HIDDEN;
void cg_output_init(void) CG_HIDDEN;
/* Before the program gives up rights (setuid, chroot: privileges.c): the
 * profile's directory and file opened and kept for the writes to come. */
void cg_output_keep(void) CG_HIDDEN;
/* init.c: what a new process does first (fork's child handler; clone.c) */
void cg_after_fork_child(void) CG_HIDDEN;
/* sample.c: a process sharing our memory that cannot be sampled (clone.c),
 * counted among the threads not sampled too */
void cg_count_unsampled_vm_child(void) CG_HIDDEN;
extern uint64_t cg_unsampled_vm_children CG_HIDDEN;
void cg_output_after_fork(void) CG_HIDDEN;
void cg_say(const char *a, const char *b, const char *c) CG_HIDDEN;
/* write.c: a descriptor held in reserve for the runtime's own opens */
int cg_open_reserved(const char *path, int flags, mode_t mode) CG_HIDDEN;
void cg_reserve_take(void) CG_HIDDEN;
int cg_reserve_borrow(void) CG_HIDDEN;
void cg_reserve_return(int fd) CG_HIDDEN;
/* ratecap.c: above 10 kHz, cg_hz lowered to what a perf clock can sample
 * at here without taking more than half the CPU (said in one line) */
void cg_rate_check(void) CG_HIDDEN;
uint64_t cg_thread_cpu_ns(void) CG_HIDDEN; /* sampler.c: this thread's CPU time, ns */
char *cg_utoa(uint64_t v, char *end) CG_HIDDEN;

/* The length of the x86-64 instruction at P (AVAIL bytes readable), or 0
 * when not sure (insnlen.c). */
size_t cg_insn_len(const unsigned char *p, size_t avail) CG_HIDDEN;

#endif

/* Call arcs: the slow path of the entry stubs (new arc, new thread), with
 * its guard against re-entry from signal handlers.
 *
 * The fast path (arch/x86_64/mcount.S) counts a known arc in the thread's
 * current table generation; everything else comes here.  Re-entrancy: a
 * signal handler that runs profiled code while this thread is in here
 * (`busy`) must not touch the table half-way through a change, so its
 * calls are queued in cg_tls.pending and counted before we leave.  A call
 * is always either counted or added to a lost counter -- never dropped.
 */
#include "rt.h"

/* The empty generation: a header (bmask one slot, budget never counted
 * down, since its slots are empty) and two empty slots, as 64-bit words. */
static uint64_t empty_gen[4 + 2 * 4] __attribute__((aligned(64))) = {
    [3] = 1 * sizeof(struct cg_slot),
};
struct cg_slot *const cg_empty_slots = (struct cg_slot *)&empty_gen[4];

/* Starts out pointing at the empty generation, so the first call of a
 * thread misses and reaches cg_arc_slow without any test for "new". */
__thread struct cg_tls cg_tls __attribute__((tls_model("initial-exec"))) = {
    .slots = (struct cg_slot *)&empty_gen[4],
};

/* The entry stubs (arch/x86_64/mcount.S) read these fields directly. */
_Static_assert(offsetof(struct cg_tls, slots) == 0, "mcount.S reads slots at offset 0");
_Static_assert(sizeof(struct cg_slot) == 32, "mcount.S indexes slots by << 5");
_Static_assert(offsetof(struct cg_gen, slots) == 32, "slots start a cache line's half");
_Static_assert(offsetof(struct cg_gen, slots) - offsetof(struct cg_gen, budget) == 16,
               "mcount.S counts probes down at slots - 16");
_Static_assert(offsetof(struct cg_gen, slots) - offsetof(struct cg_gen, bmask) == 8,
               "mcount.S reads bmask at slots - 8");
_Static_assert(sizeof empty_gen == sizeof(struct cg_gen) + 2 * sizeof(struct cg_slot),
               "the empty generation: a header and two slots");

int cg_recording = 1;
int cg_instrumented;

static uint64_t nested_lost; /* atomic: pending queue full, or no table at all */

uint64_t cg_arcs_lost(void)
{
    return __atomic_load_n(&nested_lost, __ATOMIC_RELAXED) + cg_tables_lost(&cg_arc_tables);
}

/* Points the fast path at the table's current generation: one store, and
 * the generation carries its own mask. */
static void tls_publish(struct cg_tls *t, struct cg_table *tb)
{
    __atomic_store_n(&t->slots, tb->gen->slots, __ATOMIC_RELAXED);
}

static void arc_count(struct cg_tls *t, uintptr_t from, uintptr_t self)
{
    struct cg_table *tb = t->table;
    cg_table_add(tb, from, self, 1);
    if (__atomic_load_n(&tb->gen->budget, __ATOMIC_RELAXED) == 0)
        cg_table_relayout(tb);
    if (t->slots != tb->gen->slots)
        tls_publish(t, tb);
}

/* Pops one queued nested call; 0 when the queue is empty. */
static int pending_pop(struct cg_tls *t, uintptr_t *from, uintptr_t *self)
{
    for (;;) {
        unsigned n = __atomic_load_n(&t->npending, __ATOMIC_ACQUIRE);
        if (n == 0)
            return 0;
        unsigned i = n - 1;
        if (i >= CG_PENDING) {
            /* the handler counted these as lost; just shrink */
            __atomic_compare_exchange_n(&t->npending, &n, CG_PENDING, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED);
            continue;
        }
        *from = t->pending[i][0];
        *self = t->pending[i][1];
        if (__atomic_compare_exchange_n(&t->npending, &n, i, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return 1;
    }
}

static void drain(struct cg_tls *t)
{
    uintptr_t f, s;
    while (pending_pop(t, &f, &s))
        arc_count(t, f, s);
}

/* The runtime's own work, as mcount is (CG_OWN, in_runtime): a sample
 * taken in it -- a thread's first table, the table growing (mmap), the
 * thread's sampling starting -- is not the program's time (it showed as
 * mmap [libc.so.6] at the root of a stack). */
CG_OWN void cg_arc_slow(uintptr_t from, uintptr_t self)
{
    struct cg_tls *t = &cg_tls;
    if (!cg_recording)
        return;
    if (t->busy) {
        unsigned i = __atomic_fetch_add(&t->npending, 1, __ATOMIC_ACQ_REL);
        if (i < CG_PENDING) {
            t->pending[i][0] = from;
            t->pending[i][1] = self;
        } else {
            __atomic_add_fetch(&nested_lost, 1, __ATOMIC_RELAXED);
        }
        return;
    }
    t->busy = 1;
    int prev = t->in_runtime;
    t->in_runtime = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (!t->table && t->table_retry) { /* over CGPROF_ARC_MEMORY: dropped, counted */
        t->table_retry--;
        __atomic_add_fetch(&nested_lost, 1, __ATOMIC_RELAXED);
        goto out;
    }
    if (!t->table) {
        cg_init();
        __atomic_store_n(&cg_instrumented, 1, __ATOMIC_RELAXED);
        struct cg_table *tb = cg_table_acquire(&cg_arc_tables);
        if (!tb) {
            __atomic_add_fetch(&nested_lost, 1, __ATOMIC_RELAXED);
            t->table_retry = 4095; /* a table released by an ended thread may come */
            goto out;
        }
        t->table = tb;
        tls_publish(t, tb);
        cg_thread_track();
    }
    arc_count(t, from, self);
    drain(t);
out:
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->in_runtime = prev;
    t->busy = 0;
    /* a handler that ran after the last pop but before busy was cleared */
    if (__atomic_load_n(&t->npending, __ATOMIC_ACQUIRE) && t->table) {
        t->busy = 1;
        drain(t);
        t->busy = 0;
    }
}

/* Called at thread exit: hand the table over to the next new thread. */
void cg_arcs_thread_exit(void)
{
    struct cg_tls *t = &cg_tls;
    struct cg_table *tb = t->table;
    if (!tb)
        return;
    __atomic_store_n(&t->slots, cg_empty_slots, __ATOMIC_RELAXED);
    t->table = NULL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    cg_table_release(tb);
}

/* In a fork child: counts start at zero, and only this thread owns a table. */
void cg_arcs_after_fork(void)
{
    cg_tables_zero(&cg_arc_tables, cg_tls.table);
    nested_lost = 0;
}

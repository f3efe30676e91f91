/* Arc tables: the slow path that adds arcs, grows tables and adopts them.
 *
 * Invariants:
 *  1. A thread changes only its own table; the writer only reads tables.
 *  2. A slot's key is complete before it is visible: `from` is written,
 *     then `self` with release order; readers treat self == 0 as empty.
 *  3. A generation is replaced whole: the next one is built aside, with
 *     every key of the current one and zero counts, then published.  Old
 *     generations are never unmapped and keep their counts: a fast path
 *     that a signal handler interrupted may still count into one, and the
 *     writer sums each arc over all generations.
 *  4. A call is either counted or added to `lost` -- never dropped silently.
 *     Nested calls (a signal handler running profiled code while this thread
 *     is in here) are queued in cg_tls.pending and counted before we leave.
 */
#include "rt.h"

#include <pthread.h>
#include <sys/mman.h>

struct cg_slot cg_empty_slots[2];

/* Starts out pointing at an empty two-slot index, so the first call of a
 * thread misses and reaches cg_arc_slow without any test for "new". */
__thread struct cg_tls cg_tls __attribute__((tls_model("initial-exec"))) = {
    .slots = cg_empty_slots,
    .shift = 63,
};

/* The entry stubs (arch/x86_64/mcount.S) read these two fields directly. */
_Static_assert(offsetof(struct cg_tls, slots) == 0, "mcount.S reads slots at offset 0");
_Static_assert(offsetof(struct cg_tls, shift) == 8, "mcount.S reads shift at offset 8");
int cg_recording = 1;
int cg_instrumented;

static struct cg_table *registry;         /* atomic list head */
static uint64_t mapped_bytes;             /* atomic */
static uint64_t limit_bytes = UINT64_MAX; /* CGPROF_ARC_MEMORY */
static uint64_t nested_lost;              /* atomic: pending queue overflow */

#define FIRST_SLOTS 256
#define CHUNK_ARCS  4096

void cg_arcs_set_limit(uint64_t bytes)
{
    limit_bytes = bytes;
}

void *cg_map(size_t bytes)
{
    uint64_t now = __atomic_add_fetch(&mapped_bytes, bytes, __ATOMIC_RELAXED);
    if (now > limit_bytes) {
        __atomic_sub_fetch(&mapped_bytes, bytes, __ATOMIC_RELAXED);
        return NULL;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        __atomic_sub_fetch(&mapped_bytes, bytes, __ATOMIC_RELAXED);
        return NULL;
    }
    return p;
}

void cg_unmap(void *p, size_t bytes)
{
    munmap(p, bytes);
    __atomic_sub_fetch(&mapped_bytes, bytes, __ATOMIC_RELAXED);
}

struct cg_table *cg_tables(void)
{
    return __atomic_load_n(&registry, __ATOMIC_ACQUIRE);
}

uint64_t cg_nested_lost(void) CG_HIDDEN;
uint64_t cg_nested_lost(void)
{
    return __atomic_load_n(&nested_lost, __ATOMIC_RELAXED);
}

/* The hash of an arc; mcount.S computes the same. */
/* The hash of an arc; mcount.S computes the same. */
static uint64_t slot_of(unsigned shift, uintptr_t from, uintptr_t self)
{
    return ((from ^ (self << 17)) * CG_HASH_MUL) >> shift;
}

/* Points the fast path at the table's current generation (see mcount.S
 * for why the order of these two stores does not matter on one thread). */
static void tls_publish(struct cg_tls *t, struct cg_table *tb)
{
    t->slots = tb->gen->slots;
    t->shift = tb->shift;
}

/* Places a key in a generation known to have room; returns its slot. */
static struct cg_slot *slot_place(struct cg_gen *g, unsigned shift, uintptr_t from, uintptr_t self)
{
    uint64_t mask = g->nslots - 1;
    uint64_t h = slot_of(shift, from, self);
    while (g->slots[h].self)
        h = (h + 1) & mask;
    g->slots[h].from = from;
    __atomic_store_n(&g->slots[h].self, self, __ATOMIC_RELEASE);
    return &g->slots[h];
}

/* Makes a new current generation of nslots with the current keys.  Keys
 * go in hottest first (by their count in the current generation, in
 * power-of-two classes), so the arcs that matter most sit in their home
 * slot and the fast path rarely probes: measured on Lua 5.4, 1.01 slots
 * looked at per call instead of 1.2 in slot order. */
static int table_grow(struct cg_table *tb, uint64_t nslots)
{
    struct cg_gen *g = cg_map(sizeof *g + nslots * sizeof(struct cg_slot));
    if (!g)
        return -1;
    g->nslots = nslots;
    unsigned shift = 64 - (unsigned)__builtin_ctzll(nslots);
    struct cg_gen *old = tb->gen;
    for (int cls = 64; old && cls >= 0; cls--) {
        for (uint64_t i = 0; i < old->nslots; i++) {
            const struct cg_slot *o = &old->slots[i];
            uint64_t c = o->count;
            int oc = c ? 64 - __builtin_clzll(c) : 0; /* 0, or 1 + floor(log2 c) */
            if (o->self && oc == cls)
                slot_place(g, shift, o->from, o->self);
        }
    }
    g->older = old;
    tb->shift = shift;
    __atomic_store_n(&tb->gen, g, __ATOMIC_RELEASE);
    return 0;
}

static struct cg_table *table_new(void)
{
    struct cg_table *tb = cg_map(sizeof *tb);
    if (!tb)
        return NULL;
    tb->in_use = 1;
    if (table_grow(tb, FIRST_SLOTS) != 0) {
        cg_unmap(tb, sizeof *tb);
        return NULL;
    }
    struct cg_table *head = __atomic_load_n(&registry, __ATOMIC_RELAXED);
    do
        tb->next = head;
    while (
        !__atomic_compare_exchange_n(&registry, &head, tb, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    return tb;
}

/* A table released by a finished thread, or a new one. */
static struct cg_table *table_acquire(void)
{
    for (struct cg_table *tb = cg_tables(); tb; tb = tb->next) {
        int zero = 0;
        if (__atomic_load_n(&tb->in_use, __ATOMIC_RELAXED) == 0 &&
            __atomic_compare_exchange_n(&tb->in_use, &zero, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return tb;
    }
    return table_new();
}

static struct cg_slot *slot_lookup(struct cg_table *tb, uintptr_t from, uintptr_t self)
{
    struct cg_gen *g = tb->gen;
    uint64_t mask = g->nslots - 1;
    for (uint64_t h = slot_of(tb->shift, from, self); g->slots[h].self; h = (h + 1) & mask)
        if (g->slots[h].from == from && g->slots[h].self == self)
            return &g->slots[h];
    return NULL;
}

static void count_one(struct cg_slot *sl)
{
    __asm__ volatile("addq $1, %0" : "+m"(sl->count));
}

/* Counts one call into the thread's own table, adding the arc if new. */
static void arc_count(struct cg_tls *t, uintptr_t from, uintptr_t self)
{
    struct cg_table *tb = t->table;
    struct cg_slot *sl = slot_lookup(tb, from, self);
    if (!sl) {
        /* Keep a generation at most half full; if the next cannot be had,
         * fill this one up to all but one slot (probes need an empty one). */
        uint64_t nslots = tb->gen->nslots;
        if ((tb->narcs + 1) * 2 > nslots) {
            if (table_grow(tb, nslots * 2) == 0)
                tls_publish(t, tb);
            else if (tb->narcs + 2 > nslots) {
                __atomic_add_fetch(&tb->lost, 1, __ATOMIC_RELAXED);
                return;
            }
        }
        sl = slot_place(tb->gen, tb->shift, from, self);
        tb->narcs++;
    }
    count_one(sl);
}

/* Pops one queued nested call; 0 when the queue is empty. */
static int pending_pop(struct cg_tls *t, uintptr_t *from, uintptr_t *self)
{
    for (;;) {
        unsigned n = __atomic_load_n(&t->npending, __ATOMIC_ACQUIRE);
        if (n == 0)
            return 0;
        unsigned i = n - 1;
        if (i >= 32) {
            /* the handler counted these as lost; just shrink */
            __atomic_compare_exchange_n(&t->npending, &n, 32, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED);
            continue;
        }
        *from = t->pending[i][0];
        *self = t->pending[i][1];
        if (__atomic_compare_exchange_n(&t->npending, &n, i, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return 1;
    }
}

void cg_arc_slow(uintptr_t from, uintptr_t self)
{
    struct cg_tls *t = &cg_tls;
    if (!cg_recording)
        return;
    if (t->busy) {
        unsigned i = __atomic_fetch_add(&t->npending, 1, __ATOMIC_ACQ_REL);
        if (i < 32) {
            t->pending[i][0] = from;
            t->pending[i][1] = self;
        } else {
            __atomic_add_fetch(&nested_lost, 1, __ATOMIC_RELAXED);
        }
        return;
    }
    t->busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (!t->table) {
        cg_init();
        __atomic_store_n(&cg_instrumented, 1, __ATOMIC_RELAXED);
        struct cg_table *tb = table_acquire();
        if (!tb) {
            __atomic_add_fetch(&nested_lost, 1, __ATOMIC_RELAXED);
            goto out;
        }
        t->table = tb;
        tls_publish(t, tb);
        cg_thread_track();
    }
    arc_count(t, from, self);
    uintptr_t f, s;
    while (pending_pop(t, &f, &s))
        arc_count(t, f, s);
out:
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->busy = 0;
    /* a handler that ran after the last pop but before busy was cleared */
    if (__atomic_load_n(&t->npending, __ATOMIC_ACQUIRE) && t->table) {
        t->busy = 1;
        while (pending_pop(t, &f, &s))
            arc_count(t, f, s);
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
    t->shift = 63;
    t->slots = cg_empty_slots;
    t->table = NULL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&tb->in_use, 0, __ATOMIC_RELEASE);
}

/* In a fork child: counts start at zero, and only this thread owns a table. */
void cg_arcs_after_fork(void)
{
    struct cg_tls *t = &cg_tls;
    for (struct cg_table *tb = cg_tables(); tb; tb = tb->next) {
        for (struct cg_gen *g = tb->gen; g; g = g->older)
            for (uint64_t i = 0; i < g->nslots; i++)
                g->slots[i].count = 0;
        tb->lost = 0;
        if (tb != t->table)
            tb->in_use = 0;
    }
    nested_lost = 0;
}

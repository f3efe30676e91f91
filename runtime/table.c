/* Counter tables: per-thread open-addressing maps from a two-word key to
 * a count, used for call arcs (from, self) and samples (pc, 0).
 *
 * Invariants:
 *  1. A table has one writer at a time (its thread, or that thread's
 *     signal handler when the thread itself cannot be inside); the profile
 *     writer only reads tables.
 *  2. A slot's key is complete before it is visible: `from` is written,
 *     then `self` with release order; readers treat self == 0 as empty.
 *  3. A generation is replaced whole: the next one is built aside, with
 *     every key of the current one and zero counts, then published.  Old
 *     generations are never unmapped and keep their counts: a fast path
 *     that a signal handler interrupted may still count into one, and the
 *     writer sums each key over all generations.
 *  4. Tables are never unmapped: a table whose thread ended is released
 *     and adopted, counts and all, by the next thread that needs one.
 *
 * Everything here is async-signal-safe: memory comes from mmap, lists are
 * changed with compare-and-swap.
 */
#include "rt.h"

#include <sys/mman.h>

#define FIRST_SLOTS 256

struct cg_registry cg_arc_tables, cg_sample_tables;

/* CGPROF_ARC_MEMORY caps the arc tables only: samples, modules and the
 * thread log are small and bounded, and without them the profile could
 * name nothing.  Memory over the cap is refused before any system call,
 * so a thread that can have no table loses its calls (counted) at the
 * cost of an atomic add, not of an mmap and munmap per call. */
static uint64_t arc_bytes;                /* atomic: the arc tables' memory */
static uint64_t limit_bytes = UINT64_MAX; /* CGPROF_ARC_MEMORY */

void cg_tables_set_limit(uint64_t bytes)
{
    limit_bytes = bytes;
}

/* Takes BYTES of the arc tables' allowance; 0 if that would pass the cap. */
static int arc_reserve(uint64_t bytes)
{
    if (__atomic_add_fetch(&arc_bytes, bytes, __ATOMIC_RELAXED) <= limit_bytes)
        return 1;
    __atomic_sub_fetch(&arc_bytes, bytes, __ATOMIC_RELAXED);
    return 0;
}

static void arc_unreserve(uint64_t bytes)
{
    __atomic_sub_fetch(&arc_bytes, bytes, __ATOMIC_RELAXED);
}

void *cg_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void cg_unmap(void *p, size_t bytes)
{
    munmap(p, bytes);
}

static uint64_t gen_bytes(uint64_t nslots)
{
    return sizeof(struct cg_gen) + nslots * sizeof(struct cg_slot);
}

struct cg_table *cg_tables(const struct cg_registry *r)
{
    return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
}

/* The home slot of a key among NSLOTS (a power of two), archash.h's hash;
 * mcount.S and libcalls.S compute the same, as a byte offset: bits 32 and
 * up of the product. */
static uint64_t slot_of(uint64_t nslots, uintptr_t from, uintptr_t self)
{
    return ((((from * CG_ARC_MUL) ^ self) * CG_ARC_MUL) >> 32) & (nslots - 1);
}

/* Places a key in a generation known to have room; returns its slot. */
static struct cg_slot *slot_place(struct cg_gen *g, uintptr_t from, uintptr_t self)
{
    uint64_t mask = g->nslots - 1;
    uint64_t h = slot_of(g->nslots, from, self);
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
/* The class of count C: 0 for 0, else 1 + floor(log2 C). */
static int count_class(uint64_t c)
{
    return c ? 64 - __builtin_clzll(c) : 0;
}

/* Places OLD's keys into G, hottest class first (so that the arcs called
 * most sit in their home slots), by a counting sort of the keys' classes:
 * two passes over OLD and one over its keys, where a pass per class
 * present (up to 65) made table_grow take twice mcount's time in a short
 * SQLite run (perf, speedtest1 --size 0).  A signal handler's call may
 * move a key to another class meanwhile: each key is placed by the class
 * it had when first read.  Without memory for the sort (one mmap, 8 bytes
 * a slot of OLD, given back), a pass per class present. */
static void relay(struct cg_gen *g, const struct cg_gen *old)
{
    size_t bytes = old->nslots < (1u << 25) ? 2 * old->nslots * sizeof(uint32_t) : 0;
    uint32_t *key = bytes ? cg_map(bytes) : NULL;
    if (key) {
        uint32_t *ord = key + old->nslots;
        uint64_t start[66] = {0};
        size_t n = 0;
        for (uint64_t i = 0; i < old->nslots; i++) {
            if (!old->slots[i].self)
                continue;
            int cls = count_class(old->slots[i].count);
            key[n++] = (uint32_t)i | (uint32_t)cls << 25;
            start[cls]++;
        }
        uint64_t at = 0; /* bucket starts, class 64 first */
        for (int cls = 64; cls >= 0; cls--) {
            uint64_t k = start[cls];
            start[cls] = at;
            at += k;
        }
        for (size_t j = 0; j < n; j++)
            ord[start[key[j] >> 25]++] = key[j] & ((1u << 25) - 1);
        for (size_t j = 0; j < n; j++)
            slot_place(g, old->slots[ord[j]].from, old->slots[ord[j]].self);
        cg_unmap(key, bytes);
        return;
    }
    uint64_t present = 0; /* bit k: some count in class k + 1 */
    int zeros = 0;
    for (uint64_t i = 0; i < old->nslots; i++) {
        uint64_t c = old->slots[i].count;
        if (old->slots[i].self && c)
            present |= 1ull << (63 - __builtin_clzll(c));
        else if (old->slots[i].self)
            zeros = 1;
    }
    for (int cls = 64; cls >= 0; cls--) {
        if (cls ? !(present >> (cls - 1) & 1) : !zeros)
            continue;
        for (uint64_t i = 0; i < old->nslots; i++) {
            const struct cg_slot *o = &old->slots[i];
            if (o->self && count_class(o->count) == cls)
                slot_place(g, o->from, o->self);
        }
    }
}

static int table_grow(struct cg_table *tb, uint64_t nslots, int reserved)
{
    if (tb->capped && !reserved && !arc_reserve(gen_bytes(nslots)))
        return -1;
    /* populated at once: a half-full generation has keys on every page,
     * and one fault per page cost more (perf: a short SQLite run) */
    struct cg_gen *g = mmap(NULL, gen_bytes(nslots), PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    g = g == MAP_FAILED ? NULL : g;
    if (!g) {
        if (tb->capped)
            arc_unreserve(gen_bytes(nslots));
        return -1;
    }
    g->nslots = nslots;
    g->bmask = (nslots - 1) * sizeof(struct cg_slot);
    g->budget = CG_PROBE_BUDGET;
    struct cg_gen *old = tb->gen;
    if (old)
        relay(g, old);
    g->older = old;
    __atomic_store_n(&tb->gen, g, __ATOMIC_RELEASE);
    return 0;
}

static struct cg_table *table_new(struct cg_registry *r)
{
    int capped = r == &cg_arc_tables;
    uint64_t first = sizeof(struct cg_table) + gen_bytes(FIRST_SLOTS);
    if (capped && !arc_reserve(first))
        return NULL; /* over the cap: nothing mapped */
    struct cg_table *tb = cg_map(sizeof *tb);
    if (!tb) {
        if (capped)
            arc_unreserve(first);
        return NULL;
    }
    tb->in_use = 1;
    tb->capped = capped;
    if (table_grow(tb, FIRST_SLOTS, 1) != 0) { /* it gave back its part */
        cg_unmap(tb, sizeof *tb);
        if (capped)
            arc_unreserve(sizeof *tb);
        return NULL;
    }
    struct cg_table *head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    do
        tb->next = head;
    while (
        !__atomic_compare_exchange_n(&r->head, &head, tb, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    return tb;
}

struct cg_table *cg_table_acquire(struct cg_registry *r)
{
    for (struct cg_table *tb = cg_tables(r); tb; tb = tb->next) {
        int zero = 0;
        if (__atomic_load_n(&tb->in_use, __ATOMIC_RELAXED) == 0 &&
            __atomic_compare_exchange_n(&tb->in_use, &zero, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return tb;
    }
    return table_new(r);
}

void cg_table_release(struct cg_table *tb)
{
    __atomic_store_n(&tb->in_use, 0, __ATOMIC_RELEASE);
}

static struct cg_slot *slot_lookup(struct cg_table *tb, uintptr_t from, uintptr_t self)
{
    struct cg_gen *g = tb->gen;
    uint64_t mask = g->nslots - 1;
    for (uint64_t h = slot_of(g->nslots, from, self); g->slots[h].self; h = (h + 1) & mask)
        if (g->slots[h].from == from && g->slots[h].self == self)
            return &g->slots[h];
    return NULL;
}

int cg_table_add(struct cg_table *tb, uintptr_t from, uintptr_t self, uint64_t weight)
{
    struct cg_slot *sl = slot_lookup(tb, from, self);
    if (!sl) {
        /* Keep a generation at most half full; if the next cannot be had,
         * fill this one up to all but one slot (probes need an empty one). */
        uint64_t nslots = tb->gen->nslots;
        if ((tb->nkeys + 1) * 2 > nslots && table_grow(tb, nslots * 2, 0) != 0 &&
            tb->nkeys + 2 > nslots) {
            __atomic_add_fetch(&tb->lost, weight, __ATOMIC_RELAXED);
            return -1;
        }
        sl = slot_place(tb->gen, from, self);
        tb->nkeys++;
    }
    /* one instruction: a signal handler counting into this table from the
     * same thread cannot interleave with it */
    cg_count_add(&sl->count, weight);
    return 0;
}

/* The fast path has looked at CG_PROBE_BUDGET slots past home slots in
 * the current generation: the arcs hot now were placed while others were
 * (at a table's last growth, or after it, in the order they first came),
 * and sit behind them.  Measured on Lua 5.4 (bench/workload.lua), a half
 * full generation holding the script's main loop cost 0.77 to over 1
 * extra slots per call, depending on where ASLR put the program (the hash
 * is of run-time addresses).  A new generation twice the size, keys placed
 * hottest first by their counts in this one, puts them home again.  It
 * doubles, so memory stays under twice the current generation, and stops
 * at CG_SPREAD (8) slots per key: after that the budget is left spent (the
 * fast path's count-down then never reaches zero again). */
#define CG_SPREAD 8
void cg_table_relayout(struct cg_table *tb)
{
    struct cg_gen *g = tb->gen;
    if (__atomic_load_n(&g->budget, __ATOMIC_RELAXED) > 0)
        return;
    if (g->nslots >= CG_SPREAD * (tb->nkeys + 1) || table_grow(tb, g->nslots * 2, 0) != 0)
        __atomic_store_n(&g->budget, -1, __ATOMIC_RELAXED);
}

void cg_tables_zero(struct cg_registry *r, const struct cg_table *keep)
{
    for (struct cg_table *tb = cg_tables(r); tb; tb = tb->next) {
        for (struct cg_gen *g = tb->gen; g; g = g->older)
            for (uint64_t i = 0; i < g->nslots; i++)
                g->slots[i].count = 0;
        tb->lost = 0;
        if (tb != keep)
            tb->in_use = 0;
    }
}

uint64_t cg_tables_lost(const struct cg_registry *r)
{
    uint64_t lost = 0;
    for (struct cg_table *tb = cg_tables(r); tb; tb = tb->next)
        lost += __atomic_load_n(&tb->lost, __ATOMIC_RELAXED);
    return lost;
}

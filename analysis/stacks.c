/* Measured time from sampled call stacks: each function's inclusive time
 * and the time under each arc, read off the call-path tree of a cgprof
 * profile (STACKS record, docs/profile-format.md) instead of estimated
 * from call counts as the gprof paper does.
 *
 * A stack is the path from a node of the tree to its root, leaf first; a
 * node's count is the samples whose stack ends there.  Frames are
 * symbolized with the call graph's own symbol table (modmap's), so a
 * frame names the same function as a sample or an arc does; a frame in
 * no symbol is its module's entry "[libfoo.so]" (modmap_owned), a
 * function like any other, so its time reaches its callers.  Frames in
 * libcgprof's own code and the cut marker are skipped: the frames on
 * either side of them are taken as adjacent.
 *
 * Definitions, for the samples that count (below), each weighted by its
 * count:
 *  - incl(F): samples whose stack holds F at least once -- a sample
 *    counts once per function, however deep the recursion;
 *  - self(F): samples whose leaf is F;
 *  - arc P->C (C's frame right below a frame of P): total(P->C), the
 *    samples whose stack shows P calling C at least once -- the time
 *    spent in C and its descendants while called from P; self(P->C), the
 *    part whose leaf is C (or, C being on a cycle, any member of it);
 *  - cycle K: incl(K), samples whose stack holds any member of K; a
 *    member M's children are the samples whose innermost member of K is
 *    M and whose leaf lies outside K, so the members' self and children
 *    add up to incl(K) exactly, as gprof's cycle layout needs.
 * Any frame between two members of a cycle on one stack is itself a
 * member (the arcs between them are in the graph, so it lies on a cycle
 * with them); hence in a stack under P->C the leaf is C's descendant.
 *
 * Which samples count: those whose leaf is not left out of the time (in
 * libcgprof's mcount, -E, -N, -P NAME), whose stack holds no function
 * left out of the time (-E, -N), and, when -F or -n name functions,
 * whose stack holds one of them: gprof's time options, applied to
 * whole stacks instead of to call-count fractions.
 *
 * Invariants (checked in debug builds): incl(F) >= self(F); every
 * incl and arc total <= all samples that count; self(P->C) <= total(P->C);
 * a cycle's members' self and children sum to incl(K).
 */
#include "stacks.h"
#include "modmap.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_NODE CGDATA_NO_PARENT

/* A set of (caller, callee) pairs, open addressing; slot value is an
 * index + 1, 0 free. */
struct pairs {
    uint64_t *keys;
    uint32_t *vals;
    size_t cap;
};

static uint64_t pair_key(long caller, long callee)
{
    return (uint64_t)(uint32_t)caller << 32 | (uint32_t)callee;
}

static size_t pair_slot(const struct pairs *h, uint64_t key)
{
    uint64_t x = key * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(x >> 17) & (h->cap - 1);
    while (h->vals[i] && h->keys[i] != key)
        i = (i + 1) & (h->cap - 1);
    return i;
}

static int pairs_init(struct pairs *h, size_t n)
{
    h->cap = 16;
    while (h->cap < 2 * n + 2)
        h->cap *= 2;
    h->keys = malloc(h->cap * sizeof *h->keys);
    h->vals = calloc(h->cap, sizeof *h->vals);
    return h->keys && h->vals ? 0 : -1;
}

static void pairs_free(struct pairs *h)
{
    free(h->keys);
    free(h->vals);
}

/* The nearest ancestor of node I that is a frame of the program. */
static uint32_t frame_parent(const struct stacks *s, uint32_t i)
{
    uint32_t p = s->d->stacks[i].parent;
    while (p != NO_NODE && s->skip[p])
        p = s->d->stacks[p].parent;
    return p;
}

static int collect_calls(struct stacks *s)
{
    struct pairs h;
    int rc = pairs_init(&h, s->n);
    s->calls = malloc((s->n ? s->n : 1) * sizeof *s->calls);
    if (rc != 0 || !s->calls) {
        pairs_free(&h);
        return -1;
    }
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t p = s->skip[i] ? NO_NODE : frame_parent(s, i);
        if (p == NO_NODE)
            continue;
        uint64_t key = pair_key(s->fn[p], s->fn[i]);
        size_t slot = pair_slot(&h, key);
        if (h.vals[slot])
            continue;
        h.keys[slot] = key;
        h.vals[slot] = 1;
        s->calls[s->ncalls++] = (struct cg_static_call){(int)s->fn[p], (int)s->fn[i]};
    }
    pairs_free(&h);
    return 0;
}

int stacks_prepare(struct stacks *s, const struct cgdata *d, const struct symtab *st, char *err,
                   size_t errsz)
{
    memset(s, 0, sizeof *s);
    s->d = d;
    s->n = d->nstacks;
    s->fn = malloc((s->n ? s->n : 1) * sizeof *s->fn);
    s->skip = calloc(s->n ? s->n : 1, 1);
    uint32_t *depth = malloc((s->n ? s->n : 1) * sizeof *depth);
    if (!s->fn || !s->skip || !depth || s->n > INT32_MAX) {
        free(depth);
        snprintf(err, errsz, "out of memory reading the stacks");
        return -1;
    }
    /* every walk below is as long as a stack: a stack longer than the
     * depth limit (and its cut marker) is a corrupt file, refused rather
     * than walked at quadratic cost */
    uint64_t limit = (d->stack_depth_limit > 1024 ? d->stack_depth_limit : 1024) + 1;
    for (size_t i = 0; i < s->n; i++) {
        const struct cgdata_stack_node *x = &d->stacks[i];
        depth[i] = x->parent == NO_NODE ? 1 : depth[x->parent] + 1;
        if (depth[i] > limit) {
            free(depth);
            snprintf(err, errsz,
                     "a stack of more than %llu frames, beyond the depth limit: the profile is "
                     "corrupt",
                     (unsigned long long)limit);
            return -1;
        }
        if (__builtin_add_overflow(s->samples, x->count, &s->samples)) {
            free(depth);
            snprintf(err, errsz,
                     "the stacks' sample counts add up to more than 2^64: the "
                     "profile is corrupt");
            return -1;
        }
        s->fn[i] = -1;
        if (x->module != CGDATA_CUT_MODULE)
            s->fn[i] = symtab_lookup(st, modmap_owned(st, modmap_pc(d, x->module, x->addr)));
        s->skip[i] = s->fn[i] < 0 || st->syms[s->fn[i]].is_runtime;
    }
    free(depth);
    if (collect_calls(s) != 0) {
        snprintf(err, errsz, "out of memory reading the stacks");
        return -1;
    }
    return 0;
}

void stacks_free(struct stacks *s)
{
    free(s->fn);
    free(s->skip);
    free(s->calls);
    memset(s, 0, sizeof *s);
}

/* ---- measuring ---- */

struct measure {
    struct callgraph *g;
    const struct stacks *s;
    struct pairs arcs;   /* (parent, child) -> arc index + 1 */
    double *incl, *self; /* per function */
    double *inner;       /* per function on a cycle: its children (see top) */
    double *cyc;         /* per cycle: incl */
    double *arc_total, *arc_self;
    uint32_t *fn_seen, *cyc_seen, *arc_seen; /* the walk that last counted it */
    uint32_t walk;
    double total; /* all samples that count */
};

static int measure_init(struct measure *m, struct callgraph *g, const struct stacks *s)
{
    size_t nf = g->nsyms + 1, nc = g->ncycles + 1, na = g->narcs + 1;
    memset(m, 0, sizeof *m);
    m->g = g;
    m->s = s;
    m->incl = calloc(nf, sizeof *m->incl);
    m->self = calloc(nf, sizeof *m->self);
    m->inner = calloc(nf, sizeof *m->inner);
    m->cyc = calloc(nc, sizeof *m->cyc);
    m->arc_total = calloc(na, sizeof *m->arc_total);
    m->arc_self = calloc(na, sizeof *m->arc_self);
    m->fn_seen = calloc(nf, sizeof *m->fn_seen);
    m->cyc_seen = calloc(nc, sizeof *m->cyc_seen);
    m->arc_seen = calloc(na, sizeof *m->arc_seen);
    if (pairs_init(&m->arcs, g->narcs) != 0 || !m->incl || !m->self || !m->inner || !m->cyc ||
        !m->arc_total || !m->arc_self || !m->fn_seen || !m->cyc_seen || !m->arc_seen)
        return -1;
    for (size_t a = 0; a < g->narcs; a++) {
        uint64_t key = pair_key(g->arcs[a].parent, g->arcs[a].child);
        size_t slot = pair_slot(&m->arcs, key);
        m->arcs.keys[slot] = key;
        m->arcs.vals[slot] = (uint32_t)a + 1;
    }
    return 0;
}

static void measure_free(struct measure *m)
{
    pairs_free(&m->arcs);
    free(m->incl);
    free(m->self);
    free(m->inner);
    free(m->cyc);
    free(m->arc_total);
    free(m->arc_self);
    free(m->fn_seen);
    free(m->cyc_seen);
    free(m->arc_seen);
}

static long find_arc(const struct measure *m, long parent, long child)
{
    uint64_t key = pair_key(parent, child);
    size_t slot = pair_slot(&m->arcs, key);
    return m->arcs.vals[slot] ? (long)m->arcs.vals[slot] - 1 : -1;
}

#define TABLE(t) (1u << (t))

/* Whether the samples of the stack ending at node LEAF count (see top). */
static int stack_counts(const struct measure *m, uint32_t leaf)
{
    const struct stacks *s = m->s;
    const struct cg_node *nodes = m->g->nodes;
    if (s->skip[leaf])
        return 0;
    const struct cg_node *f = &nodes[s->fn[leaf]];
    if (f->excluded || (f->tables & TABLE(CG_EXCL_TIME)))
        return 0;
    int wanted = m->g->table_len[CG_INCL_TIME] == 0;
    for (uint32_t u = leaf; u != NO_NODE; u = frame_parent(s, u)) {
        unsigned t = nodes[s->fn[u]].tables;
        if (t & TABLE(CG_EXCL_TIME))
            return 0;
        if (t & TABLE(CG_INCL_TIME))
            wanted = 1;
    }
    return wanted;
}

/* Counts the stack ending at node LEAF, W samples, once per function,
 * cycle and arc it holds. */
static void count_stack(struct measure *m, uint32_t leaf, double w)
{
    const struct stacks *s = m->s;
    const struct cg_node *nodes = m->g->nodes;
    uint32_t walk = ++m->walk;
    long f0 = s->fn[leaf], callee = -1;
    int leaf_cyc = nodes[f0].cyc_num;
    m->total += w;
    m->self[f0] += w;
    for (uint32_t u = leaf; u != NO_NODE; u = frame_parent(s, u)) {
        long f = s->fn[u];
        if (m->fn_seen[f] != walk) {
            m->fn_seen[f] = walk;
            m->incl[f] += w;
            int k = nodes[f].cyc_num;
            if (k && m->cyc_seen[k - 1] != walk) { /* F is K's innermost member */
                m->cyc_seen[k - 1] = walk;
                m->cyc[k - 1] += w;
                if (k != leaf_cyc)
                    m->inner[f] += w;
            }
        }
        long a = callee >= 0 ? find_arc(m, f, callee) : -1;
        if (a >= 0 && m->arc_seen[a] != walk) {
            m->arc_seen[a] = walk;
            m->arc_total[a] += w;
            if (callee == f0 || (leaf_cyc && nodes[callee].cyc_num == leaf_cyc))
                m->arc_self[a] += w;
        }
        callee = f;
    }
}

static double at_least_0(double x)
{
    return x > 0 ? x : 0;
}

/* Puts the measured times where the printers read the propagated ones. */
static void apply(struct measure *m)
{
    struct callgraph *g = m->g;
    for (size_t i = 0; i < g->nsyms; i++) {
        struct cg_node *n = &g->nodes[i];
        n->prop_self = m->self[i];
        n->incl_time = m->incl[i];
        n->prop_child = n->cyc_num ? m->inner[i] : at_least_0(m->incl[i] - m->self[i]);
        n->child_time = n->prop_child;
    }
    for (size_t k = 0; k < g->ncycles; k++) {
        struct cg_node *h = &g->nodes[g->nsyms + k];
        h->prop_self = 0;
        for (int x = h->cyc_next; x != CG_NONE; x = g->nodes[x].cyc_next)
            h->prop_self += g->nodes[x].prop_self;
        h->incl_time = m->cyc[k];
        h->prop_child = at_least_0(m->cyc[k] - h->prop_self);
        h->child_time = h->prop_child;
    }
    for (size_t a = 0; a < g->narcs; a++) {
        g->arcs[a].time = m->arc_self[a];
        g->arcs[a].child_time = m->arc_total[a] - m->arc_self[a];
    }
    g->print_time = m->total;
    g->measured = 1;
}

#ifndef NDEBUG
static void check_measured(const struct measure *m)
{
    const struct callgraph *g = m->g;
    double eps = 1e-9 * (m->total + 1);
    for (size_t i = 0; i < g->nsyms; i++)
        assert(m->incl[i] >= m->self[i] - eps && m->incl[i] <= m->total + eps);
    for (size_t a = 0; a < g->narcs; a++)
        assert(m->arc_self[a] <= m->arc_total[a] + eps && m->arc_total[a] <= m->total + eps);
    for (size_t k = 0; k < g->ncycles; k++) {
        const struct cg_node *h = &g->nodes[g->nsyms + k];
        double sum = 0;
        for (int x = h->cyc_next; x != CG_NONE; x = g->nodes[x].cyc_next)
            sum += g->nodes[x].prop_self + g->nodes[x].prop_child;
        assert(sum <= m->cyc[k] + eps && sum >= m->cyc[k] - eps);
    }
}
#endif

int stacks_measure(struct callgraph *g, const struct stacks *s, char *err, size_t errsz)
{
    struct measure m;
    int rc = measure_init(&m, g, s);
    for (uint32_t i = 0; rc == 0 && i < s->n; i++)
        if (s->d->stacks[i].count && stack_counts(&m, i))
            count_stack(&m, i, (double)s->d->stacks[i].count);
    if (rc == 0) {
        apply(&m);
#ifndef NDEBUG
        check_measured(&m);
#endif
        rc = cg_order(g);
    }
    measure_free(&m);
    if (rc != 0)
        snprintf(err, errsz, "out of memory measuring the stacks");
    return rc;
}

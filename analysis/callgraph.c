/* The call-graph analysis of the gprof paper, computed the way GNU gprof computes it.
 *
 * Steps, in order (cg_build):
 *  1. Histogram bins are credited to functions.  A bin straddling a
 *     function boundary is split in proportion to the overlap, with
 *     addresses in 2-byte units and bin bounds truncated as gprof does.
 *  2. Arcs are tallied per (caller, callee) function pair.  An arc whose
 *     call site or target lies in no known function is dropped entirely
 *     (GNU gprof 2.40 does the same), so a function called only from
 *     outside the executable, like main, shows as <spontaneous>.  Arcs
 *     named by -k are dropped too; calls found in the text (-c) are then
 *     added with count 0.
 *  3. Tarjan's algorithm finds the strongly connected components; those
 *     of two or more functions are the cycles.  It runs depth first from
 *     each function in address order, following arcs in list order, the
 *     traversal gprof makes, and from it come gprof's numbering: an SCC's
 *     head is its first member visited, its members are chained in visit
 *     (preorder) order, its topological number is the count of SCCs
 *     completed when it completes, and cycles are numbered 1..N by the
 *     address of their heads.
 *  4. Top down, each function or cycle gets its propagation fraction from
 *     its callers; bottom up, time flows to callers:
 *     T_r = S_r + sum over callees e of T_e * C_e^r / C_e, where a cycle
 *     is one node whose calls are those from outside it.
 *
 * Arc lists are kept newest-first, as gprof links them, because several
 * later steps visit them in list order and ties are broken by it.
 */
#include "callgraph.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNVISITED (-1)
#define ALL_EXCL  ((1u << CG_EXCL_FLAT) | (1u << CG_EXCL_GRAPH) | (1u << CG_EXCL_TIME))

/* gprof leaves the profiling runtime's own helpers out of the profile. */
static int is_default_excluded(const char *name)
{
    static const char *const list[] = {"_gprof_mcount",     "mcount",    "_mcount", "__mcount",
                                       "__mcount_internal", "__mcleanup"};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        if (strcmp(name, list[i]) == 0)
            return 1;
    return 0;
}

static void msort_rec(int *b, size_t n, int *tmp, int (*cmp)(int, int, const void *),
                      const void *ctx)
{
    if (n <= 1)
        return;
    size_t n1 = n / 2, n2 = n - n1;
    int *b1 = b, *b2 = b + n1, *t = tmp;
    msort_rec(b1, n1, tmp, cmp, ctx);
    msort_rec(b2, n2, tmp, cmp, ctx);
    while (n1 > 0 && n2 > 0) {
        if (cmp(*b1, *b2, ctx) <= 0) {
            *t++ = *b1++;
            n1--;
        } else {
            *t++ = *b2++;
            n2--;
        }
    }
    if (n1 > 0)
        memcpy(t, b1, n1 * sizeof *t);
    memcpy(b, tmp, (n - n2) * sizeof *b);
}

void cg_sort(int *idx, size_t n, int (*cmp)(int, int, const void *), const void *ctx)
{
    int *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp) {
        /* Without scratch memory fall back to insertion sort: same order. */
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && cmp(idx[j - 1], idx[j], ctx) > 0; j--) {
                int s = idx[j];
                idx[j] = idx[j - 1];
                idx[j - 1] = s;
            }
        return;
    }
    msort_rec(idx, n, tmp, cmp, ctx);
    free(tmp);
}

static void init_node(struct cg_node *n, int self)
{
    memset(n, 0, sizeof *n);
    n->cyc_head = self;
    n->cyc_next = CG_NONE;
    n->first_child = CG_NONE;
    n->first_parent = CG_NONE;
    n->top_order = 0;
}

int cg_selected(const struct callgraph *g, int node, enum cg_table incl)
{
    unsigned t = g->nodes[node].tables;
    if (t & (1u << incl))
        return 1;
    return g->table_len[incl] == 0 && !(t & (1u << (incl + 1)));
}

int cg_name_matches(const char *spec, const char *name)
{
    size_t n = strlen(spec);
    return strncmp(spec, name, n) == 0 &&
           (name[n] == '\0' || (name[n] == ' ' && name[n + 1] == '[' && spec[0] != '\0'));
}

/* Puts each function in the tables that name it and counts the members. */
static void fill_tables(struct callgraph *g, const struct cg_opts *o)
{
    for (size_t i = 0; i < g->nsyms; i++) {
        struct cg_node *n = &g->nodes[i];
        if (is_default_excluded(n->name) || n->is_runtime)
            n->tables |= ALL_EXCL;
        for (size_t k = 0; o && k < o->nspecs; k++)
            if (cg_name_matches(o->specs[k].name, n->name))
                n->tables |= 1u << o->specs[k].table;
        if (o && o->sym_tables)
            n->tables |= o->sym_tables[i];
        for (int t = 0; t < CG_NTABLES; t++)
            if (n->tables & (1u << t))
                g->table_len[t]++;
    }
    for (size_t i = 0; i < g->nsyms; i++)
        g->nodes[i].excluded = !cg_selected(g, (int)i, CG_INCL_FLAT);
}

static int init_nodes(struct callgraph *g, const struct symtab *st, const struct cg_opts *o)
{
    g->nsyms = st->n;
    g->nodes = malloc((st->n ? st->n : 1) * sizeof *g->nodes);
    if (!g->nodes)
        return -1;
    for (size_t i = 0; i < st->n; i++) {
        init_node(&g->nodes[i], (int)i);
        g->nodes[i].name = st->syms[i].name;
        g->nodes[i].file = st->syms[i].file;
        g->nodes[i].is_runtime = st->syms[i].is_runtime;
    }
    fill_tables(g, o);
    return 0;
}

/* ---- 1. histogram ---- */

/* End (exclusive, in 2-byte units) of symbol J's share of the histogram:
 * the next symbol's start. */
static uint64_t scaled_end(const struct symtab *st, size_t j)
{
    if (j + 1 < st->n)
        return st->syms[j + 1].addr / 2;
    const struct symtab_sym *s = &st->syms[j];
    return s->end_addr >= s->addr ? (s->end_addr + 1) / 2 : s->addr / 2;
}

/* Samples go to the function, or out of the total when the flat tables
 * leave the function out (as gprof does). */
static void credit(struct callgraph *g, size_t j, double c, double *removed)
{
    if (g->nodes[j].excluded) {
        g->total_time -= c;
        *removed += c;
    } else {
        g->nodes[j].self_time += c;
    }
}

/* Splits each bin among the functions its range overlaps, in proportion
 * to the overlap, so a sample is shared out and never credited twice.
 * Bin edges are truncated as gprof truncates them, so a bin's shares can
 * total its count times (truncated width / scale) rather than exactly its
 * count; *BOUND adds up that ceiling for the debug check. */
static void assign_hist(struct callgraph *g, const struct symtab *st, const struct gmon_hist *h,
                        double *removed, double *bound)
{
    uint64_t lowpc = h->low_pc / 2;
    double scale = g->hist_scale;
    size_t k = 1;
    for (uint32_t i = 0; i < h->nbins; i++) {
        if (!h->bins[i])
            continue;
        uint64_t bin_lo = lowpc + (uint64_t)(scale * i);
        uint64_t bin_hi = lowpc + (uint64_t)(scale * (i + 1));
        double count = h->bins[i];
        g->total_time += count;
        *bound += count * (double)(bin_hi - bin_lo) / scale;
        for (size_t j = k - 1; j < st->n; k = ++j) {
            uint64_t sym_lo = st->syms[j].addr / 2, sym_hi = scaled_end(st, j);
            if (bin_hi < sym_lo)
                break;
            if (bin_lo >= sym_hi)
                continue;
            uint64_t overlap =
                (bin_hi < sym_hi ? bin_hi : sym_hi) - (bin_lo > sym_lo ? bin_lo : sym_lo);
            if (overlap > 0)
                credit(g, j, (double)overlap * count / scale, removed);
        }
    }
}

static void assign_samples(struct callgraph *g, const struct symtab *st, const struct gmon_data *gd)
{
    g->rate = 0;
    if (gd->nhists == 0)
        return;
    const struct gmon_hist *f = &gd->hists[0];
    g->has_hist = 1;
    g->rate = f->rate;
    memcpy(g->dimen, f->dimen, sizeof g->dimen);
    g->dimen_abbrev = f->dimen_abbrev;
    g->hist_scale = (double)((f->high_pc - f->low_pc) / 2) / f->nbins;
    double removed = 0.0, bound = 0.0;
    for (size_t i = 0; i < gd->nhists; i++)
        assign_hist(g, st, &gd->hists[i], &removed, &bound);
#ifndef NDEBUG
    /* No sample is credited twice: what the functions got plus what was
     * taken out of the total stays within the bins' shares. */
    double credited = removed;
    for (size_t i = 0; i < g->nsyms; i++)
        credited += g->nodes[i].self_time;
    assert(credited <= bound * (1 + 1e-9) + 1e-9);
#endif
}

/* Exact-pc samples: each goes to the function that holds its pc; a pc in
 * no function is counted in the total only (like a histogram bin outside
 * every symbol). */
static void assign_pc_samples(struct callgraph *g, const struct symtab *st, const struct cg_opts *o)
{
    g->has_hist = 1;
    g->rate = o->pc_rate > 0 ? o->pc_rate : 1;
    snprintf(g->dimen, sizeof g->dimen, "%s", o->pc_unit ? o->pc_unit : "seconds");
    snprintf(g->event, sizeof g->event, "%s", o->event ? o->event : "");
    g->dimen_abbrev = g->dimen[0];
    g->hist_scale = 0.5; /* a sample names one byte: its pc */
    double removed = 0.0;
    for (size_t i = 0; i < o->npc_samples; i++) {
        double c = (double)o->pc_samples[i].count;
        g->total_time += c;
        long j = symtab_lookup(st, o->pc_samples[i].pc);
        if (j >= 0)
            credit(g, (size_t)j, c, &removed);
    }
}

/* ---- 2. arcs ---- */

static int find_arc(const struct callgraph *g, int parent, int child)
{
    for (int a = g->nodes[parent].first_child; a != CG_NONE; a = g->arcs[a].next_child)
        if (g->arcs[a].child == child)
            return a;
    return CG_NONE;
}

static int add_arc(struct callgraph *g, int parent, int child, uint64_t count, size_t *cap)
{
    int a = find_arc(g, parent, child);
    if (a != CG_NONE) {
        g->arcs[a].count += count;
        return 0;
    }
    if (g->narcs == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        struct cg_arc *n = realloc(g->arcs, ncap * sizeof *n);
        if (!n)
            return -1;
        g->arcs = n;
        *cap = ncap;
    }
    a = (int)g->narcs++;
    g->arcs[a] = (struct cg_arc){
        parent, child, count, 0, 0, g->nodes[parent].first_child, g->nodes[child].first_parent, 0};
    g->nodes[parent].first_child = a;
    g->nodes[child].first_parent = a;
    return 0;
}

/* Whether -k left out the arcs from function P to function C (a NULL
 * side of a -k matches any function). */
static int arc_excluded(const struct callgraph *g, const struct cg_opts *o, long p, long c)
{
    for (size_t k = 0; o && k < o->nexcl_arcs; k++)
        if ((!o->excl_arcs[k].from || cg_name_matches(o->excl_arcs[k].from, g->nodes[p].name)) &&
            (!o->excl_arcs[k].to || cg_name_matches(o->excl_arcs[k].to, g->nodes[c].name)))
            return 1;
    return 0;
}

/* An arc seen only in sampled stacks goes last in both lists, after the
 * counted ones, so the traversal below meets counted arcs in gprof's
 * order and a profile whose stacks add nothing numbers its cycles as
 * gprof does. */
static void append_arc(struct callgraph *g, int a)
{
    int *link = &g->nodes[g->arcs[a].parent].first_child;
    while (*link != CG_NONE)
        link = &g->arcs[*link].next_child;
    *link = a;
    link = &g->nodes[g->arcs[a].child].first_parent;
    while (*link != CG_NONE)
        link = &g->arcs[*link].next_parent;
    *link = a;
}

static int add_stack_arc(struct callgraph *g, const struct cg_opts *o,
                         const struct cg_static_call *sc, size_t *cap)
{
    if (sc->caller < 0 || (size_t)sc->caller >= g->nsyms || sc->callee < 0 ||
        (size_t)sc->callee >= g->nsyms || arc_excluded(g, o, sc->caller, sc->callee) ||
        find_arc(g, sc->caller, sc->callee) != CG_NONE)
        return 0;
    if (g->narcs == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        struct cg_arc *n = realloc(g->arcs, ncap * sizeof *n);
        if (!n)
            return -1;
        g->arcs = n;
        *cap = ncap;
    }
    int a = (int)g->narcs++;
    g->arcs[a] = (struct cg_arc){sc->caller, sc->callee, 0, 0, 0, CG_NONE, CG_NONE, 1};
    append_arc(g, a);
    return 0;
}

static int tally_arcs(struct callgraph *g, const struct symtab *st, const struct gmon_data *gd,
                      const struct cg_opts *o)
{
    size_t cap = 0;
    /* every sum of counts below is bounded by this one: if it fits in 64
     * bits, none of them can wrap (a corrupt count near 2^64 would) */
    uint64_t all = 0;
    for (size_t i = 0; i < gd->narcs; i++)
        if (__builtin_add_overflow(all, gd->arcs[i].count, &all))
            return -2;
    for (size_t i = 0; i < gd->narcs; i++) {
        long p = symtab_lookup(st, gd->arcs[i].from_pc);
        long c = symtab_lookup(st, gd->arcs[i].self_pc);
        while (o && o->callee_is_func && c >= 0 && !st->syms[c].is_func)
            c--;
        if (p < 0 || c < 0 || arc_excluded(g, o, p, c))
            continue;
        g->nodes[c].ncalls += gd->arcs[i].count;
        if (add_arc(g, (int)p, (int)c, gd->arcs[i].count, &cap) != 0)
            return -1;
    }
    for (size_t i = 0; o && i < o->nstatic_calls; i++) {
        const struct cg_static_call *sc = &o->static_calls[i];
        if (sc->caller < 0 || (size_t)sc->caller >= g->nsyms || sc->callee < 0 ||
            (size_t)sc->callee >= g->nsyms)
            continue;
        if (add_arc(g, sc->caller, sc->callee, 0, &cap) != 0)
            return -1;
    }
    for (size_t i = 0; o && i < o->nstack_calls; i++)
        if (add_stack_arc(g, o, &o->stack_calls[i], &cap) != 0)
            return -1;
    return 0;
}

static void count_self_calls(struct callgraph *g)
{
    for (size_t i = 0; i < g->nsyms; i++) {
        int a = find_arc(g, (int)i, (int)i);
        if (a != CG_NONE) {
            g->nodes[i].ncalls -= g->arcs[a].count;
            g->nodes[i].self_calls = g->arcs[a].count;
        }
    }
}

/* ---- 3. strongly connected components (Tarjan) ---- */

/* The traversal state.  pre[n] is n's visit number (UNVISITED before);
 * low[n] the smallest visit number reachable from n's subtree through
 * nodes still on the component stack.  The call stack holds the path
 * being explored, each entry with the next arc to follow; the component
 * stack holds visited nodes whose component is not complete, in visit
 * order, so a component is always the top run of it. */
struct scc {
    struct callgraph *g;
    int *pre, *low;
    int *path, *next_arc, depth;
    int *comp, ncomp;
    unsigned char *on_comp;
    int visits, completed;
};

static void scc_visit(struct scc *s, int n)
{
    s->pre[n] = s->low[n] = s->visits++;
    s->comp[s->ncomp++] = n;
    s->on_comp[n] = 1;
    s->path[s->depth] = n;
    s->next_arc[s->depth++] = s->g->nodes[n].first_child;
}

/* N's subtree is done.  If N is the root of its component, the component
 * is the run of the component stack from N up: it gets the next
 * topological number, and when it has two or more members they are
 * chained from N (the head) in visit order. */
static void scc_finish(struct scc *s, int n)
{
    struct cg_node *nodes = s->g->nodes;
    if (s->low[n] == s->pre[n]) {
        int from = s->ncomp;
        while (s->comp[--from] != n)
            ;
        ++s->completed;
        for (int k = from; k < s->ncomp; k++) {
            int m = s->comp[k];
            s->on_comp[m] = 0;
            nodes[m].top_order = s->completed;
            nodes[m].cyc_head = n;
            nodes[m].cyc_next = k + 1 < s->ncomp ? s->comp[k + 1] : CG_NONE;
        }
        s->ncomp = from;
    }
    if (--s->depth > 0) {
        int parent = s->path[s->depth - 1];
        if (s->low[n] < s->low[parent])
            s->low[parent] = s->low[n];
    }
}

static void scc_from(struct scc *s, int root)
{
    scc_visit(s, root);
    while (s->depth > 0) {
        int u = s->path[s->depth - 1];
        int a = s->next_arc[s->depth - 1];
        if (a == CG_NONE) {
            scc_finish(s, u);
            continue;
        }
        s->next_arc[s->depth - 1] = s->g->arcs[a].next_child;
        int c = s->g->arcs[a].child;
        if (s->pre[c] == UNVISITED)
            scc_visit(s, c);
        else if (s->on_comp[c] && s->pre[c] < s->low[u])
            s->low[u] = s->pre[c];
    }
}

static int number_nodes(struct callgraph *g)
{
    size_t n = g->nsyms ? g->nsyms : 1;
    struct scc s = {g,
                    malloc(n * sizeof(int)),
                    malloc(n * sizeof(int)),
                    malloc(n * sizeof(int)),
                    malloc(n * sizeof(int)),
                    0,
                    malloc(n * sizeof(int)),
                    0,
                    calloc(n, 1),
                    0,
                    0};
    int rc = (s.pre && s.low && s.path && s.next_arc && s.comp && s.on_comp) ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < g->nsyms; i++)
        s.pre[i] = UNVISITED;
    for (size_t i = 0; rc == 0 && i < g->nsyms; i++)
        if (s.pre[i] == UNVISITED)
            scc_from(&s, (int)i);
    free(s.pre);
    free(s.low);
    free(s.path);
    free(s.next_arc);
    free(s.comp);
    free(s.on_comp);
    return rc;
}

/* Counts calls into cycle NUM (header H, first member SYM) from outside it
 * and among its members. */
static void count_cycle_calls(struct callgraph *g, int h, int sym, int num)
{
    struct cg_node *nodes = g->nodes;
    for (int m = sym; m != CG_NONE; m = nodes[m].cyc_next)
        for (int a = nodes[m].first_parent; a != CG_NONE; a = g->arcs[a].next_parent) {
            int p = g->arcs[a].parent;
            if (p == m)
                continue;
            if (nodes[p].cyc_num == num)
                nodes[h].self_calls += g->arcs[a].count;
            else
                nodes[h].ncalls += g->arcs[a].count;
        }
}

/* Gives each cycle a header node, numbered in address order of heads. */
static int link_cycles(struct callgraph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->nsyms; i++)
        if (g->nodes[i].cyc_head == (int)i && g->nodes[i].cyc_next != CG_NONE)
            n++;
    struct cg_node *nodes = realloc(g->nodes, (g->nsyms + n + 1) * sizeof *nodes);
    if (!nodes)
        return -1;
    g->nodes = nodes;
    g->ncycles = n;
    int num = 0;
    for (size_t i = 0; i < g->nsyms; i++) {
        if (!(nodes[i].cyc_head == (int)i && nodes[i].cyc_next != CG_NONE))
            continue;
        int h = (int)g->nsyms + num++;
        init_node(&nodes[h], h);
        nodes[h].print_flag = 1;
        nodes[h].cyc_num = num;
        nodes[h].cyc_next = (int)i;
        for (int m = (int)i; m != CG_NONE; m = nodes[m].cyc_next) {
            nodes[m].cyc_num = num;
            nodes[m].cyc_head = h;
        }
        count_cycle_calls(g, h, (int)i, num);
    }
    return 0;
}

/* ---- 4. propagation ---- */

static void inherit_plain(struct callgraph *g, int child)
{
    struct cg_node *nodes = g->nodes, *c = &nodes[child];
    c->print_flag = 0;
    c->prop_fract = 0.0;
    for (int a = c->first_parent; a != CG_NONE; a = g->arcs[a].next_parent) {
        int p = g->arcs[a].parent;
        if (p == child)
            continue;
        c->print_flag |= nodes[p].print_flag;
        if (c->ncalls != 0)
            c->prop_fract += nodes[p].prop_fract * ((double)g->arcs[a].count / (double)c->ncalls);
    }
}

static void inherit_cycle(struct callgraph *g, int head)
{
    struct cg_node *nodes = g->nodes, *h = &nodes[head];
    h->print_flag = 0;
    h->prop_fract = 0.0;
    for (int m = h->cyc_next; m != CG_NONE; m = nodes[m].cyc_next)
        for (int a = nodes[m].first_parent; a != CG_NONE; a = g->arcs[a].next_parent) {
            int p = g->arcs[a].parent;
            if (nodes[p].cyc_head == head)
                continue;
            h->print_flag |= nodes[p].print_flag;
            if (h->ncalls != 0)
                h->prop_fract +=
                    nodes[p].prop_fract * ((double)g->arcs[a].count / (double)h->ncalls);
        }
    for (int m = head; m != CG_NONE; m = nodes[m].cyc_next) {
        nodes[m].print_flag = h->print_flag;
        nodes[m].prop_fract = h->prop_fract;
    }
}

/* Top down: print flags and propagation fractions. */
static void propagate_flags(struct callgraph *g, const int *top)
{
    int old_head = CG_NONE;
    for (size_t i = g->nsyms; i-- > 0;) {
        int child = top[i];
        struct cg_node *c = &g->nodes[child];
        if (c->cyc_head != old_head) {
            old_head = c->cyc_head;
            if (old_head == child)
                inherit_plain(g, child);
            else
                inherit_cycle(g, old_head);
        }
        if (!c->print_flag)
            c->print_flag = cg_selected(g, child, CG_INCL_GRAPH);
        else if (c->tables & (1u << CG_EXCL_GRAPH))
            c->print_flag = 0;
        if (c->prop_fract == 0.0)
            c->prop_fract = cg_selected(g, child, CG_INCL_TIME) ? 1.0 : 0.0;
        else if (c->tables & (1u << CG_EXCL_TIME))
            c->prop_fract = 0.0;
        c->prop_self = c->self_time * c->prop_fract;
        g->print_time += c->prop_self;
    }
}

static void cycle_time(struct callgraph *g)
{
    for (size_t k = 0; k < g->ncycles; k++) {
        struct cg_node *h = &g->nodes[g->nsyms + k];
        for (int m = h->cyc_next; m != CG_NONE; m = g->nodes[m].cyc_next)
            if (g->nodes[m].prop_fract != 0.0)
                h->self_time += g->nodes[m].self_time;
        h->prop_self = h->prop_fract * h->self_time;
    }
}

/* The node whose time flows along arc A into PARENT, or CG_NONE. */
static int arc_source(const struct callgraph *g, int parent, int a)
{
    const struct cg_node *nodes = g->nodes;
    int child = g->arcs[a].child;
    if (g->arcs[a].count == 0 || child == parent || nodes[child].prop_fract == 0)
        return CG_NONE;
    if (nodes[child].cyc_head != child) {
        if (nodes[parent].cyc_num == nodes[child].cyc_num)
            return CG_NONE;
        child = nodes[child].cyc_head;
    } else if (nodes[parent].top_order <= nodes[child].top_order) {
        return CG_NONE;
    }
    return nodes[child].ncalls == 0 ? CG_NONE : child;
}

static void propagate_time(struct callgraph *g, int parent)
{
    struct cg_node *nodes = g->nodes, *p = &nodes[parent];
    if (p->prop_fract == 0.0)
        return;
    for (int a = p->first_child; a != CG_NONE; a = g->arcs[a].next_child) {
        int child = arc_source(g, parent, a);
        if (child == CG_NONE)
            continue;
        struct cg_arc *arc = &g->arcs[a];
        double frac = (double)arc->count / (double)nodes[child].ncalls;
        arc->time = nodes[child].self_time * frac;
        arc->child_time = nodes[child].child_time * frac;
        double share = arc->time + arc->child_time;
        p->child_time += share;
        double prop_share = p->prop_fract * share;
        p->prop_child += prop_share;
        arc->time *= p->prop_fract;
        arc->child_time *= p->prop_fract;
        if (p->cyc_head != parent) {
            nodes[p->cyc_head].child_time += share;
            nodes[p->cyc_head].prop_child += prop_share;
        }
    }
}

static int cmp_topo(int a, int b, const void *ctx)
{
    const struct callgraph *g = ctx;
    return g->nodes[a].top_order - g->nodes[b].top_order;
}

/* Call-graph order: total time down, cycles first, names without a
 * leading '_' first, more calls first, then by name. */
static int cmp_total(int l, int r, const void *ctx)
{
    const struct cg_node *a = &((const struct callgraph *)ctx)->nodes[l];
    const struct cg_node *b = &((const struct callgraph *)ctx)->nodes[r];
    double diff = (a->prop_self + a->prop_child) - (b->prop_self + b->prop_child);
    if (diff < 0.0)
        return 1;
    if (diff > 0.0)
        return -1;
    if (!a->name)
        return -1;
    if (!b->name)
        return 1;
    if (a->name[0] != '_' && b->name[0] == '_')
        return -1;
    if (a->name[0] == '_' && b->name[0] != '_')
        return 1;
    if (a->ncalls != b->ncalls)
        return a->ncalls > b->ncalls ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int propagate(struct callgraph *g)
{
    int *top = malloc((g->nsyms ? g->nsyms : 1) * sizeof *top);
    if (!top)
        return -1;
    for (size_t i = 0; i < g->nsyms; i++)
        top[i] = (int)i;
    cg_sort(top, g->nsyms, cmp_topo, g);
    propagate_flags(g, top);
    cycle_time(g);
    for (size_t i = 0; i < g->nsyms; i++)
        propagate_time(g, top[i]);
    free(top);
    return 0;
}

static int order_by_total(struct callgraph *g)
{
    size_t n = g->nsyms + g->ncycles;
    free(g->by_total);
    g->by_total = malloc((n ? n : 1) * sizeof *g->by_total);
    if (!g->by_total)
        return -1;
    for (size_t i = 0; i < n; i++)
        g->by_total[i] = (int)i;
    cg_sort(g->by_total, n, cmp_total, g);
    for (size_t i = 0; i < n; i++)
        g->nodes[g->by_total[i]].index = (int)i + 1;
    return 0;
}

/* gprof's test for printing an entry in the call graph. */
static int gprof_entry(const struct cg_node *n, int show_zeros)
{
    return n->print_flag &&
           (show_zeros || n->ncalls || n->self_calls || n->prop_self != 0 || n->prop_child != 0);
}

/* Dense numbering: a function has an entry when gprof would print one, or
 * when it was sampled or has an arc (so the entries naming it as caller or
 * callee point to one); a cycle when one of its members has one.  Entries
 * are numbered 1..N in call-graph order, the rest after them. */
static void number_entries(struct callgraph *g, int show_zeros)
{
    struct cg_node *nodes = g->nodes;
    size_t n = g->nsyms + g->ncycles;
    for (size_t i = 0; i < g->nsyms; i++)
        nodes[i].has_entry =
            gprof_entry(&nodes[i], show_zeros) ||
            (nodes[i].print_flag && (nodes[i].self_time != 0 || nodes[i].first_parent != CG_NONE ||
                                     nodes[i].first_child != CG_NONE));
    for (size_t i = g->nsyms; i < n; i++) {
        nodes[i].has_entry = gprof_entry(&nodes[i], show_zeros);
        for (int m = nodes[i].cyc_next; m != CG_NONE; m = nodes[m].cyc_next)
            nodes[i].has_entry |= nodes[m].has_entry;
    }
    int next = 1;
    for (int pass = 1; pass >= 0; pass--)
        for (size_t i = 0; i < n; i++)
            if (nodes[g->by_total[i]].has_entry == pass)
                nodes[g->by_total[i]].index = next++;
    g->dense_index = 1;
    g->zero_entries = show_zeros;
}

int cg_order(struct callgraph *g)
{
    int rc = order_by_total(g);
    if (rc == 0 && g->dense_index)
        number_entries(g, g->zero_entries);
    return rc;
}

#ifndef NDEBUG
/* The model's invariants, checked in debug builds in O(nodes + arcs):
 * the members of a cycle share its number and header; an arc between two
 * components goes from a higher topological number to a lower one; and
 * no function or cycle has more time propagated to it than was sampled. */
static void check_invariants(const struct callgraph *g)
{
    const struct cg_node *nodes = g->nodes;
    double sampled = 0.0;
    for (size_t i = 0; i < g->nsyms; i++)
        sampled += nodes[i].self_time;
    for (size_t k = 0; k < g->ncycles; k++) {
        int h = (int)(g->nsyms + k);
        for (int m = nodes[h].cyc_next; m != CG_NONE; m = nodes[m].cyc_next)
            assert(nodes[m].cyc_num == nodes[h].cyc_num && nodes[m].cyc_head == h &&
                   nodes[m].top_order == nodes[nodes[h].cyc_next].top_order);
    }
    for (size_t a = 0; a < g->narcs; a++) {
        const struct cg_node *p = &nodes[g->arcs[a].parent], *c = &nodes[g->arcs[a].child];
        assert(p->cyc_head == c->cyc_head ? p->top_order == c->top_order
                                          : p->top_order > c->top_order);
    }
    for (size_t i = 0; i < g->nsyms + g->ncycles; i++)
        assert(nodes[i].prop_self + nodes[i].prop_child <= sampled * (1 + 1e-9) + 1e-9);
}
#endif

int cg_build(struct callgraph *g, const struct symtab *st, const struct gmon_data *gd, char *err,
             size_t errsz)
{
    return cg_build_opts(g, st, gd, NULL, err, errsz);
}

int cg_build_opts(struct callgraph *g, const struct symtab *st, const struct gmon_data *gd,
                  const struct cg_opts *opts, char *err, size_t errsz)
{
    memset(g, 0, sizeof *g);
    strcpy(g->dimen, "seconds");
    g->dimen_abbrev = 's';
    int rc = init_nodes(g, st, opts);
    if (rc == 0) {
        if (opts && (opts->npc_samples || opts->pc_unit)) /* a cgprof profile, even unsampled */
            assign_pc_samples(g, st, opts);
        else
            assign_samples(g, st, gd);
        rc = tally_arcs(g, st, gd, opts);
    }
    if (rc == 0) {
        count_self_calls(g);
        rc = number_nodes(g);
    }
    if (rc == 0)
        rc = link_cycles(g);
    if (rc == 0)
        rc = propagate(g);
    if (rc == 0)
        rc = order_by_total(g);
    if (rc == 0 && opts && opts->dense_index)
        number_entries(g, opts->show_zeros);
#ifndef NDEBUG
    if (rc == 0)
        check_invariants(g);
#endif
    if (rc == -2) {
        snprintf(err, errsz, "the call counts add up to more than 2^64: the profile is corrupt");
        cg_free(g);
    } else if (rc != 0) {
        snprintf(err, errsz, "out of memory building the call graph");
        cg_free(g);
    }
    return rc;
}

void cg_free(struct callgraph *g)
{
    free(g->nodes);
    free(g->arcs);
    free(g->by_total);
    memset(g, 0, sizeof *g);
}

/* The export model (export.h): the call graph plus the sampled stacks,
 * symbolized with the call graph's own symbol table, and the sums the
 * formats share (stacks merged by function, inclusive samples, the cost
 * of each caller -> callee pair). */
#include "export.h"
#include "gprof_text.h"
#include "linemap.h"
#include "modmap.h"

#include <stdlib.h>
#include <string.h>

/* A map from a pair of ints to an index, open addressing. */
struct pairmap {
    int64_t *keys; /* -1: empty */
    int *vals;
    size_t cap, n;
};

static uint64_t pair_key(int a, int b)
{
    return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
}

static size_t pair_slot(const struct pairmap *pm, uint64_t k)
{
    uint64_t h = k * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (pm->cap - 1);
}

static int pm_grow(struct pairmap *pm)
{
    size_t cap = pm->cap ? pm->cap * 2 : 1024;
    int64_t *k = malloc(cap * sizeof *k);
    int *v = malloc(cap * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        k[i] = -1;
    struct pairmap old = *pm;
    pm->keys = k;
    pm->vals = v;
    pm->cap = cap;
    for (size_t i = 0; i < old.cap; i++)
        if (old.keys[i] >= 0) {
            size_t s = pair_slot(pm, (uint64_t)old.keys[i]);
            while (pm->keys[s] >= 0)
                s = (s + 1) & (cap - 1);
            pm->keys[s] = old.keys[i];
            pm->vals[s] = old.vals[i];
        }
    free(old.keys);
    free(old.vals);
    return 0;
}

/* The value of (A, B), or -1; with ADD >= 0 a missing pair gets ADD (and
 * -2 means out of memory). */
static int pm_get(struct pairmap *pm, int a, int b, int add)
{
    uint64_t k = pair_key(a, b) & INT64_MAX;
    if (pm->cap) {
        for (size_t s = pair_slot(pm, k); pm->keys[s] >= 0; s = (s + 1) & (pm->cap - 1))
            if ((uint64_t)pm->keys[s] == k)
                return pm->vals[s];
    }
    if (add < 0)
        return -1;
    if ((pm->n + 1) * 2 > pm->cap && pm_grow(pm) != 0)
        return -2;
    size_t s = pair_slot(pm, k);
    while (pm->keys[s] >= 0)
        s = (s + 1) & (pm->cap - 1);
    pm->keys[s] = (int64_t)k;
    pm->vals[s] = add;
    pm->n++;
    return add;
}

static void pm_free(struct pairmap *pm)
{
    free(pm->keys);
    free(pm->vals);
    memset(pm, 0, sizeof *pm);
}

static int add_node(struct ex_model *m, size_t *cap, int parent, int func, uint64_t pc, double c)
{
    if (m->nnodes == *cap) {
        size_t ncap = *cap ? *cap * 2 : 256;
        struct ex_node *n = realloc(m->nodes, ncap * sizeof *n);
        if (!n)
            return -1;
        m->nodes = n;
        *cap = ncap;
    }
    m->nodes[m->nnodes++] = (struct ex_node){parent, func, pc, c};
    m->total += c;
    return 0;
}

/* The function holding PC, as the report finds it: for a cgprof profile
 * a pc in no symbol is its module's entry "[libfoo.so]" (modmap_owned),
 * never the symbol before it.  -1 only for a pc the table cannot hold. */
static int func_of(const struct ex_model *m, uint64_t pc)
{
    long j = symtab_lookup(m->st, m->d ? modmap_owned(m->st, pc) : pc);
    return j >= 0 ? (int)j : -1;
}

static int build_nodes(struct ex_model *m)
{
    size_t cap = 0;
    const struct cgdata *d = m->d;
    const struct callgraph *g = m->g;
    if (d && d->has_stacks) {
        /* as the report's stacks (stacks.c): libcgprof's own frames are
         * not the program's -- a frame of it between two others is left
         * out (they are adjacent), a stack ending in it is not counted */
        m->has_stacks = 1;
        int *node_of = malloc((d->nstacks + 1) * sizeof *node_of); /* stack node -> ours */
        if (!node_of)
            return -1;
        int rc = 0;
        for (size_t i = 0; rc == 0 && i < d->nstacks; i++) {
            const struct cgdata_stack_node *s = &d->stacks[i];
            int parent = s->parent == CGDATA_NO_PARENT ? -1 : node_of[s->parent];
            if (s->module == CGDATA_CUT_MODULE) {
                node_of[i] = (int)m->nnodes;
                rc = add_node(m, &cap, parent, EX_TRUNCATED, 0, (double)s->count);
                continue;
            }
            uint64_t pc = modmap_pc(d, s->module, s->addr);
            int f = func_of(m, pc);
            if (f < 0 || m->st->syms[f].is_runtime) {
                node_of[i] = parent; /* its samples are left out, as the report does */
                continue;
            }
            double c = g->nodes[f].excluded ? 0 : (double)s->count;
            node_of[i] = (int)m->nnodes;
            rc = add_node(m, &cap, parent, f, pc, c);
        }
        free(node_of);
        if (rc != 0)
            return -1;
    } else if (d) {
        for (size_t i = 0; i < d->nsamples; i++) {
            uint64_t pc = modmap_pc(d, d->samples[i].module, d->samples[i].addr);
            int f = func_of(m, pc);
            if (f >= 0 && !g->nodes[f].excluded && d->samples[i].count &&
                add_node(m, &cap, -1, f, pc, (double)d->samples[i].count) != 0)
                return -1;
        }
    } else {
        for (size_t i = 0; i < g->nsyms; i++)
            if (g->nodes[i].self_time > 0 &&
                add_node(m, &cap, -1, (int)i, m->st->syms[i].addr, g->nodes[i].self_time) != 0)
                return -1;
    }
    return 0;
}

int ex_build(struct ex_model *m, const struct callgraph *g, const struct symtab *st,
             const struct cgdata *d, const char *prog, int demangle, char *err, size_t errsz)
{
    memset(m, 0, sizeof *m);
    m->g = g;
    m->st = st;
    m->d = d;
    m->prog = prog;
    if (d) {
        m->timed = d->timed != 0;
        m->rate = d->timed && d->rate ? (double)d->rate : 1.0;
        m->unit_ns = d->timed ? (d->period ? (double)d->period : 1e9 / m->rate) : 0;
        snprintf(m->event, sizeof m->event, "%s", d->event[0] ? d->event : "samples");
    } else {
        m->timed = 1;
        m->rate = g->rate > 0 ? g->rate : 1.0;
        m->unit_ns = 1e9 / m->rate;
        snprintf(m->event, sizeof m->event, "cpu");
    }
    m->names = calloc(g->nsyms + 1, sizeof *m->names);
    if (!m->names || build_nodes(m) != 0) {
        snprintf(err, errsz, "out of memory building the export");
        ex_free(m);
        return -1;
    }
    for (size_t i = 0; demangle && i < g->nsyms; i++)
        m->names[i] = gprof_text_demangle(g->nodes[i].name);
    return 0;
}

void ex_free(struct ex_model *m)
{
    for (size_t i = 0; m->names && i < m->g->nsyms; i++)
        free(m->names[i]);
    free(m->names);
    for (size_t i = 0; i < m->ninl; i++)
        free(m->inl_names[i]);
    free(m->inl_names);
    free(m->nodes);
    memset(m, 0, sizeof *m);
}

const char *ex_name(const struct ex_model *m, int func)
{
    if (func < 0)
        return "[truncated]";
    if (EX_IS_INLINED(m, func))
        return m->inl_names[func - (int)m->g->nsyms - 1];
    return m->names[func] ? m->names[func] : m->g->nodes[func].name;
}

/* Only gmon.out's symbol table keeps its file names alive: modmap copies
 * a module's symbols but not the file names they point to. */
const char *ex_file(const struct ex_model *m, int func, const char *fallback)
{
    if (m->d || func < 0 || !m->g->nodes[func].file)
        return fallback;
    return m->g->nodes[func].file;
}

/* The shown name of inlined function NAME at PC: NAME in the executable,
 * "NAME [libfoo.so]" in a library, as the library's other functions are
 * named (malloc'd; NULL out of memory). */
static char *inl_shown(const struct ex_model *m, uint64_t pc, const char *name)
{
    const char *tag = modmap_tag(m->d, pc);
    size_t need = strlen(name) + (tag ? strlen(tag) + 3 : 0) + 1;
    char *s = malloc(need);
    if (s && tag)
        snprintf(s, need, "%s [%s]", name, tag);
    else if (s)
        memcpy(s, name, need); /* DW_AT_name: never mangled */
    return s;
}

static int inl_find(const struct ex_model *m, const char *shown)
{
    for (size_t i = 0; i < m->ninl; i++) /* few distinct names: a scan will do */
        if (strcmp(m->inl_names[i], shown) == 0)
            return (int)(m->g->nsyms + 1 + i);
    return -1;
}

/* The func standing for inlined function NAME at PC, added if new; -1
 * out of memory. */
static int inl_func(struct ex_model *m, uint64_t pc, const char *name, size_t *cap)
{
    char *shown = inl_shown(m, pc, name);
    if (!shown)
        return -1;
    int f = inl_find(m, shown);
    if (f >= 0) {
        free(shown);
        return f;
    }
    if (m->ninl == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        char **n = realloc(m->inl_names, ncap * sizeof *n);
        if (!n) {
            free(shown);
            return -1;
        }
        m->inl_names = n;
        *cap = ncap;
    }
    m->inl_names[m->ninl++] = shown;
    return (int)(m->g->nsyms + m->ninl);
}

int ex_inlined_func(const struct ex_model *m, uint64_t pc, const char *name)
{
    char *shown = inl_shown(m, pc, name);
    int f = shown ? inl_find(m, shown) : -1;
    free(shown);
    return f;
}

int ex_inline(struct ex_model *m, char *err, size_t errsz)
{
    if (!m->d || m->nnodes == 0)
        return 0;
    struct linemap lm;
    if (linemap_init(&lm, m->d, m->prog) != 0)
        goto oom;
    lm.flags = DWI_INLINE;
    struct ex_node *old = m->nodes;
    size_t nold = m->nnodes, cap = 0, ncap = 0;
    int *map = malloc((nold + 1) * sizeof *map);
    double total = m->total;
    int rc = map ? 0 : -1;
    m->nodes = NULL;
    m->nnodes = 0;
    for (size_t i = 0; rc == 0 && i < nold; i++) {
        const struct ex_node *x = &old[i];
        int parent = x->parent >= 0 ? map[x->parent] : -1;
        const struct dwi_inl *chain[EX_MAX_INLINE];
        size_t n = x->func >= 0 ? linemap_inline(&lm, x->pc, chain, EX_MAX_INLINE) : 0;
        if (n > EX_MAX_INLINE)
            n = EX_MAX_INLINE;
        rc = add_node(m, &cap, parent, x->func, x->pc, n ? 0 : x->count);
        /* outermost inlined function first, the samples on the innermost */
        for (size_t j = n; rc == 0 && j-- > 0;) {
            int f = inl_func(m, x->pc, chain[j]->name, &ncap);
            rc = f < 0 ? -1 : add_node(m, &cap, (int)m->nnodes - 1, f, x->pc, j ? 0 : x->count);
        }
        map[i] = (int)m->nnodes - 1;
    }
    free(map);
    free(old);
    linemap_free(&lm);
    m->total = total;
    if (rc == 0)
        return 0;
oom:
    snprintf(err, errsz, "out of memory reading the inlined functions");
    return -1;
}

int ex_inline_calls(const struct ex_model *m, struct linemap *lm, struct ex_moved **out, size_t *n)
{
    const struct cgdata *d = m->d;
    size_t k = 0;
    *out = NULL;
    *n = 0;
    if (!d || !m->ninl || !lm || !d->narcs)
        return 0;
    struct ex_moved *v = malloc(d->narcs * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < d->narcs; i++) {
        const struct cgdata_arc *a = &d->arcs[i];
        uint64_t from = modmap_pc(d, a->from_module, a->from_addr);
        /* the functions as the call graph's arcs have them (src_sites_build's) */
        long caller = symtab_lookup(m->st, modmap_owned_return(m->st, from));
        long callee =
            symtab_lookup(m->st, modmap_owned(m->st, modmap_pc(d, a->self_module, a->self_addr)));
        if (caller < 0 || callee < 0 || !from || a->count == 0)
            continue;
        const struct dwi_inl *chain[EX_MAX_INLINE];
        size_t nc = linemap_inline(lm, from - 1, chain, EX_MAX_INLINE);
        int inl = -1;
        for (size_t j = 0; j < nc && j < EX_MAX_INLINE && inl < 0; j++)
            inl = ex_inlined_func(m, from - 1, chain[j]->name);
        if (inl >= 0)
            v[k++] = (struct ex_moved){(int)caller, (int)callee, inl, a->count};
    }
    *out = v;
    *n = k;
    return 0;
}

int ex_func_tree(const struct ex_model *m, struct ex_fnode **out, size_t *n)
{
    struct ex_fnode *t = malloc((m->nnodes + 1) * sizeof *t);
    int *map = malloc((m->nnodes + 1) * sizeof *map);
    struct pairmap pm = {0};
    size_t k = 0;
    if (!t || !map)
        goto oom;
    for (size_t i = 0; i < m->nnodes; i++) {
        const struct ex_node *x = &m->nodes[i];
        int fp = x->parent >= 0 ? map[x->parent] : -1;
        int id = pm_get(&pm, fp, x->func, (int)k);
        if (id == -2)
            goto oom;
        if (id == (int)k)
            t[k++] = (struct ex_fnode){fp, x->func, 0, 0};
        map[i] = id;
        t[id].self += x->count;
    }
    /* parents come first: totals gather from the last node up */
    for (size_t i = k; i-- > 0;) {
        t[i].total += t[i].self;
        if (t[i].parent >= 0)
            t[t[i].parent].total += t[i].total;
    }
    free(map);
    pm_free(&pm);
    *out = t;
    *n = k;
    return 0;
oom:
    free(t);
    free(map);
    pm_free(&pm);
    return -1;
}

/* The functions on the path from fnode I to the root, root first, in
 * PATH (at most CAP); their number. */
static size_t root_path(const struct ex_fnode *t, int i, int *path, size_t cap)
{
    size_t d = 0;
    for (int j = i; j >= 0; j = t[j].parent)
        d++;
    size_t len = d < cap ? d : cap, k = d;
    for (int j = i; j >= 0; j = t[j].parent)
        if (--k < len)
            path[k] = j;
    return len;
}

static size_t tree_depth(const struct ex_fnode *t, size_t n)
{
    size_t best = 1;
    int *depth = malloc((n + 1) * sizeof *depth);
    if (!depth)
        return n + 1;
    for (size_t i = 0; i < n; i++) {
        depth[i] = t[i].parent >= 0 ? depth[t[i].parent] + 1 : 1;
        if ((size_t)depth[i] > best)
            best = (size_t)depth[i];
    }
    free(depth);
    return best;
}

/* Runs the per-sample walk behind ex_inclusive and ex_edge_costs. */
static int walk(const struct ex_model *m, double *incl, struct ex_edge **edges, size_t *nedges)
{
    struct ex_fnode *t;
    size_t n;
    if (ex_func_tree(m, &t, &n) != 0)
        return -1;
    /* a slot per function: the call graph's, the truncated frames' (nsyms)
     * and the inlined functions' (ex_inline) */
    size_t nf = m->g->nsyms + 1 + m->ninl, depth = tree_depth(t, n);
    int *path = malloc((depth + 1) * sizeof *path);
    unsigned *stamp = calloc(nf, sizeof *stamp);
    struct pairmap pm = {0};
    struct ex_edge *e = NULL;
    size_t ne = 0, ecap = 0;
    int rc = path && stamp ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (t[i].self <= 0)
            continue;
        size_t len = root_path(t, (int)i, path, depth + 1);
        /* slot nsyms stands for the truncated frames; each function
         * counts at its outermost frame, through the call into it */
        unsigned s = (unsigned)i + 1;
        for (size_t k = 0; k < len; k++) {
            int callee = t[path[k]].func;
            size_t slot = callee >= 0 ? (size_t)callee : m->g->nsyms;
            if (stamp[slot] == s)
                continue;
            stamp[slot] = s;
            if (incl && callee >= 0)
                incl[callee] += t[i].self;
            int f = k > 0 ? t[path[k - 1]].func : 0;
            if (!edges || k == 0 || callee < 0)
                continue;
            int id = pm_get(&pm, f, callee, (int)ne);
            if (id == -2) {
                rc = -1;
                break;
            }
            if (id == (int)ne) {
                if (ne == ecap) {
                    ecap = ecap ? ecap * 2 : 256;
                    struct ex_edge *ne2 = realloc(e, ecap * sizeof *e);
                    if (!ne2) {
                        rc = -1;
                        break;
                    }
                    e = ne2;
                }
                e[ne++] = (struct ex_edge){f, callee, 0};
            }
            e[id].cost += t[i].self;
        }
    }
    free(path);
    free(stamp);
    free(t);
    pm_free(&pm);
    if (rc != 0) {
        free(e);
        return -1;
    }
    if (edges) {
        *edges = e;
        *nedges = ne;
    } else {
        free(e);
    }
    return 0;
}

int ex_inclusive(const struct ex_model *m, double **out)
{
    double *incl = calloc(m->g->nsyms + 1 + m->ninl, sizeof *incl);
    if (!incl || walk(m, incl, NULL, NULL) != 0) {
        free(incl);
        return -1;
    }
    *out = incl;
    return 0;
}

int ex_edge_costs(const struct ex_model *m, struct ex_edge **out, size_t *n)
{
    return walk(m, NULL, out, n);
}

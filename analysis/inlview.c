/* report --inline: the functions inlined into sampled code become entries
 * of the flat profile and the call graph.
 *
 * The report is built from three inputs in its symbol table's addresses
 * (modmap.c): the samples' pcs, the arcs (return address, callee) and the
 * stacks.  This file makes a copy of each in which inlined code has
 * functions of its own, and leaves the analysis as it is:
 *
 *   - each inlined function (by its DWARF name in its module, as export
 *     --inline keys it, so the report and the exports agree) gets a symbol
 *     "NAME [inlined]" ("NAME [inlined] [libfoo.so]" in a library) at an
 *     address of its own, above every module's slice;
 *   - a sample at a pc in inlined code moves to its innermost inlined
 *     function;
 *   - a stack frame at such a pc becomes the function's frame with, under
 *     it, one frame per inlined function, outermost first (module
 *     CGDATA_SYMTAB_MODULE, the address the new symbol's), the samples on
 *     the innermost: the call graph then shows work -> middle [inlined]
 *     -> inner [inlined] with measured times, as uncounted arcs (an
 *     inlined function is never called);
 *   - an arc whose call instruction lies in inlined code goes from the
 *     innermost inlined function there that the samples or stacks have
 *     (as export --inline moves -pg calls), else stays its function's.
 *
 * Where no module has DWARF nothing changes. */
#include "inlview.h"

#include "linemap.h"
#include "modmap.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CHAIN 64 /* as export.c's EX_MAX_INLINE */

/* The inlined functions met so far, by shown name: an open-addressing
 * set.  An inlined function is its DWARF name in its module: libc's
 * lll_mutex_lock_optimized is "lll_mutex_lock_optimized [inlined]
 * [libc.so.6]", as its other functions are "NAME [libc.so.6]". */
struct names {
    char **v; /* shown names, "NAME [inlined]" or "NAME [inlined] [MODULE]" (owned) */
    size_t n, cap;
    uint32_t *slot; /* index + 1; 0 empty */
    size_t nslot;
    char *buf; /* the name being looked up */
    size_t bufcap;
};

/* The shown name of inlined function NAME at PC (its module's tag) in
 * T->buf; NULL out of memory. */
static const char *shown_name(struct names *t, const struct cgdata *d, uint64_t pc,
                              const char *name)
{
    const char *tag = modmap_tag(d, pc);
    size_t need = strlen(name) + sizeof INLVIEW_SUFFIX + (tag ? strlen(tag) + 3 : 0);
    if (need > t->bufcap) {
        char *b = realloc(t->buf, need);
        if (!b)
            return NULL;
        t->buf = b;
        t->bufcap = need;
    }
    if (tag)
        snprintf(t->buf, need, "%s%s [%s]", name, INLVIEW_SUFFIX, tag);
    else
        snprintf(t->buf, need, "%s%s", name, INLVIEW_SUFFIX);
    return t->buf;
}

static void names_free(struct names *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    free(t->slot);
    free(t->buf);
    memset(t, 0, sizeof *t);
}

static size_t hash_name(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The index of NAME, added when absent (ADD) or -1; -2 out of memory. */
static long name_index(struct names *t, const char *name, int add)
{
    if (t->nslot == 0 || (add && 2 * (t->n + 1) > t->nslot)) {
        size_t ns = t->nslot ? 2 * t->nslot : 64;
        uint32_t *s = calloc(ns, sizeof *s);
        if (!s)
            return -2;
        for (size_t i = 0; i < t->n; i++) {
            size_t h = hash_name(t->v[i]) & (ns - 1);
            while (s[h])
                h = (h + 1) & (ns - 1);
            s[h] = (uint32_t)i + 1;
        }
        free(t->slot);
        t->slot = s;
        t->nslot = ns;
    }
    size_t h = hash_name(name) & (t->nslot - 1);
    for (; t->slot[h]; h = (h + 1) & (t->nslot - 1))
        if (strcmp(t->v[t->slot[h] - 1], name) == 0)
            return (long)t->slot[h] - 1;
    if (!add)
        return -1;
    if (t->n == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 16;
        char **v = realloc(t->v, nc * sizeof *v);
        if (!v)
            return -2;
        t->v = v;
        t->cap = nc;
    }
    if (!(t->v[t->n] = strdup(name)))
        return -2;
    t->slot[h] = (uint32_t)t->n + 1;
    return (long)t->n++;
}

/* The inline chain of PC if a program function (not libcgprof's) holds
 * it: its length, innermost first in CHAIN. */
static size_t chain_at(struct linemap *lm, const struct symtab *st, uint64_t pc,
                       const struct dwi_inl **chain)
{
    long f = symtab_lookup(st, pc);
    if (f < 0 || st->syms[f].is_runtime)
        return 0;
    size_t n = linemap_inline(lm, pc, chain, MAX_CHAIN);
    return n < MAX_CHAIN ? n : MAX_CHAIN;
}

static int grow_nodes(struct cgdata *d, size_t *cap)
{
    if (d->nstacks < *cap)
        return 0;
    size_t nc = *cap ? 2 * *cap : 256;
    struct cgdata_stack_node *s = realloc(d->stacks, nc * sizeof *s);
    if (!s)
        return -1;
    d->stacks = s;
    *cap = nc;
    return 0;
}

/* Base of the inlined functions' addresses: a slice above every symbol. */
static uint64_t inl_base(const struct symtab *st)
{
    uint64_t top = st->n ? st->syms[st->n - 1].end_addr : 0;
    return ((top >> 40) + 2) << 40;
}

#define INL_ADDR(base, i) ((base) + 16 * (uint64_t)(i))

int inlview_build(struct inl_view *v, const struct cgdata *d, const struct symtab *st,
                  const struct gmon_data *gd, const struct cg_pc_sample *pcs, size_t npcs,
                  char *err, size_t errsz)
{
    memset(v, 0, sizeof *v);
    v->d = *d;
    v->d.stacks = NULL;
    v->d.nstacks = 0;
    v->d.symtab_frames = 1;
    v->gd = *gd;
    v->gd.arcs = NULL;
    v->st = *st;
    v->st.syms = NULL;
    struct linemap lm;
    struct names nm = {0};
    const struct dwi_inl *chain[MAX_CHAIN];
    uint64_t base = inl_base(st);
    int *map = NULL;
    size_t cap = 0;
    if (linemap_init(&lm, d, NULL) != 0)
        goto oom_nolm;
    lm.flags = DWI_INLINE;

    /* the samples, on their innermost inlined functions */
    v->pcs = malloc((npcs ? npcs : 1) * sizeof *v->pcs);
    if (!v->pcs)
        goto oom;
    for (size_t i = 0; i < npcs; i++) {
        v->pcs[i] = pcs[i];
        size_t n = chain_at(&lm, st, pcs[i].pc, chain);
        if (n == 0)
            continue;
        const char *name = shown_name(&nm, d, pcs[i].pc, chain[0]->name);
        long k = name ? name_index(&nm, name, 1) : -2;
        if (k < 0)
            goto oom;
        v->pcs[i].pc = INL_ADDR(base, k);
    }
    v->npcs = npcs;

    /* the stacks, each frame followed by its inline chain */
    map = malloc((d->nstacks ? d->nstacks : 1) * sizeof *map);
    if (!map)
        goto oom;
    for (size_t i = 0; i < d->nstacks; i++) {
        const struct cgdata_stack_node *x = &d->stacks[i];
        size_t n = 0;
        uint64_t pc = modmap_pc(d, x->module, x->addr);
        if (x->module != CGDATA_CUT_MODULE)
            n = chain_at(&lm, st, pc, chain);
        if (grow_nodes(&v->d, &cap) != 0)
            goto oom;
        struct cgdata_stack_node y = *x;
        y.parent = x->parent == CGDATA_NO_PARENT ? CGDATA_NO_PARENT : (uint32_t)map[x->parent];
        y.count = n ? 0 : x->count;
        v->d.stacks[v->d.nstacks++] = y;
        for (size_t j = n; j-- > 0;) {
            const char *name = shown_name(&nm, d, pc, chain[j]->name);
            long k = name ? name_index(&nm, name, 1) : -2;
            if (k < 0 || grow_nodes(&v->d, &cap) != 0 || v->d.nstacks >= UINT32_MAX)
                goto oom;
            v->d.stacks[v->d.nstacks] =
                (struct cgdata_stack_node){(uint32_t)v->d.nstacks - 1, CGDATA_SYMTAB_MODULE,
                                           INL_ADDR(base, k), j ? 0 : x->count};
            v->d.nstacks++;
        }
        map[i] = (int)v->d.nstacks - 1;
    }

    /* the arcs: calls from inlined code are the inlined function's */
    v->gd.arcs = malloc((gd->narcs ? gd->narcs : 1) * sizeof *v->gd.arcs);
    if (!v->gd.arcs)
        goto oom;
    for (size_t i = 0; i < gd->narcs; i++) {
        v->gd.arcs[i] = gd->arcs[i];
        uint64_t from = gd->arcs[i].from_pc;
        size_t n = from ? chain_at(&lm, st, from - 1, chain) : 0;
        long k = -1;
        for (size_t j = 0; j < n && k == -1; j++) {
            const char *name = shown_name(&nm, d, from - 1, chain[j]->name);
            k = name ? name_index(&nm, name, 0) : -2;
        }
        if (k == -2)
            goto oom;
        if (k >= 0)
            v->gd.arcs[i].from_pc = INL_ADDR(base, k);
    }
    v->gd.arcs_cap = gd->narcs;
    v->gd.arc_hash = NULL; /* the analysis only walks the arcs */
    v->gd.hash_cap = 0;

    /* the symbols: the profile's, then the inlined functions' */
    v->st.syms = malloc((st->n + nm.n + 1) * sizeof *v->st.syms);
    if (!v->st.syms)
        goto oom;
    memcpy(v->st.syms, st->syms, st->n * sizeof *st->syms);
    for (size_t i = 0; i < nm.n; i++)
        v->st.syms[st->n + i] = (struct symtab_sym){
            .addr = INL_ADDR(base, i),
            .end_addr = INL_ADDR(base, i) + 15,
            .name = nm.v[i],
            .is_func = 1,
            .order = st->n + i,
        };
    v->st.n = st->n + nm.n;
    v->ninl = nm.n;
    v->names = nm.v; /* now the view's */
    nm.v = NULL;
    nm.n = 0;
    free(map);
    names_free(&nm);
    linemap_free(&lm);
    return 0;
oom:
    linemap_free(&lm);
oom_nolm:
    free(map);
    names_free(&nm);
    inlview_free(v);
    snprintf(err, errsz, "out of memory reading the inlined functions");
    return -1;
}

void inlview_free(struct inl_view *v)
{
    free(v->st.syms);
    free(v->pcs);
    free(v->gd.arcs);
    free(v->d.stacks);
    for (size_t i = 0; v->names && i < v->ninl; i++)
        free(v->names[i]);
    free(v->names);
    memset(v, 0, sizeof *v);
}

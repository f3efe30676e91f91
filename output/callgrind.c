/* callgrind export (cgprof export -f callgrind): callgrind's profile
 * format, which KCachegrind and callgrind_annotate read.
 *
 * Events: "samples" and "ns" (nanoseconds) for a time event, the event's
 * own name for a counting one.  Each function is an fn= block with its
 * self cost; each caller -> callee pair is a cfn=/calls= line with the
 * exact call count from the -pg arcs and the inclusive cost of those
 * calls (a call seen only in the stacks, from code without -pg, gets
 * calls=1: callgrind's readers take a count of 0 as no call).  That cost is measured from the
 * stacks when the profile has them (export.h, ex_edge_costs: each sample counted once per caller),
 * so callgrind_annotate --inclusive=yes gives each function exactly the samples with it on the
 * stack; without stacks it is gprof's estimate, the time the call graph propagates along the arc.
 * Without source lines every cost sits at line 0 of file "???". */
#include "export.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cgw {
    FILE *out;
    const struct ex_model *m;
    int nev;
};

static void costs(const struct cgw *w, double samples)
{
    long long s = llround(samples);
    if (w->nev == 2)
        fprintf(w->out, "0 %lld %lld\n", s, llround(samples * w->m->unit_ns));
    else
        fprintf(w->out, "0 %lld\n", s);
}

static int by_caller(const void *a, const void *b)
{
    const struct ex_edge *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return (x->callee > y->callee) - (x->callee < y->callee);
}

/* The pairs to print: every arc (count, and cost when measured) and every
 * measured call without an arc (count 0). */
static struct ex_edge *pairs(const struct ex_model *m, uint64_t **counts, size_t *n)
{
    const struct callgraph *g = m->g;
    struct ex_edge *e = NULL;
    size_t ne = 0;
    if (m->has_stacks && ex_edge_costs(m, &e, &ne) != 0)
        return NULL;
    struct ex_edge *all = malloc((ne + g->narcs + 1) * sizeof *all);
    uint64_t *cnt = calloc(ne + g->narcs + 1, sizeof *cnt);
    if (!all || !cnt) {
        free(e);
        free(all);
        free(cnt);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < g->narcs; i++) {
        const struct cg_arc *a = &g->arcs[i];
        all[k] = (struct ex_edge){a->parent, a->child, m->has_stacks ? 0 : a->time + a->child_time};
        cnt[k++] = a->count;
    }
    for (size_t i = 0; i < ne; i++) {
        size_t j = 0;
        while (j < g->narcs && !(all[j].caller == e[i].caller && all[j].callee == e[i].callee))
            j++;
        if (j < g->narcs) {
            all[j].cost = e[i].cost;
        } else {
            all[k] = e[i];
            cnt[k++] = 0;
        }
    }
    free(e);
    /* sort by caller, counts alongside */
    struct ex_edge *tmp = malloc((k + 1) * sizeof *tmp);
    if (!tmp) {
        free(all);
        free(cnt);
        return NULL;
    }
    for (size_t i = 0; i < k; i++) {
        tmp[i] = all[i];
        tmp[i].cost = (double)i; /* carry the index through the sort */
    }
    qsort(tmp, k, sizeof *tmp, by_caller);
    uint64_t *c2 = malloc((k + 1) * sizeof *c2);
    if (!c2) {
        free(tmp);
        free(all);
        free(cnt);
        return NULL;
    }
    for (size_t i = 0; i < k; i++) {
        size_t src = (size_t)tmp[i].cost;
        tmp[i].cost = all[src].cost;
        c2[i] = cnt[src];
    }
    free(all);
    free(cnt);
    *counts = c2;
    *n = k;
    return tmp;
}

static void put_event_name(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(isalnum((unsigned char)*s) ? *s : '_', out);
}

int ex_write_callgrind(FILE *out, const struct ex_model *m)
{
    const struct callgraph *g = m->g;
    struct cgw w = {out, m, m->timed ? 2 : 1};
    double *self = calloc(g->nsyms + 1, sizeof *self);
    uint64_t *counts = NULL;
    size_t np = 0;
    struct ex_edge *e = self ? pairs(m, &counts, &np) : NULL;
    if (!self || !e) {
        free(self);
        return -1;
    }
    for (size_t i = 0; i < m->nnodes; i++)
        if (m->nodes[i].func >= 0)
            self[m->nodes[i].func] += m->nodes[i].count;
    fprintf(out, "# callgrind format\nversion: 1\ncreator: cgprof export\npid: %llu\ncmd: %s\n",
            (unsigned long long)(m->d ? m->d->pid : 0), m->prog);
    fprintf(out, "positions: line\nevents: ");
    if (m->timed)
        fprintf(out,
                "samples ns\n# samples: %s samples (1/%.0f s each); ns: %s time in "
                "nanoseconds\n",
                m->event, m->rate, m->event);
    else {
        put_event_name(out, m->event);
        fputc('\n', out);
    }
    fputs("summary: ", out);
    if (m->timed)
        fprintf(out, "%lld %lld\n\n", llround(m->total), llround(m->total * m->unit_ns));
    else
        fprintf(out, "%lld\n\n", llround(m->total));
    size_t k = 0;
    if (np && e[0].caller == EX_TRUNCATED) {
        fprintf(out, "fl=???\nfn=[truncated]\n");
        costs(&w, 0);
        for (; k < np && e[k].caller == EX_TRUNCATED; k++) {
            int c = e[k].callee;
            fprintf(out, "cfl=%s\ncfn=%s\ncalls=1 0\n", ex_file(m, c, "???"), ex_name(m, c));
            costs(&w, e[k].cost);
        }
        fputc('\n', out);
    }
    for (size_t f = 0; f < g->nsyms; f++) {
        int has_calls = k < np && e[k].caller == (int)f;
        if (self[f] <= 0 && !has_calls && g->nodes[f].ncalls == 0 && g->nodes[f].self_calls == 0)
            continue;
        fprintf(out, "fl=%s\nfn=%s\n", ex_file(m, (int)f, "???"), ex_name(m, (int)f));
        costs(&w, self[f]);
        for (; k < np && e[k].caller == (int)f; k++) {
            int c = e[k].callee;
            fprintf(out, "cfl=%s\ncfn=%s\ncalls=%llu 0\n", ex_file(m, c, "???"), ex_name(m, c),
                    (unsigned long long)(counts[k] ? counts[k] : 1));
            costs(&w, e[k].cost);
        }
        fputc('\n', out);
    }
    free(self);
    free(e);
    free(counts);
    return ferror(out) ? -1 : 0;
}

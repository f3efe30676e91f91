/* Samples of a cgprof profile by source line, in every module with debugging information.
 *
 * Each sample names its module and its link-time address there, so its
 * line is one lookup in the module's line table (dwinfo.c), read once per
 * module (linemap.c).
 */
#include "srcsamples.h"
#include "dwinfo.h"
#include "linemap.h"
#include "modmap.h"
#include "symtab.h"

#include <stdlib.h>
#include <string.h>

/* A sample's line while counting: the file's index in the module's table. */
struct hit {
    uint32_t file, line;
    uint64_t count;
};

static int hit_cmp(const void *pa, const void *pb)
{
    const struct hit *a = pa, *b = pb;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

static int line_cmp(const void *pa, const void *pb)
{
    const struct src_line *a = pa, *b = pb;
    if (a->samples != b->samples)
        return a->samples > b->samples ? -1 : 1;
    int c = strcmp(a->module, b->module);
    if (c == 0)
        c = strcmp(a->file, b->file);
    return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* Adds to OUT the lines of the samples of module K (its id; the file at
 * PATH), from its line table DW. */
static int add_module(struct src_lines *out, size_t *cap, const struct cgdata *d, uint32_t k,
                      const char *path, const struct dwi *dw)
{
    struct hit *h = malloc((d->nsamples ? d->nsamples : 1) * sizeof *h);
    size_t nh = 0;
    for (size_t i = 0; h && i < d->nsamples; i++) {
        const struct dwi_row *r;
        if (d->samples[i].module == k && (r = dwi_line(dw, d->samples[i].addr)) && r->line)
            h[nh++] = (struct hit){r->file, r->line, d->samples[i].count};
    }
    int rc = h ? 0 : -1;
    if (nh > 1)
        qsort(h, nh, sizeof *h, hit_cmp);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; rc == 0 && i < nh;) {
        size_t j = i;
        uint64_t sum = 0;
        for (; j < nh && h[j].file == h[i].file && h[j].line == h[i].line; j++)
            sum += h[j].count;
        if (out->n == *cap) {
            size_t ncap = *cap ? *cap * 2 : 256;
            struct src_line *v = realloc(out->v, ncap * sizeof *v);
            if (!v) {
                rc = -1;
                break;
            }
            out->v = v;
            *cap = ncap;
        }
        char *m = strdup(base), *f = strdup(dw->files[h[i].file]);
        if (!m || !f) {
            free(m);
            free(f);
            rc = -1;
            break;
        }
        out->v[out->n++] = (struct src_line){m, f, h[i].line, sum};
        i = j;
    }
    free(h);
    return rc;
}

int src_lines_build(struct src_lines *out, const struct cgdata *d)
{
    memset(out, 0, sizeof *out);
    struct linemap lm;
    if (linemap_init(&lm, d, NULL) != 0)
        return -1;
    size_t cap = 0;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < d->nmodules; k++) {
        const struct dwi *dw = linemap_module(&lm, k);
        if (dw)
            rc = add_module(out, &cap, d, d->modules[k].id, d->modules[k].path, dw);
    }
    linemap_free(&lm);
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, line_cmp);
    if (rc != 0)
        src_lines_free(out);
    return rc;
}

void src_lines_free(struct src_lines *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free((char *)l->v[i].module);
        free((char *)l->v[i].file);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int site_cmp(const void *pa, const void *pb)
{
    const struct src_site *a = pa, *b = pb;
    if (a->caller != b->caller)
        return a->caller < b->caller ? -1 : 1;
    if (a->callee != b->callee)
        return a->callee < b->callee ? -1 : 1;
    int c = strcmp(a->file, b->file);
    return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* As site_cmp, but most calls first within each caller -> callee pair. */
static int site_by_count(const void *pa, const void *pb)
{
    const struct src_site *a = pa, *b = pb;
    if (a->caller == b->caller && a->callee == b->callee && a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return site_cmp(pa, pb);
}

int src_sites_build(struct src_sites *out, const struct cgdata *d, const struct symtab *st,
                    struct linemap *lm)
{
    memset(out, 0, sizeof *out);
    out->v = malloc((d->narcs ? d->narcs : 1) * sizeof *out->v);
    if (!out->v)
        return -1;
    for (size_t i = 0; i < d->narcs; i++) {
        const struct cgdata_arc *a = &d->arcs[i];
        uint64_t from = modmap_pc(d, a->from_module, a->from_addr);
        /* the functions as the call graph's arcs have them (modmap_owned_return) */
        long caller = symtab_lookup(st, modmap_owned_return(st, from));
        long callee =
            symtab_lookup(st, modmap_owned(st, modmap_pc(d, a->self_module, a->self_addr)));
        const char *file;
        unsigned line;
        if (caller < 0 || callee < 0 || !from || !linemap_find(lm, from - 1, &file, &line))
            continue;
        out->v[out->n++] = (struct src_site){(int)caller, (int)callee, file, line, a->count};
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, site_cmp);
    size_t k = 0;
    for (size_t i = 0; i < out->n; i++) {
        struct src_site *p = k ? &out->v[k - 1] : NULL;
        if (p && site_cmp(p, &out->v[i]) == 0)
            p->count =
                p->count + out->v[i].count < p->count ? UINT64_MAX : p->count + out->v[i].count;
        else
            out->v[k++] = out->v[i];
    }
    out->n = k;
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, site_by_count);
    return 0;
}

void src_sites_free(struct src_sites *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

const struct src_site *src_sites_of(const struct src_sites *s, int caller, int callee, size_t *n)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct src_site *m = &s->v[mid];
        if (m->caller < caller || (m->caller == caller && m->callee < callee))
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < s->n && s->v[end].caller == caller && s->v[end].callee == callee)
        end++;
    *n = end - lo;
    return *n ? &s->v[lo] : NULL;
}

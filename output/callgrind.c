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
 * Source lines come from the modules' DWARF: a function's fl= is its
 * file, its self cost is split over the lines its samples fell on, and
 * its calls sit at its first line (each callee named at its own).
 * Without source lines the costs sit at line 0 of file "???" (or the
 * symbol table's file name of a static function). */
#include "escape.h"
#include "export.h"
#include "linemap.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cgw {
    FILE *out;
    const struct ex_model *m;
    int nev;
};

static void costs_at(const struct cgw *w, unsigned line, double samples)
{
    long long s = llround(samples);
    if (w->nev == 2)
        fprintf(w->out, "%u %lld %lld\n", line, s, llround(samples * w->m->unit_ns));
    else
        fprintf(w->out, "%u %lld\n", line, s);
}

static void costs(const struct cgw *w, double samples)
{
    costs_at(w, 0, samples);
}

/* A function's self samples on one source line. */
struct lcost {
    int func;
    const char *file; /* from the linemap; NULL: not known */
    unsigned line;
    double count;
};

static int by_func_line(const void *a, const void *b)
{
    const struct lcost *x = a, *y = b;
    if (x->func != y->func)
        return x->func < y->func ? -1 : 1;
    if (x->file != y->file) /* grouped, in no particular order */
        return (uintptr_t)x->file < (uintptr_t)y->file ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

/* The self cost of every function by line (line 0: not known), sorted by
 * function and line; *N of them.  NULL out of memory. */
static struct lcost *line_costs(const struct ex_model *m, struct linemap *lm, size_t *n)
{
    struct lcost *v = malloc((m->nnodes + 1) * sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < m->nnodes; i++) {
        const struct ex_node *x = &m->nodes[i];
        if (x->func < 0 || x->count <= 0)
            continue;
        const char *file = NULL;
        unsigned line = 0;
        if (!lm || !linemap_find(lm, x->pc, &file, &line)) {
            file = NULL;
            line = 0;
        }
        v[k++] = (struct lcost){x->func, file, line, x->count};
    }
    if (k > 1)
        qsort(v, k, sizeof *v, by_func_line);
    size_t j = 0;
    for (size_t i = 0; i < k; i++) {
        if (j && v[j - 1].func == v[i].func && v[j - 1].file == v[i].file &&
            v[j - 1].line == v[i].line)
            v[j - 1].count += v[i].count;
        else
            v[j++] = v[i];
    }
    *n = j;
    return v;
}

/* With ex_inline, from one pass over the frames: each inlined function's
 * source file and first line -- the lowest line its own code's pcs fall
 * on (frames where it is the innermost inlined function), in the file of
 * the first -- and where each function has the copy of an inlined one:
 * the call site in the DWARF (file and line of the call that was
 * inlined; the outermost copy of that name at the frame, as ex_inline's
 * frames go outermost first). */
struct inlsite {
    int caller, callee;
    size_t order; /* the frame's: the first found wins */
    const char *file;
    unsigned line;
};
struct inlinfo {
    const char **file; /* per inlined function; NULL: not known */
    unsigned *line;
    struct inlsite *site; /* by caller, callee */
    size_t nsite;
};

static int site_cmp(const void *a, const void *b)
{
    const struct inlsite *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    if (x->callee != y->callee)
        return x->callee < y->callee ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static void inl_info_free(struct inlinfo *ii)
{
    free(ii->file);
    free(ii->line);
    free(ii->site);
    memset(ii, 0, sizeof *ii);
}

/* 0, or -1 out of memory. */
static int inl_info(struct inlinfo *ii, const struct ex_model *m, struct linemap *lm)
{
    memset(ii, 0, sizeof *ii);
    if (!m->ninl || !lm)
        return 0;
    ii->file = calloc(m->ninl, sizeof *ii->file);
    ii->line = calloc(m->ninl, sizeof *ii->line);
    ii->site = malloc((m->nnodes + 1) * sizeof *ii->site);
    if (!ii->file || !ii->line || !ii->site) {
        inl_info_free(ii);
        return -1;
    }
    for (size_t i = 0; i < m->nnodes; i++) {
        const struct ex_node *x = &m->nodes[i];
        if (!EX_IS_INLINED(m, x->func))
            continue;
        const char *name = ex_name(m, x->func), *file;
        const struct dwi_inl *chain[EX_MAX_INLINE];
        size_t n = linemap_inline(lm, x->pc, chain, EX_MAX_INLINE), k = x->func - m->g->nsyms - 1;
        unsigned l;
        if (n > EX_MAX_INLINE)
            n = EX_MAX_INLINE;
        if (n && strcmp(chain[0]->name, name) == 0 && linemap_find(lm, x->pc, &file, &l) &&
            (!ii->file[k] || (strcmp(file, ii->file[k]) == 0 && l < ii->line[k]))) {
            ii->file[k] = file;
            ii->line[k] = l;
        }
        if (x->parent < 0)
            continue;
        while (n-- > 0)
            if (strcmp(chain[n]->name, name) == 0 && chain[n]->call_file) {
                ii->site[ii->nsite++] = (struct inlsite){m->nodes[x->parent].func, x->func, i,
                                                         chain[n]->call_file, chain[n]->call_line};
                break;
            }
    }
    if (ii->nsite > 1)
        qsort(ii->site, ii->nsite, sizeof *ii->site, site_cmp);
    return 0;
}

/* Where CALLER's code has the copy of inlined function CALLEE (struct
 * inlinfo).  0 when not known. */
static int inl_call_site(const struct inlinfo *ii, int caller, int callee, const char **file,
                         unsigned *line)
{
    size_t lo = 0, hi = ii->nsite;
    while (lo < hi) { /* the first of the pair: its earliest frame */
        size_t mid = lo + (hi - lo) / 2;
        const struct inlsite *x = &ii->site[mid];
        if (x->caller < caller || (x->caller == caller && x->callee < callee))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == ii->nsite || ii->site[lo].caller != caller || ii->site[lo].callee != callee)
        return 0;
    *file = ii->site[lo].file;
    *line = ii->site[lo].line;
    return 1;
}

/* FUNC's source file and first line from the DWARF, else the symbol
 * table's file name (or "???") and 0. */
static const char *func_file(const struct ex_model *m, struct linemap *lm, const struct inlinfo *ii,
                             int func, unsigned *line)
{
    const char *file;
    *line = 0;
    if (EX_IS_INLINED(m, func)) {
        size_t k = (size_t)func - m->g->nsyms - 1;
        *line = ii->file && ii->file[k] ? ii->line[k] : 0;
        return ii->file && ii->file[k] ? ii->file[k] : "???";
    }
    if (func >= 0 && lm && linemap_find(lm, m->st->syms[func].addr, &file, line))
        return file;
    *line = 0;
    return ex_file(m, func, "???");
}

static int by_caller(const void *a, const void *b)
{
    const struct ex_edge *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return (x->callee > y->callee) - (x->callee < y->callee);
}

/* With ex_inline, the -pg calls made from inlined code are the inlined
 * function's (ex_inline_calls).  ALL and CNT hold *K pairs, the first
 * NARCS the call graph's arcs; pairs are added after them (room for the
 * profile's arcs).  MOVED[i]: arc i lost calls so.  -1 out of memory. */
static int move_inlined_calls(const struct ex_model *m, struct linemap *lm, struct ex_edge *all,
                              uint64_t *cnt, char *moved, size_t narcs, size_t *k)
{
    struct ex_moved *v;
    size_t n;
    if (ex_inline_calls(m, lm, &v, &n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < narcs && !(all[j].caller == v[i].caller && all[j].callee == v[i].callee))
            j++;
        if (j == narcs)
            continue;
        uint64_t c = v[i].count < cnt[j] ? v[i].count : cnt[j];
        cnt[j] -= c;
        moved[j] = 1;
        size_t t = narcs;
        while (t < *k && !(all[t].caller == v[i].inlined && all[t].callee == v[i].callee))
            t++;
        if (t == *k) {
            all[t] = (struct ex_edge){v[i].inlined, v[i].callee, 0};
            cnt[t] = 0;
            moved[t] = 0;
            (*k)++;
        }
        cnt[t] += c;
    }
    free(v);
    return 0;
}

/* The pairs to print: every arc (count, and cost when measured) and every
 * measured call without an arc (count 0). */
static struct ex_edge *pairs(const struct ex_model *m, struct linemap *lm, uint64_t **counts,
                             size_t *n)
{
    const struct callgraph *g = m->g;
    struct ex_edge *e = NULL;
    size_t ne = 0, nmove = m->ninl && m->d && lm ? m->d->narcs : 0;
    if (m->has_stacks && ex_edge_costs(m, &e, &ne) != 0)
        return NULL;
    struct ex_edge *all = malloc((ne + g->narcs + nmove + 1) * sizeof *all);
    uint64_t *cnt = calloc(ne + g->narcs + nmove + 1, sizeof *cnt);
    char *moved = calloc(ne + g->narcs + nmove + 1, 1);
    if (!all || !cnt || !moved) {
        free(e);
        free(all);
        free(cnt);
        free(moved);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < g->narcs; i++) {
        const struct cg_arc *a = &g->arcs[i];
        all[k] = (struct ex_edge){a->parent, a->child, m->has_stacks ? 0 : a->time + a->child_time};
        cnt[k++] = a->count;
    }
    if (nmove && move_inlined_calls(m, lm, all, cnt, moved, g->narcs, &k) != 0) {
        free(e);
        free(all);
        free(cnt);
        free(moved);
        return NULL;
    }
    size_t counted = k;
    for (size_t i = 0; i < ne; i++) {
        size_t j = 0;
        while (j < counted && !(all[j].caller == e[i].caller && all[j].callee == e[i].callee))
            j++;
        if (j < counted) {
            all[j].cost = e[i].cost;
        } else {
            all[k] = e[i];
            cnt[k++] = 0;
        }
    }
    free(e);
    /* an arc whose calls all moved into inlined code, with no time left, goes */
    size_t kept = 0;
    for (size_t i = 0; i < k; i++)
        if (!(moved[i] && cnt[i] == 0 && all[i].cost == 0)) {
            all[kept] = all[i];
            cnt[kept++] = cnt[i];
        }
    k = kept;
    free(moved);
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
    size_t nf = g->nsyms + 1 + m->ninl; /* the inlined functions after slot nsyms */
    double *self = calloc(nf, sizeof *self);
    struct linemap lm;
    int have_lm = self && linemap_init(&lm, m->d, m->prog) == 0;
    if (have_lm && m->ninl)
        lm.flags = DWI_INLINE;
    uint64_t *counts = NULL;
    size_t np = 0;
    struct ex_edge *e = self ? pairs(m, have_lm ? &lm : NULL, &counts, &np) : NULL;
    if (!self || !e) {
        if (have_lm)
            linemap_free(&lm);
        free(self);
        return -1;
    }
    for (size_t i = 0; i < m->nnodes; i++)
        if (m->nodes[i].func >= 0)
            self[m->nodes[i].func] += m->nodes[i].count;
    size_t nl = 0, li = 0;
    struct lcost *lc = line_costs(m, have_lm ? &lm : NULL, &nl);
    struct inlinfo ii;
    if (!lc || inl_info(&ii, m, have_lm ? &lm : NULL) != 0) {
        free(lc);
        if (have_lm)
            linemap_free(&lm);
        free(self);
        free(e);
        free(counts);
        return -1;
    }
    unsigned fline, cline;
    fprintf(out, "# callgrind format\nversion: 1\ncreator: cgprof export\npid: %llu\ncmd: %s\n",
            (unsigned long long)(m->d ? m->d->pid : 0), esc_text(m->prog));
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
            const char *cfile = func_file(m, have_lm ? &lm : NULL, &ii, c, &cline);
            fprintf(out, "cfl=%s\ncfn=%s\ncalls=1 %u\n", esc_text(cfile), esc_text(ex_name(m, c)),
                    cline);
            costs(&w, e[k].cost);
        }
        fputc('\n', out);
    }
    for (size_t f = 0; f < nf; f++) {
        int has_calls = k < np && e[k].caller == (int)f;
        if (f == g->nsyms ||
            (self[f] <= 0 && !has_calls &&
             (f > g->nsyms || (g->nodes[f].ncalls == 0 && g->nodes[f].self_calls == 0))))
            continue;
        const char *file = func_file(m, have_lm ? &lm : NULL, &ii, (int)f, &fline);
        fprintf(out, "fl=%s\nfn=%s\n", esc_text(file), esc_text(ex_name(m, (int)f)));
        while (li < nl && lc[li].func < (int)f)
            li++;
        /* lines of other files (inlined code) under fi=, then back */
        const char *cur = file;
        if (li < nl && lc[li].func == (int)f)
            for (; li < nl && lc[li].func == (int)f; li++) {
                const char *lf = lc[li].file ? lc[li].file : file;
                if (strcmp(lf, cur) != 0)
                    fprintf(out, "fi=%s\n", esc_text(lf));
                cur = lf;
                costs_at(&w, lc[li].file ? lc[li].line : 0, lc[li].count);
            }
        else
            costs_at(&w, fline, 0);
        if (strcmp(cur, file) != 0)
            fprintf(out, "fe=%s\n", esc_text(file));
        for (; k < np && e[k].caller == (int)f; k++) {
            int c = e[k].callee;
            const char *cfile = func_file(m, have_lm ? &lm : NULL, &ii, c, &cline);
            /* an inlined callee: at its call site (fi= when in another file) */
            const char *sfile = file;
            unsigned sline = fline;
            if (EX_IS_INLINED(m, c) && !inl_call_site(&ii, (int)f, c, &sfile, &sline)) {
                sfile = file;
                sline = fline;
            }
            if (strcmp(sfile, file) != 0)
                fprintf(out, "fi=%s\n", esc_text(sfile));
            fprintf(out, "cfl=%s\ncfn=%s\ncalls=%llu %u\n", esc_text(cfile),
                    esc_text(ex_name(m, c)), (unsigned long long)(counts[k] ? counts[k] : 1),
                    cline);
            costs_at(&w, sline, e[k].cost);
            if (strcmp(sfile, file) != 0)
                fprintf(out, "fe=%s\n", esc_text(file));
        }
        fputc('\n', out);
    }
    free(lc);
    inl_info_free(&ii);
    if (have_lm)
        linemap_free(&lm);
    free(self);
    free(e);
    free(counts);
    return ferror(out) ? -1 : 0;
}

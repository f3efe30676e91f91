/* pprof export (cgprof export -f pprof): the profile as a gzipped
 * profile.proto message (output/profile.proto, encoded by protobuf-c).
 *
 * Sample types: for a time event "samples"/count, EVENT/nanoseconds (the
 * default) and "calls"/count; for a counting event EVENT/count and
 * "calls"/count.  Each stack of the model is one sample with its value
 * in the first types and 0 calls.  Each caller -> callee arc of the call
 * graph is one more sample of depth 2 (callee, caller) with its exact
 * call count and no time, so go tool pprof -sample_index=calls shows the
 * counts.  Locations are the stacks' addresses (run-time pcs in the
 * module's mapping), one Line each naming the function and, where the
 * module has DWARF, the source line; a Function has its file and first
 * line from there too. */
#include "export.h"
#include "linemap.h"
#include "profile.pb-c.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define SLICE_SHIFT 40 /* modmap's address slices (analysis/modmap.c) */

typedef Cgprof__Pprof__Profile Profile;
typedef Cgprof__Pprof__ValueType ValueType;
typedef Cgprof__Pprof__Sample Sample;
typedef Cgprof__Pprof__Mapping Mapping;
typedef Cgprof__Pprof__Location Location;
typedef Cgprof__Pprof__Line Line;
typedef Cgprof__Pprof__Function Function;

/* The string table: index 0 is "". */
struct strs {
    char **v;
    size_t n, cap;
    int oom;
};

static int64_t str_add(struct strs *s, const char *str)
{
    for (size_t i = s->n > 64 ? s->n - 64 : 0; i < s->n; i++)
        if (strcmp(s->v[i], str) == 0)
            return (int64_t)i;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->oom = 1;
            return 0;
        }
        s->v = v;
        s->cap = cap;
    }
    char *c = strdup(str);
    if (!c) {
        s->oom = 1;
        return 0;
    }
    s->v[s->n] = c;
    return (int64_t)s->n++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Everything the message points into, freed together. */
struct pp {
    const struct ex_model *m;
    struct strs s;
    uint64_t *pcs; /* distinct location pcs, sorted: location id = index + 1 */
    int *pc_func;
    size_t npcs;
    Location *locs;
    Location **plocs;
    Line *lines;
    Line **plines;
    Function *funcs;
    Function **pfuncs;
    size_t nfuncs;
    Mapping *maps;
    Mapping **pmaps;
    size_t nmaps;
    Sample *samples;
    Sample **psamples;
    size_t nsamples;
    uint64_t *ids;
    int64_t *vals;
    ValueType vt[3];
    ValueType *pvt[3];
    ValueType period;
    int64_t comment;
};

static uint64_t loc_id(const struct pp *p, uint64_t pc)
{
    size_t lo = 0, hi = p->npcs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->pcs[mid] < pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo + 1;
}

/* Pcs of the stacks, and the functions' entries for the call samples. */
static int collect_pcs(struct pp *p)
{
    const struct ex_model *m = p->m;
    const struct callgraph *g = m->g;
    size_t n = m->nnodes + 2 * g->narcs;
    struct {
        uint64_t pc;
        int func;
    } *all = malloc((n + 1) * sizeof *all);
    if (!all)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < m->nnodes; i++)
        if (!EX_IS_INLINED(m, m->nodes[i].func)) /* an inlined frame: a Line of its pc's */
            all[k].pc = m->nodes[i].func == EX_TRUNCATED ? UINT64_MAX : m->nodes[i].pc,
            all[k++].func = m->nodes[i].func;
    for (size_t i = 0; i < g->narcs; i++) {
        int ends[2] = {g->arcs[i].parent, g->arcs[i].child};
        for (int e = 0; e < 2; e++)
            if (ends[e] < (int)g->nsyms)
                all[k].pc = m->st->syms[ends[e]].addr, all[k++].func = ends[e];
    }
    qsort(all, k, sizeof *all, cmp_u64); /* pc is the first member */
    p->pcs = malloc((k + 1) * sizeof *p->pcs);
    p->pc_func = malloc((k + 1) * sizeof *p->pc_func);
    if (!p->pcs || !p->pc_func) {
        free(all);
        return -1;
    }
    for (size_t i = 0; i < k; i++)
        if (p->npcs == 0 || p->pcs[p->npcs - 1] != all[i].pc) {
            p->pcs[p->npcs] = all[i].pc;
            p->pc_func[p->npcs++] = all[i].func;
        }
    free(all);
    return 0;
}

static void hex(char *out, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * n] = '\0';
}

static int build_mappings(struct pp *p)
{
    const struct ex_model *m = p->m;
    size_t n = m->d ? m->d->nmodules : 1;
    p->maps = calloc(n + 1, sizeof *p->maps);
    p->pmaps = calloc(n + 1, sizeof *p->pmaps);
    if (!p->maps || !p->pmaps)
        return -1;
    for (size_t k = 0; k < n; k++) {
        Mapping *mp = &p->maps[k];
        cgprof__pprof__mapping__init(mp);
        mp->id = k + 1;
        mp->has_functions = 1;
        if (m->d) {
            const struct cgdata_module *mod = &m->d->modules[k];
            char bid[129];
            hex(bid, mod->build_id, mod->build_id_len);
            mp->memory_start = mod->lo;
            mp->memory_limit = mod->hi;
            mp->filename = str_add(&p->s, mod->path);
            mp->build_id = mod->build_id_len ? str_add(&p->s, bid) : 0;
        } else {
            const struct symtab *st = m->st;
            mp->memory_start = st->n ? st->syms[0].addr : 0;
            mp->memory_limit = st->n ? st->syms[st->n - 1].end_addr + 1 : 0;
            mp->filename = str_add(&p->s, m->prog);
        }
        p->pmaps[p->nmaps++] = mp;
    }
    return 0;
}

/* Mapping id and run-time address of synthetic PC. */
static void place(const struct pp *p, uint64_t pc, uint64_t *map, uint64_t *addr)
{
    const struct cgdata *d = p->m->d;
    *map = 0;
    *addr = pc;
    if (!d) {
        *map = 1;
        return;
    }
    uint64_t k = pc >> SLICE_SHIFT;
    if (k == 0 || k > d->nmodules)
        return; /* [unknown]: a run-time pc already */
    const struct cgdata_module *mod = &d->modules[k - 1];
    *map = k;
    *addr = (pc & (((uint64_t)1 << SLICE_SHIFT) - 1)) + mod->bias;
}

static int build_locations(struct pp *p)
{
    const struct ex_model *m = p->m;
    size_t nf = m->g->nsyms + 1 + m->ninl;
    /* source lines from DWARF where the modules have it */
    struct linemap lm;
    int have_lm = linemap_init(&lm, m->d, m->prog) == 0;
    /* with ex_inline: a Line per inlined function at the pc, innermost first */
    size_t nlines = p->npcs;
    const struct dwi_inl *chain[EX_MAX_INLINE];
    if (have_lm && m->ninl) {
        lm.flags = DWI_INLINE;
        for (size_t i = 0; i < p->npcs; i++)
            if (p->pc_func[i] != EX_TRUNCATED)
                nlines += linemap_inline(&lm, p->pcs[i], chain, EX_MAX_INLINE);
    }
    p->locs = calloc(p->npcs + 1, sizeof *p->locs);
    p->plocs = calloc(p->npcs + 1, sizeof *p->plocs);
    p->lines = calloc(nlines + 1, sizeof *p->lines);
    p->plines = calloc(nlines + 1, sizeof *p->plines);
    p->funcs = calloc(nf, sizeof *p->funcs);
    p->pfuncs = calloc(nf, sizeof *p->pfuncs);
    char *used = calloc(nf, 1);
    if (!p->locs || !p->plocs || !p->lines || !p->plines || !p->funcs || !p->pfuncs || !used) {
        free(used);
        if (have_lm)
            linemap_free(&lm);
        return -1;
    }
    size_t nl = 0;
    for (size_t i = 0; i < p->npcs; i++) {
        Location *l = &p->locs[i];
        cgprof__pprof__location__init(l);
        l->id = i + 1;
        int f = p->pc_func[i];
        size_t fi = f == EX_TRUNCATED ? m->g->nsyms : (size_t)f;
        if (f != EX_TRUNCATED)
            place(p, p->pcs[i], &l->mapping_id, &l->address);
        const char *file = NULL;
        unsigned line = 0;
        if (f != EX_TRUNCATED && have_lm && !linemap_find(&lm, p->pcs[i], &file, &line))
            file = NULL, line = 0;
        size_t nc = f != EX_TRUNCATED && have_lm && m->ninl
                        ? linemap_inline(&lm, p->pcs[i], chain, EX_MAX_INLINE)
                        : 0;
        l->line = &p->plines[nl];
        for (size_t j = 0; j < nc; j++) { /* innermost first */
            int inl = ex_inlined_func(m, p->pcs[i], chain[j]->name);
            if (inl < 0)
                continue; /* not in the stacks: no such frame in the model */
            Line *ln = &p->lines[nl];
            cgprof__pprof__line__init(ln);
            ln->function_id = (uint64_t)inl + 1;
            ln->line = line;
            p->plines[nl++] = ln;
            l->n_line++;
            if (!used[inl]) {
                used[inl] = 1;
                Function *fn = &p->funcs[p->nfuncs];
                cgprof__pprof__function__init(fn);
                fn->id = (uint64_t)inl + 1;
                fn->name = fn->system_name = str_add(&p->s, ex_name(m, inl));
                if (file)
                    fn->filename = str_add(&p->s, file);
                p->pfuncs[p->nfuncs++] = fn;
            }
            /* where it was inlined: a line of the next one out */
            line = chain[j]->call_line;
            file = chain[j]->call_file;
        }
        Line *ln = &p->lines[nl];
        cgprof__pprof__line__init(ln);
        ln->function_id = fi + 1;
        ln->line = line;
        p->plines[nl++] = ln;
        l->n_line++;
        p->plocs[i] = l;
        if (!used[fi]) {
            used[fi] = 1;
            Function *fn = &p->funcs[p->nfuncs];
            cgprof__pprof__function__init(fn);
            fn->id = fi + 1;
            fn->name = str_add(&p->s, ex_name(m, f));
            fn->system_name = f == EX_TRUNCATED ? fn->name : str_add(&p->s, m->g->nodes[f].name);
            if (f != EX_TRUNCATED && have_lm &&
                linemap_find(&lm, m->st->syms[f].addr, &file, &line)) {
                fn->filename = str_add(&p->s, file);
                fn->start_line = line;
            } else if (ex_file(m, f, NULL)) {
                fn->filename = str_add(&p->s, ex_file(m, f, NULL));
            }
            p->pfuncs[p->nfuncs++] = fn;
        }
    }
    free(used);
    if (have_lm)
        linemap_free(&lm);
    return 0;
}

static int build_samples(struct pp *p, int nvals)
{
    const struct ex_model *m = p->m;
    const struct callgraph *g = m->g;
    size_t depth_sum = 0, n = 0;
    for (size_t i = 0; i < m->nnodes; i++)
        if (llround(m->nodes[i].count) > 0) {
            n++;
            for (int j = (int)i; j >= 0; j = m->nodes[j].parent)
                depth_sum++;
        }
    size_t ncalls = 0;
    for (size_t i = 0; i < g->narcs; i++)
        ncalls += g->arcs[i].count > 0;
    size_t total = n + ncalls;
    p->samples = calloc(total + 1, sizeof *p->samples);
    p->psamples = calloc(total + 1, sizeof *p->psamples);
    p->ids = malloc((depth_sum + 2 * ncalls + 1) * sizeof *p->ids);
    p->vals = calloc(total * (size_t)nvals + 1, sizeof *p->vals);
    if (!p->samples || !p->psamples || !p->ids || !p->vals)
        return -1;
    uint64_t *ids = p->ids;
    int64_t *vals = p->vals;
    for (size_t i = 0; i < m->nnodes; i++) {
        int64_t c = llround(m->nodes[i].count);
        if (c <= 0)
            continue;
        Sample *s = &p->samples[p->nsamples];
        cgprof__pprof__sample__init(s);
        s->location_id = ids;
        for (int j = (int)i; j >= 0; j = m->nodes[j].parent)
            if (!EX_IS_INLINED(m, m->nodes[j].func)) /* one of its pc's Lines */
                ids[s->n_location_id++] =
                    loc_id(p, m->nodes[j].func == EX_TRUNCATED ? UINT64_MAX : m->nodes[j].pc);
        ids += s->n_location_id;
        s->value = vals;
        s->n_value = (size_t)nvals;
        vals[0] = c;
        if (m->timed)
            vals[1] = llround(m->nodes[i].count * m->unit_ns);
        vals += nvals;
        p->psamples[p->nsamples++] = s;
    }
    for (size_t i = 0; i < g->narcs; i++) {
        const struct cg_arc *a = &g->arcs[i];
        if (a->count == 0)
            continue;
        Sample *s = &p->samples[p->nsamples];
        cgprof__pprof__sample__init(s);
        s->location_id = ids;
        ids[0] = loc_id(p, m->st->syms[a->child].addr);
        ids[1] = loc_id(p, m->st->syms[a->parent].addr);
        s->n_location_id = 2;
        ids += 2;
        s->value = vals;
        s->n_value = (size_t)nvals;
        vals[nvals - 1] = (int64_t)a->count;
        vals += nvals;
        p->psamples[p->nsamples++] = s;
    }
    return 0;
}

static void pp_free(struct pp *p)
{
    for (size_t i = 0; i < p->s.n; i++)
        free(p->s.v[i]);
    free(p->s.v);
    free(p->pcs);
    free(p->pc_func);
    free(p->locs);
    free(p->plocs);
    free(p->lines);
    free(p->plines);
    free(p->funcs);
    free(p->pfuncs);
    free(p->maps);
    free(p->pmaps);
    free(p->samples);
    free(p->psamples);
    free(p->ids);
    free(p->vals);
}

/* Gzips the N bytes at BUF to OUT. */
static int gzip_to(FILE *out, const uint8_t *buf, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    uLong cap = deflateBound(&z, (uLong)n);
    uint8_t *gz = malloc(cap);
    int rc = -1;
    if (gz) {
        z.next_in = (Bytef *)buf;
        z.avail_in = (uInt)n;
        z.next_out = gz;
        z.avail_out = (uInt)cap;
        if (deflate(&z, Z_FINISH) == Z_STREAM_END && fwrite(gz, 1, z.total_out, out) == z.total_out)
            rc = 0;
    }
    deflateEnd(&z);
    free(gz);
    return rc;
}

int ex_write_pprof(FILE *out, const struct ex_model *m, char *err, size_t errsz)
{
    struct pp p;
    memset(&p, 0, sizeof p);
    p.m = m;
    Profile prof = CGPROF__PPROF__PROFILE__INIT;
    str_add(&p.s, "");
    int nvals = m->timed ? 3 : 2;
    const char *types[3][2] = {{"samples", "count"}, {m->event, "nanoseconds"}, {"calls", "count"}};
    if (!m->timed) {
        types[0][0] = m->event;
        types[1][0] = "calls";
        types[1][1] = "count";
    }
    for (int i = 0; i < nvals; i++) {
        cgprof__pprof__value_type__init(&p.vt[i]);
        p.vt[i].type = str_add(&p.s, types[i][0]);
        p.vt[i].unit = str_add(&p.s, types[i][1]);
        p.pvt[i] = &p.vt[i];
    }
    cgprof__pprof__value_type__init(&p.period);
    p.period.type = str_add(&p.s, m->event);
    p.period.unit = str_add(&p.s, m->timed ? "nanoseconds" : "count");
    prof.period_type = &p.period;
    prof.period =
        m->timed ? llround(m->unit_ns) : (m->d && m->d->period ? (int64_t)m->d->period : 1);
    prof.default_sample_type = p.vt[m->timed ? 1 : 0].type;
    prof.sample_type = p.pvt;
    prof.n_sample_type = (size_t)nvals;
    char note[600];
    snprintf(note, sizeof note, "cgprof export of %s%s", m->prog,
             m->has_stacks ? "" : " (no stacks recorded: one-frame samples and call pairs)");
    p.comment = str_add(&p.s, note);
    prof.comment = &p.comment;
    prof.n_comment = 1;
    int rc = -1;
    if (collect_pcs(&p) == 0 && build_mappings(&p) == 0 && build_locations(&p) == 0 &&
        build_samples(&p, nvals) == 0 && !p.s.oom) {
        prof.mapping = p.pmaps;
        prof.n_mapping = p.nmaps;
        prof.location = p.plocs;
        prof.n_location = p.npcs;
        prof.function = p.pfuncs;
        prof.n_function = p.nfuncs;
        prof.sample = p.psamples;
        prof.n_sample = p.nsamples;
        prof.string_table = p.s.v;
        prof.n_string_table = p.s.n;
        size_t len = cgprof__pprof__profile__get_packed_size(&prof);
        uint8_t *buf = malloc(len ? len : 1);
        if (buf) {
            cgprof__pprof__profile__pack(&prof, buf);
            rc = gzip_to(out, buf, len);
            free(buf);
        }
        if (rc != 0)
            snprintf(err, errsz, "error writing the profile");
    } else {
        snprintf(err, errsz, "out of memory");
    }
    pp_free(&p);
    return rc;
}

/* Summing cgprof profiles (a process tree: a parent and its forked
 * children, the images of an exec chain of one program) and writing a
 * profile back out (report -s).
 *
 * Profiles are matched module by module -- same path and build-id -- and
 * counts are kept by (module, link-time address), which does not depend
 * on where each process loaded a library.  Profiles of different main
 * executables are refused: their call graphs would share no function, and
 * each `main` would be summed into a profile that is none of them.
 */
#include "cgsum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same_module(const struct cgdata_module *a, const struct cgdata_module *b)
{
    return strcmp(a->path, b->path) == 0 && a->build_id_len == b->build_id_len &&
           memcmp(a->build_id, b->build_id, a->build_id_len) == 0;
}

static const struct cgdata_module *main_module(const struct cgdata *d)
{
    for (size_t i = 0; i < d->nmodules; i++)
        if (d->modules[i].flags & CGDATA_MOD_MAIN)
            return &d->modules[i];
    return NULL;
}

static int cmp_sample(const void *x, const void *y)
{
    const struct cgdata_sample *a = x, *b = y;
    if (a->module != b->module)
        return a->module < b->module ? -1 : 1;
    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int cmp_arc(const void *x, const void *y)
{
    const struct cgdata_arc *a = x, *b = y;
    if (a->from_module != b->from_module)
        return a->from_module < b->from_module ? -1 : 1;
    if (a->from_addr != b->from_addr)
        return a->from_addr < b->from_addr ? -1 : 1;
    if (a->self_module != b->self_module)
        return a->self_module < b->self_module ? -1 : 1;
    return a->self_addr < b->self_addr ? -1 : a->self_addr > b->self_addr;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* Sorts and merges equal keys (counts summed). */
static void merge_samples(struct cgdata *d)
{
    qsort(d->samples, d->nsamples, sizeof *d->samples, cmp_sample);
    size_t k = 0;
    for (size_t i = 0; i < d->nsamples; i++) {
        if (k && cmp_sample(&d->samples[k - 1], &d->samples[i]) == 0)
            d->samples[k - 1].count = add_sat(d->samples[k - 1].count, d->samples[i].count);
        else
            d->samples[k++] = d->samples[i];
    }
    d->nsamples = k;
}

static void merge_arcs(struct cgdata *d)
{
    qsort(d->arcs, d->narcs, sizeof *d->arcs, cmp_arc);
    size_t k = 0;
    for (size_t i = 0; i < d->narcs; i++) {
        if (k && cmp_arc(&d->arcs[k - 1], &d->arcs[i]) == 0)
            d->arcs[k - 1].count = add_sat(d->arcs[k - 1].count, d->arcs[i].count);
        else
            d->arcs[k++] = d->arcs[i];
    }
    d->narcs = k;
}

static void *grow(void *p, size_t n, size_t size)
{
    return n ? realloc(p, n * size) : p;
}

/* ADD's module ID as SUM knows it. */
static uint32_t id_of(const struct cgdata *add, const uint32_t *map, uint32_t id)
{
    for (size_t i = 0; i < add->nmodules; i++)
        if (add->modules[i].id == id)
            return map[i];
    return CGDATA_NO_MODULE;
}

static uint64_t node_hash(uint32_t parent, uint32_t module, uint64_t addr)
{
    uint64_t h = ((uint64_t)parent << 32 | module) * 0x9E3779B97F4A7C15ull ^ addr;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ h >> 32;
}

/* Adds ADD's stack tree to SUM's: each node of ADD is the node of SUM
 * with the same parent, module (MAP-ped) and address, or a new one; the
 * counts add.  0, or -1 out of memory. */
static int merge_stacks(struct cgdata *sum, const struct cgdata *add, const uint32_t *map)
{
    if (!add->has_stacks)
        return 0;
    size_t cap = sum->nstacks + add->nstacks;
    struct cgdata_stack_node *nodes = grow(sum->stacks, cap + 1, sizeof *nodes);
    if (!nodes)
        return -1;
    sum->stacks = nodes;
    size_t hsize = 16;
    while (hsize < 2 * cap)
        hsize *= 2;
    uint32_t *slot = malloc(hsize * sizeof *slot);
    uint32_t *where = malloc((add->nstacks + 1) * sizeof *where);
    if (!slot || !where) {
        free(slot);
        free(where);
        return -1;
    }
    memset(slot, 0xff, hsize * sizeof *slot); /* UINT32_MAX: empty */
    for (size_t i = 0; i < sum->nstacks; i++) {
        const struct cgdata_stack_node *x = &nodes[i];
        size_t h = node_hash(x->parent, x->module, x->addr) & (hsize - 1);
        while (slot[h] != UINT32_MAX)
            h = (h + 1) & (hsize - 1);
        slot[h] = (uint32_t)i;
    }
    for (size_t i = 0; i < add->nstacks; i++) {
        struct cgdata_stack_node x = add->stacks[i];
        if (x.parent != CGDATA_NO_PARENT)
            x.parent = where[x.parent]; /* an earlier node: mapped already */
        if (x.module != CGDATA_NO_MODULE && x.module != CGDATA_CUT_MODULE)
            x.module = id_of(add, map, x.module);
        size_t h = node_hash(x.parent, x.module, x.addr) & (hsize - 1);
        for (; slot[h] != UINT32_MAX; h = (h + 1) & (hsize - 1)) {
            const struct cgdata_stack_node *y = &nodes[slot[h]];
            if (y->parent == x.parent && y->module == x.module && y->addr == x.addr)
                break;
        }
        if (slot[h] == UINT32_MAX) {
            slot[h] = (uint32_t)sum->nstacks;
            x.count = 0;
            nodes[sum->nstacks++] = x;
        }
        nodes[slot[h]].count = add_sat(nodes[slot[h]].count, add->stacks[i].count);
        where[i] = slot[h];
    }
    free(slot);
    free(where);
    sum->has_stacks = 1;
    if (add->stack_depth_limit > sum->stack_depth_limit)
        sum->stack_depth_limit = add->stack_depth_limit;
    sum->stacks_cut = add_sat(sum->stacks_cut, add->stacks_cut);
    sum->stacks_lost = add_sat(sum->stacks_lost, add->stacks_lost);
    return 0;
}

int cgdata_add(struct cgdata *sum, const char *sum_name, struct cgdata *add, const char *add_name,
               char *err, size_t errsz)
{
    const struct cgdata_module *ma = main_module(sum), *mb = main_module(add);
    if (ma && mb && !same_module(ma, mb)) {
        snprintf(err, errsz,
                 "%s and %s are profiles of different programs (%s, %s): they cannot be summed; "
                 "report them one at a time",
                 sum_name, add_name, ma->path, mb->path);
        return -1;
    }
    if (strcmp(sum->event, add->event) != 0 || sum->rate != add->rate ||
        sum->period != add->period) {
        snprintf(err, errsz,
                 "%s and %s sampled different events or rates (%s, %s): they cannot be summed",
                 sum_name, add_name, sum->event, add->event);
        return -1;
    }
    /* module ids of ADD -> ids in SUM */
    uint32_t *map = calloc(add->nmodules ? add->nmodules : 1, sizeof *map);
    uint32_t next = 0;
    for (size_t i = 0; i < sum->nmodules; i++)
        if (sum->modules[i].id >= next)
            next = sum->modules[i].id + 1;
    struct cgdata_module *mods =
        grow(sum->modules, sum->nmodules + add->nmodules, sizeof *sum->modules);
    if (!map || !mods) {
        free(map);
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    sum->modules = mods;
    for (size_t i = 0; i < add->nmodules; i++) {
        struct cgdata_module *m = &add->modules[i];
        size_t j = 0;
        while (j < sum->nmodules && !same_module(&sum->modules[j], m))
            j++;
        if (j < sum->nmodules) {
            map[i] = sum->modules[j].id;
            continue;
        }
        struct cgdata_module *n = &sum->modules[sum->nmodules++];
        *n = *m;
        n->id = next++;
        n->path = m->path;
        m->path = NULL; /* now SUM's */
        if (m->image) {
            /* the image lies in ADD's buffer, which goes away */
            unsigned char *copy = malloc(m->image_len ? m->image_len : 1);
            if (copy)
                memcpy(copy, m->image, m->image_len);
            n->image = copy;
            n->image_len = copy ? m->image_len : 0;
            n->image_owned = copy;
        }
        map[i] = n->id;
    }
    struct cgdata_sample *s = grow(sum->samples, sum->nsamples + add->nsamples, sizeof *s);
    struct cgdata_arc *a = grow(sum->arcs, sum->narcs + add->narcs, sizeof *a);
    struct cgdata_thread *t = grow(sum->threads, sum->nthreads + add->nthreads, sizeof *t);
    if (s)
        sum->samples = s;
    if (a)
        sum->arcs = a;
    if (t)
        sum->threads = t;
    if ((add->nsamples && !s) || (add->narcs && !a) || (add->nthreads && !t)) {
        free(map);
        snprintf(err, errsz, "out of memory");
        return -1;
    }
#define MAP(id) ((id) == CGDATA_NO_MODULE ? CGDATA_NO_MODULE : id_of(add, map, (id)))
    for (size_t i = 0; i < add->nsamples; i++) {
        struct cgdata_sample x = add->samples[i];
        x.module = MAP(x.module);
        sum->samples[sum->nsamples++] = x;
    }
    for (size_t i = 0; i < add->narcs; i++) {
        struct cgdata_arc x = add->arcs[i];
        x.from_module = MAP(x.from_module);
        x.self_module = MAP(x.self_module);
        sum->arcs[sum->narcs++] = x;
    }
#undef MAP
    for (size_t i = 0; i < add->nthreads; i++)
        sum->threads[sum->nthreads++] = add->threads[i];
    if (merge_stacks(sum, add, map) != 0) {
        free(map);
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    free(map);
    merge_samples(sum);
    merge_arcs(sum);
    sum->total_samples = add_sat(sum->total_samples, add->total_samples);
    sum->lost_samples = add_sat(sum->lost_samples, add->lost_samples);
    sum->total_calls = add_sat(sum->total_calls, add->total_calls);
    sum->lost_calls = add_sat(sum->lost_calls, add->lost_calls);
    sum->unsampled_threads = add_sat(sum->unsampled_threads, add->unsampled_threads);
    if (add->notes && cgdata_add_notes(sum, add->notes, strlen(add->notes)) != 0)
        return -1;
    if (add->runtime.present) {
        sum->runtime.present = 1;
        sum->runtime.helper_cpu_ns += add->runtime.helper_cpu_ns;
        sum->runtime.write_cpu_ns += add->runtime.write_cpu_ns;
        sum->runtime.writes += add->runtime.writes;
        sum->runtime.samples += add->runtime.samples;
        sum->runtime.start_cpu_ns += add->runtime.start_cpu_ns;
        sum->runtime.before_cpu_ns += add->runtime.before_cpu_ns;
        sum->runtime.late_ns += add->runtime.late_ns;
    }
    return 0;
}

/* ---- writing ---------------------------------------------------------- */

static void put(FILE *f, const void *p, size_t n)
{
    fwrite(p, 1, n, f);
}

static void put32(FILE *f, uint32_t v)
{
    put(f, &v, 4);
}

static void put64(FILE *f, uint64_t v)
{
    put(f, &v, 8);
}

/* A record of SIZE payload bytes (padded to 8 by the caller's payload). */
static void head(FILE *f, uint32_t tag, uint64_t size)
{
    put32(f, tag);
    put32(f, 0);
    put64(f, (size + 7) & ~(uint64_t)7);
}

static void pad(FILE *f, uint64_t size)
{
    static const char zero[8];
    if (size % 8)
        put(f, zero, 8 - size % 8);
}

int cgdata_write(const struct cgdata *d, FILE *f)
{
    static const char magic[8] = {'\x89', 'C', 'G', 'P', 'R', 'O', 'F', '\n'};
    put(f, magic, 8);
    put32(f, 1);
    put32(f, 16);
    uint32_t elen = (uint32_t)strlen(d->event);
    uint64_t size = 8 * 3 + 4 * 3 + elen;
    head(f, 1, size);
    put64(f, d->pid);
    put64(f, d->rate);
    put64(f, d->period);
    put32(f, d->kind);
    put32(f, d->timed);
    put32(f, elen);
    put(f, d->event, elen);
    pad(f, size);
    if (d->has_run_id) { /* RUN: all the profiles summed were of this run */
        head(f, 9, sizeof d->run_id);
        put(f, d->run_id, sizeof d->run_id);
    }
    for (size_t i = 0; i < d->nmodules; i++) {
        const struct cgdata_module *m = &d->modules[i];
        uint32_t plen = (uint32_t)strlen(m->path);
        size = 4 + 4 + 24 + 8 + m->build_id_len + plen;
        head(f, 2, size);
        put32(f, m->id);
        put32(f, m->flags);
        put64(f, m->bias);
        put64(f, m->lo);
        put64(f, m->hi);
        put32(f, m->build_id_len);
        put32(f, plen);
        put(f, m->build_id, m->build_id_len);
        put(f, m->path, plen);
        pad(f, size);
        if (m->image) {
            size = 16 + m->image_len;
            head(f, 6, size);
            put32(f, m->id);
            put32(f, 0);
            put64(f, m->image_len);
            put(f, m->image, m->image_len);
            pad(f, size);
        }
    }
    head(f, 3, 8 + 24 * (uint64_t)d->nsamples);
    put64(f, d->nsamples);
    for (size_t i = 0; i < d->nsamples; i++) {
        put32(f, d->samples[i].module);
        put32(f, 0);
        put64(f, d->samples[i].addr);
        put64(f, d->samples[i].count);
    }
    head(f, 4, 8 + 32 * (uint64_t)d->narcs);
    put64(f, d->narcs);
    for (size_t i = 0; i < d->narcs; i++) {
        put32(f, d->arcs[i].from_module);
        put32(f, d->arcs[i].self_module);
        put64(f, d->arcs[i].from_addr);
        put64(f, d->arcs[i].self_addr);
        put64(f, d->arcs[i].count);
    }
    head(f, 7, 8 + 24 * (uint64_t)d->nthreads);
    put64(f, d->nthreads);
    for (size_t i = 0; i < d->nthreads; i++) {
        put32(f, d->threads[i].tid);
        put32(f, d->threads[i].flags);
        put64(f, d->threads[i].samples);
        put64(f, d->threads[i].cpu_ns);
    }
    head(f, 5, 40);
    put64(f, d->total_samples);
    put64(f, d->lost_samples);
    put64(f, d->total_calls);
    put64(f, d->lost_calls);
    put64(f, d->unsampled_threads);
    if (d->notes && *d->notes) {
        uint64_t n = strlen(d->notes);
        head(f, 10, 8 + n);
        put64(f, n);
        put(f, d->notes, n);
        pad(f, 8 + n);
    }
    if (d->runtime.present) {
        head(f, 16, 56);
        put64(f, d->runtime.helper_cpu_ns);
        put64(f, d->runtime.write_cpu_ns);
        put64(f, d->runtime.writes);
        put64(f, d->runtime.samples);
        put64(f, d->runtime.start_cpu_ns);
        put64(f, d->runtime.before_cpu_ns);
        put64(f, d->runtime.late_ns);
    }
    if (d->has_stacks) {
        head(f, 8, 40 + 24 * (uint64_t)d->nstacks);
        put32(f, 1);
        put32(f, 0);
        put64(f, d->nstacks);
        put64(f, d->stack_depth_limit);
        put64(f, d->stacks_cut);
        put64(f, d->stacks_lost);
        for (size_t i = 0; i < d->nstacks; i++) {
            put32(f, d->stacks[i].parent);
            put32(f, d->stacks[i].module);
            put64(f, d->stacks[i].addr);
            put64(f, d->stacks[i].count);
        }
    }
    head(f, 255, 0); /* END */
    return ferror(f) ? -1 : 0;
}

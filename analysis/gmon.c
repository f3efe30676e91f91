/* Reader of GNU gmon.out files: header, histogram, call-arc and basic-block records.
 *
 * The whole file is read into memory first; every record is then parsed
 * through a cursor that checks the bytes it needs against the file size
 * before anything is copied or allocated, so a truncated or corrupted file
 * yields a message, never an overrun or a huge allocation.
 */
#include "gmon.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GMON_MAGIC   "gmon"
#define GMON_VERSION 1
#define HDR_SIZE     20
#define TAG_HIST     0
#define TAG_ARC      1
#define TAG_BB       2

/* A read position in a file held in memory. */
struct cursor {
    const unsigned char *buf;
    size_t size;
    size_t pos;
    const char *path;
    char *err;
    size_t errsz;
};

static int fail(struct cursor *c, size_t at, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errsz, "%s: %s (at offset %zu)", c->path, what, at);
    return -1;
}

static int need(struct cursor *c, size_t n, const char *what)
{
    if (c->size - c->pos < n)
        return fail(c, c->pos, "truncated %s: %zu bytes needed, %zu left", what, n,
                    c->size - c->pos);
    return 0;
}

/* Values are stored in the byte order of the profiled machine; cgprof reads
 * profiles of the machine it runs on, so native order is used. */
static uint64_t take64(struct cursor *c)
{
    uint64_t v;
    memcpy(&v, c->buf + c->pos, 8);
    c->pos += 8;
    return v;
}

static uint32_t take32(struct cursor *c)
{
    uint32_t v;
    memcpy(&v, c->buf + c->pos, 4);
    c->pos += 4;
    return v;
}

static uint16_t take16(struct cursor *c)
{
    uint16_t v;
    memcpy(&v, c->buf + c->pos, 2);
    c->pos += 2;
    return v;
}

void gmon_init(struct gmon_data *d)
{
    memset(d, 0, sizeof *d);
}

void gmon_free(struct gmon_data *d)
{
    for (size_t i = 0; i < d->nhists; i++)
        free(d->hists[i].bins);
    free(d->hists);
    free(d->arcs);
    free(d->arc_hash);
    gmon_init(d);
}

static size_t arc_slot(uint64_t from, uint64_t self, size_t cap)
{
    uint64_t h =
        from * 0x9E3779B97F4A7C15ull ^ (self + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* Rebuilds the hash index at twice the arc capacity (a power of two). */
static int arc_rehash(struct gmon_data *d)
{
    size_t cap = d->hash_cap ? d->hash_cap * 2 : 256;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return -1;
    for (size_t i = 0; i < d->narcs; i++) {
        size_t s = arc_slot(d->arcs[i].from_pc, d->arcs[i].self_pc, cap);
        while (h[s])
            s = (s + 1) & (cap - 1);
        h[s] = (uint32_t)(i + 1);
    }
    free(d->arc_hash);
    d->arc_hash = h;
    d->hash_cap = cap;
    return 0;
}

/* Adds COUNT to the arc (FROM, SELF), creating it at the end if new.
 * Invariant: the hash table is at most half full. */
static int arc_add(struct gmon_data *d, uint64_t from, uint64_t self, uint64_t count)
{
    if ((d->narcs + 1) * 2 > d->hash_cap && arc_rehash(d) != 0)
        return -1;
    size_t s = arc_slot(from, self, d->hash_cap);
    while (d->arc_hash[s]) {
        struct gmon_arc *a = &d->arcs[d->arc_hash[s] - 1];
        if (a->from_pc == from && a->self_pc == self) {
            a->count += count;
            return 0;
        }
        s = (s + 1) & (d->hash_cap - 1);
    }
    if (d->narcs == d->arcs_cap) {
        size_t cap = d->arcs_cap ? d->arcs_cap * 2 : 64;
        struct gmon_arc *n = realloc(d->arcs, cap * sizeof *n);
        if (!n)
            return -1;
        d->arcs = n;
        d->arcs_cap = cap;
    }
    d->arcs[d->narcs] = (struct gmon_arc){from, self, count};
    d->arc_hash[s] = (uint32_t)(++d->narcs);
    return 0;
}

static int read_arc(struct gmon_data *d, struct cursor *c)
{
    size_t at = c->pos;
    if (need(c, 20, "call-arc record"))
        return -1;
    uint64_t from = take64(c);
    uint64_t self = take64(c);
    uint32_t count = take32(c);
    if (from == 0 && self == 0) {
        d->lost_calls += count;
        return 0;
    }
    if (arc_add(d, from, self, count) != 0)
        return fail(c, at, "out of memory for call arcs");
    return 0;
}

static int read_bb(struct gmon_data *d, struct cursor *c)
{
    size_t at = c->pos;
    if (need(c, 4, "basic-block record"))
        return -1;
    uint32_t n = take32(c);
    if ((c->size - c->pos) / 16 < n)
        return fail(c, at, "basic-block record claims %u entries, file too short", n);
    c->pos += (size_t)n * 16;
    d->nbb_records += n;
    return 0;
}

/* The histogram D->hists[i] covering exactly [LO, HI), or -1.  Sets
 * *OVERLAP if an existing histogram covers part of [LO, HI). */
static long find_hist(const struct gmon_data *d, uint64_t lo, uint64_t hi, int *overlap)
{
    *overlap = 0;
    for (size_t i = 0; i < d->nhists; i++) {
        const struct gmon_hist *h = &d->hists[i];
        if (h->low_pc == lo && h->high_pc == hi)
            return (long)i;
        if (h->low_pc < hi && lo < h->high_pc)
            *overlap = 1;
    }
    return -1;
}

static double hist_scale_of(uint64_t lo, uint64_t hi, uint32_t nbins)
{
    return (double)((hi - lo) / 2) / nbins;
}

/* Checks a new histogram header against the first one read: gprof needs
 * one unit and one bin size for the whole profile. */
static int check_compatible(const struct gmon_data *d, struct cursor *c, size_t at,
                            const struct gmon_hist *h)
{
    if (d->nhists == 0)
        return 0;
    const struct gmon_hist *f = &d->hists[0];
    if (strcmp(f->dimen, h->dimen) != 0 || f->dimen_abbrev != h->dimen_abbrev)
        return fail(c, at, "histogram unit '%s' differs from '%s'", h->dimen, f->dimen);
    double s1 = hist_scale_of(f->low_pc, f->high_pc, f->nbins);
    double s2 = hist_scale_of(h->low_pc, h->high_pc, h->nbins);
    if (fabs(s1 - s2) > 0.000001)
        return fail(c, at, "histogram bin size differs from the first histogram's");
    return 0;
}

static int read_hist_header(struct cursor *c, struct gmon_hist *h)
{
    size_t at = c->pos;
    if (need(c, 40, "histogram header"))
        return -1;
    memset(h, 0, sizeof *h);
    h->low_pc = take64(c);
    h->high_pc = take64(c);
    h->nbins = take32(c);
    h->rate = take32(c);
    memcpy(h->dimen, c->buf + c->pos, 15);
    h->dimen_abbrev = (char)c->buf[c->pos + 15];
    c->pos += 16;
    if (h->high_pc <= h->low_pc)
        return fail(c, at, "histogram range 0x%llx-0x%llx is empty", (unsigned long long)h->low_pc,
                    (unsigned long long)h->high_pc);
    if (h->nbins == 0)
        return fail(c, at, "histogram has no bins");
    return 0;
}

static int read_hist(struct gmon_data *d, struct cursor *c)
{
    size_t at = c->pos;
    struct gmon_hist h;
    if (read_hist_header(c, &h) != 0 || check_compatible(d, c, at, &h) != 0)
        return -1;
    if ((c->size - c->pos) / 2 < h.nbins)
        return fail(c, at, "histogram claims %u bins, file too short", h.nbins);
    int overlap;
    long i = find_hist(d, h.low_pc, h.high_pc, &overlap);
    if (i < 0 && overlap)
        return fail(c, at, "histogram range overlaps an earlier, different one");
    if (i >= 0 && d->hists[i].nbins != h.nbins)
        return fail(c, at, "histogram has %u bins, earlier one for this range %u", h.nbins,
                    d->hists[i].nbins);
    if (i < 0) {
        struct gmon_hist *n = realloc(d->hists, (d->nhists + 1) * sizeof *n);
        if (!n)
            return fail(c, at, "out of memory");
        d->hists = n;
        h.bins = calloc(h.nbins, sizeof *h.bins);
        if (!h.bins)
            return fail(c, at, "out of memory for %u bins", h.nbins);
        i = (long)d->nhists++;
        d->hists[i] = h;
    }
    uint32_t *bins = d->hists[i].bins;
    for (uint32_t b = 0; b < h.nbins; b++)
        bins[b] += take16(c);
    return 0;
}

static int read_header(struct cursor *c)
{
    if (c->size < HDR_SIZE || memcmp(c->buf, GMON_MAGIC, 4) != 0)
        return fail(c, 0, "not a gmon.out file (no 'gmon' magic)");
    c->pos = 4;
    uint32_t version = take32(c);
    if (version != GMON_VERSION)
        return fail(c, 4, "unsupported gmon.out version %u", version);
    c->pos = HDR_SIZE;
    return 0;
}

static int parse(struct gmon_data *d, struct cursor *c)
{
    if (read_header(c) != 0)
        return -1;
    while (c->pos < c->size) {
        size_t at = c->pos;
        int tag = c->buf[c->pos++];
        int rc;
        switch (tag) {
        case TAG_HIST:
            rc = read_hist(d, c);
            break;
        case TAG_ARC:
            rc = read_arc(d, c);
            break;
        case TAG_BB:
            rc = read_bb(d, c);
            break;
        default:
            return fail(c, at, "unknown record tag %d", tag);
        }
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* Reads the whole of PATH into a malloc'ed buffer. */
static unsigned char *slurp(const char *path, size_t *size, char *err, size_t errsz)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return NULL;
    }
    unsigned char *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        snprintf(err, errsz, "%s: cannot determine file size", path);
    } else if (!(buf = malloc(n ? (size_t)n : 1))) {
        snprintf(err, errsz, "%s: out of memory for %ld bytes", path, n);
    } else if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        snprintf(err, errsz, "%s: read error", path);
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

int gmon_read(struct gmon_data *d, const char *path, char *err, size_t errsz)
{
    size_t size;
    unsigned char *buf = slurp(path, &size, err, errsz);
    if (!buf)
        return -1;
    struct cursor c = {buf, size, 0, path, err, errsz};
    int rc = parse(d, &c);
    free(buf);
    return rc;
}

/* Reader of gmon.out files: GNU tagged records (histogram, call arc, basic block) and BSD layouts.
 *
 * The whole file is read into memory first; every record is then parsed
 * through a cursor that checks the bytes it needs against the file size
 * before anything is copied or allocated, so a truncated or corrupted file
 * yields a message, never an overrun or an allocation larger than the file
 * justifies (a histogram's bins, two bytes each in the file, become four
 * in memory; arcs and histograms grow by doubling as records are read).
 *
 * Format detection follows gprof: a file opening with "gmon" is GNU;
 * anything else is tried as BSD, told apart from old BSD by the version
 * word 0x51879 after the 20 bytes both layouts share.  Unlike gprof, a BSD
 * header is believed only if it describes the file exactly -- a non-empty
 * pc range, a histogram that fits in the file and a whole number of arcs
 * after it -- so a GNU file with a damaged magic is refused at once
 * instead of being read as a huge BSD histogram.
 */
#include "gmon.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GMON_MAGIC      "gmon"
#define HDR_SIZE        20
#define TAG_HIST        0
#define TAG_ARC         1
#define TAG_BB          2
#define HIST_HDR_SIZE   40
#define ARC_SIZE        20
#define BB_ENTRY_SIZE   16
#define BSD_VERSION     0x00051879u
#define BSD44_HDR_SIZE  40 /* lpc, hpc, ncnt, version, profrate, spare[3] */
#define BSDOLD_HDR_SIZE 20 /* lpc, hpc, ncnt; gprof reads it unpadded */
#define BSD_ARC_SIZE    24 /* from_pc, self_pc, long count */

/* A read position in a file held in memory, and where to report. */
struct cursor {
    const unsigned char *buf;
    size_t size;
    size_t pos;
    const char *path;
    char *err;
    size_t errsz;
    /* histograms this file added: d->hists[first_new ...], each with the
     * offset of its record, for the overlap check at the end */
    size_t first_new;
    size_t *new_at;
    size_t new_cap;
};

static int fail(struct cursor *c, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct cursor *c, size_t at, const char *fmt, ...)
{
    char what[256];
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
 * profiles of the machine it runs on, so native order is used.  Callers
 * have checked the bytes are there. */
static uint64_t get64(const struct cursor *c, size_t at)
{
    uint64_t v;
    memcpy(&v, c->buf + at, 8);
    return v;
}

static uint32_t get32(const struct cursor *c, size_t at)
{
    uint32_t v;
    memcpy(&v, c->buf + at, 4);
    return v;
}

static uint64_t take64(struct cursor *c)
{
    c->pos += 8;
    return get64(c, c->pos - 8);
}

static uint32_t take32(struct cursor *c)
{
    c->pos += 4;
    return get32(c, c->pos - 4);
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
    free(d->hist_hash);
    free(d->arcs);
    free(d->arc_hash);
    free(d->bbs);
    gmon_init(d);
}

/* ---- hash index on a pair of addresses (arcs and histogram ranges) ---- */

static size_t pair_slot(uint64_t a, uint64_t b, size_t cap)
{
    uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* An open-addressing table of 1-based indices (0 = empty slot), its
 * capacity a power of two; KEY(i) yields the pair of element i. */
typedef void pair_key_fn(const struct gmon_data *d, size_t i, uint64_t *a, uint64_t *b);

static void arc_key(const struct gmon_data *d, size_t i, uint64_t *a, uint64_t *b)
{
    *a = d->arcs[i].from_pc;
    *b = d->arcs[i].self_pc;
}

static void hist_key(const struct gmon_data *d, size_t i, uint64_t *a, uint64_t *b)
{
    *a = d->hists[i].low_pc;
    *b = d->hists[i].high_pc;
}

/* Rebuilds the table *TAB for N elements at twice its capacity. */
static int pair_rehash(const struct gmon_data *d, uint32_t **tab, size_t *cap, size_t n,
                       pair_key_fn *key)
{
    size_t ncap = *cap ? *cap * 2 : 64;
    uint32_t *h = calloc(ncap, sizeof *h);
    if (!h)
        return -1;
    for (size_t i = 0; i < n; i++) {
        uint64_t a, b;
        key(d, i, &a, &b);
        size_t s = pair_slot(a, b, ncap);
        while (h[s])
            s = (s + 1) & (ncap - 1);
        h[s] = (uint32_t)(i + 1);
    }
    free(*tab);
    *tab = h;
    *cap = ncap;
    return 0;
}

/* The slot holding the element keyed (A, B), or the empty slot where it
 * would go.  Invariant: the table is at most half full, so one exists. */
static size_t pair_find(const struct gmon_data *d, const uint32_t *tab, size_t cap, uint64_t a,
                        uint64_t b, pair_key_fn *key)
{
    size_t s = pair_slot(a, b, cap);
    while (tab[s]) {
        uint64_t ka, kb;
        key(d, tab[s] - 1, &ka, &kb);
        if (ka == a && kb == b)
            break;
        s = (s + 1) & (cap - 1);
    }
    return s;
}

/* ---- call arcs ---- */

/* Adds COUNT to the arc (FROM, SELF), creating it at the end if new. */
static int arc_add(struct gmon_data *d, uint64_t from, uint64_t self, uint64_t count)
{
    if ((d->narcs + 1) * 2 > d->hash_cap &&
        pair_rehash(d, &d->arc_hash, &d->hash_cap, d->narcs, arc_key) != 0)
        return -1;
    size_t s = pair_find(d, d->arc_hash, d->hash_cap, from, self, arc_key);
    if (d->arc_hash[s]) {
        uint64_t *sum = &d->arcs[d->arc_hash[s] - 1].count;
        return __builtin_add_overflow(*sum, count, sum) ? -2 : 0;
    }
    if (d->narcs == UINT32_MAX)
        return -1;
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

/* An arc from 0 to 0 counts the calls the runtime could not record. */
static int add_raw_arc(struct gmon_data *d, struct cursor *c, size_t at, uint64_t from,
                       uint64_t self, uint64_t count)
{
    if (from == 0 && self == 0) {
        if (__builtin_add_overflow(d->lost_calls, count, &d->lost_calls))
            return fail(c, at, "lost-call counts add up to more than 2^64");
        return 0;
    }
    int rc = arc_add(d, from, self, count);
    if (rc == -2)
        return fail(c, at, "call counts of one arc add up to more than 2^64");
    if (rc != 0)
        return fail(c, at, "out of memory for call arcs");
    return 0;
}

static int read_arc(struct gmon_data *d, struct cursor *c)
{
    size_t at = c->pos - 1; /* the record, from its tag */
    if (need(c, ARC_SIZE, "call-arc record"))
        return -1;
    uint64_t from = take64(c);
    uint64_t self = take64(c);
    uint32_t count = take32(c);
    return add_raw_arc(d, c, at, from, self, count);
}

/* ---- basic-block counts: kept in file order (version 0's are skipped) ---- */

static int read_bb(struct gmon_data *d, struct cursor *c, uint32_t version)
{
    size_t at = c->pos - 1;
    if (need(c, 4, "basic-block record"))
        return -1;
    uint32_t n = take32(c);
    if (version == 0) {
        /* version 0 follows the count with a NUL-terminated file name */
        const unsigned char *nul = memchr(c->buf + c->pos, 0, c->size - c->pos);
        if (!nul)
            return fail(c, c->pos, "basic-block record: file name runs past the end");
        c->pos = (size_t)(nul - c->buf) + 1;
    }
    if ((c->size - c->pos) / BB_ENTRY_SIZE < n)
        return fail(c, at, "basic-block record claims %u entries, only %zu bytes left", n,
                    c->size - c->pos);
    if (version == 0 || n == 0) { /* version 0 entries have another layout */
        c->pos += (size_t)n * BB_ENTRY_SIZE;
    } else {
        /* n is bounded by the bytes left, so this is at most the file's size */
        struct gmon_bb *b = realloc(d->bbs, (d->nbbs + n) * sizeof *b);
        if (!b)
            return fail(c, at, "out of memory for %u basic-block counts", n);
        d->bbs = b;
        for (uint32_t i = 0; i < n; i++) {
            b[d->nbbs].addr = take64(c);
            b[d->nbbs++].count = take64(c);
        }
    }
    d->nbb_records += n;
    d->nbb_tags++;
    return 0;
}

/* ---- histograms ---- */

/* Units come from the file: shown with anything unprintable as '?'. */
static char printable_char(char ch)
{
    return ch >= 0x20 && ch < 0x7f ? ch : '?';
}

static const char *printable(char out[16], const char *in)
{
    size_t i = 0;
    for (; i < 15 && in[i]; i++)
        out[i] = printable_char(in[i]);
    out[i] = 0;
    return out;
}

static double hist_scale_of(const struct gmon_hist *h)
{
    return (double)((h->high_pc - h->low_pc) / 2) / h->nbins;
}

/* Checks a new histogram header against the first one read: gprof needs
 * one unit and one bin size for the whole profile (its rate, as gprof's,
 * is the first histogram's; BSD files check theirs in read_bsd). */
static int check_compatible(const struct gmon_data *d, struct cursor *c, size_t at,
                            const struct gmon_hist *h)
{
    if (d->nhists == 0)
        return 0;
    const struct gmon_hist *f = &d->hists[0];
    char a[sizeof h->dimen], b[sizeof h->dimen];
    if (strcmp(f->dimen, h->dimen) != 0)
        return fail(c, at, "histogram unit '%s' differs from the first histogram's '%s'",
                    printable(a, h->dimen), printable(b, f->dimen));
    if (f->dimen_abbrev != h->dimen_abbrev)
        return fail(c, at,
                    "histogram unit abbreviation '%c' differs from the first histogram's '%c'",
                    printable_char(h->dimen_abbrev), printable_char(f->dimen_abbrev));
    double s1 = hist_scale_of(f), s2 = hist_scale_of(h);
    if (fabs(s1 - s2) > 0.000001)
        return fail(c, at, "histogram bin size %g differs from the first histogram's %g", 2 * s2,
                    2 * s1);
    return 0;
}

/* Adds histogram H (header read and checked; its H->nbins 16-bit counts
 * at BINS, in the file) to D: summed into the histogram of the same range,
 * or appended.  Overlaps with other ranges are found by check_overlaps. */
static int add_hist(struct gmon_data *d, struct cursor *c, size_t at, struct gmon_hist *h,
                    const unsigned char *bins)
{
    if (check_compatible(d, c, at, h) != 0)
        return -1;
    if ((d->nhists + 1) * 2 > d->hist_hash_cap &&
        pair_rehash(d, &d->hist_hash, &d->hist_hash_cap, d->nhists, hist_key) != 0)
        return fail(c, at, "out of memory for histograms");
    size_t s = pair_find(d, d->hist_hash, d->hist_hash_cap, h->low_pc, h->high_pc, hist_key);
    struct gmon_hist *t;
    if (d->hist_hash[s]) {
        t = &d->hists[d->hist_hash[s] - 1];
        if (t->nbins != h->nbins)
            return fail(c, at, "histogram has %u bins, an earlier one for the same range %u",
                        h->nbins, t->nbins);
    } else {
        size_t k = d->nhists - c->first_new;
        if (k == c->new_cap) {
            size_t cap = c->new_cap ? c->new_cap * 2 : 8;
            size_t *n = realloc(c->new_at, cap * sizeof *n);
            if (!n)
                return fail(c, at, "out of memory for histograms");
            c->new_at = n;
            c->new_cap = cap;
        }
        if (d->nhists == d->hists_cap) {
            size_t cap = d->hists_cap ? d->hists_cap * 2 : 4;
            struct gmon_hist *n = realloc(d->hists, cap * sizeof *n);
            if (!n)
                return fail(c, at, "out of memory for histograms");
            d->hists = n;
            d->hists_cap = cap;
        }
        h->bins = calloc(h->nbins, sizeof *h->bins);
        if (!h->bins)
            return fail(c, at, "out of memory for %u histogram bins", h->nbins);
        c->new_at[k] = at;
        t = &d->hists[d->nhists];
        *t = *h;
        d->hist_hash[s] = (uint32_t)(++d->nhists);
    }
    for (uint32_t b = 0; b < h->nbins; b++) {
        uint16_t v;
        memcpy(&v, bins + 2 * (size_t)b, 2);
        t->bins[b] += v;
    }
    return 0;
}

static const struct gmon_hist *sort_hists; /* qsort has no context argument */

static int by_low_pc(const void *a, const void *b)
{
    uint64_t x = sort_hists[*(const size_t *)a].low_pc;
    uint64_t y = sort_hists[*(const size_t *)b].low_pc;
    return x < y ? -1 : x > y;
}

/* Fails if two histogram ranges overlap.  Ranges read before this file
 * were disjoint, so any overlap involves one of this file's, and sorted by
 * low_pc some neighbouring pair overlaps.  O(n log n), however many. */
static int check_overlaps(const struct gmon_data *d, struct cursor *c)
{
    if (d->nhists == c->first_new || d->nhists < 2)
        return 0;
    size_t *ix = malloc(d->nhists * sizeof *ix);
    if (!ix)
        return fail(c, 0, "out of memory for histograms");
    for (size_t i = 0; i < d->nhists; i++)
        ix[i] = i;
    sort_hists = d->hists;
    qsort(ix, d->nhists, sizeof *ix, by_low_pc);
    int rc = 0;
    for (size_t i = 0; i + 1 < d->nhists && rc == 0; i++) {
        const struct gmon_hist *a = &d->hists[ix[i]], *b = &d->hists[ix[i + 1]];
        if (a->high_pc <= b->low_pc)
            continue;
        size_t later = ix[i] > ix[i + 1] ? ix[i] : ix[i + 1];
        const struct gmon_hist *o = later == ix[i] ? b : a, *n = &d->hists[later];
        rc = fail(c, c->new_at[later - c->first_new],
                  "histogram 0x%llx-0x%llx overlaps the histogram 0x%llx-0x%llx",
                  (unsigned long long)n->low_pc, (unsigned long long)n->high_pc,
                  (unsigned long long)o->low_pc, (unsigned long long)o->high_pc);
    }
    free(ix);
    return rc;
}

static int read_hist(struct gmon_data *d, struct cursor *c)
{
    size_t at = c->pos - 1;
    struct gmon_hist h;
    if (need(c, HIST_HDR_SIZE, "histogram header"))
        return -1;
    memset(&h, 0, sizeof h);
    h.low_pc = take64(c);
    h.high_pc = take64(c);
    h.nbins = take32(c);
    h.rate = take32(c);
    memcpy(h.dimen, c->buf + c->pos, 15);
    h.dimen_abbrev = (char)c->buf[c->pos + 15];
    c->pos += 16;
    if (h.high_pc <= h.low_pc)
        return fail(c, at, "histogram range 0x%llx-0x%llx is empty", (unsigned long long)h.low_pc,
                    (unsigned long long)h.high_pc);
    if (h.nbins == 0)
        return fail(c, at, "histogram has no bins");
    if ((c->size - c->pos) / 2 < h.nbins)
        return fail(c, at, "histogram claims %u bins, only %zu bytes left", h.nbins,
                    c->size - c->pos);
    const unsigned char *bins = c->buf + c->pos;
    c->pos += (size_t)h.nbins * 2;
    return add_hist(d, c, at, &h, bins);
}

/* ---- the two layouts ---- */

static int read_gnu(struct gmon_data *d, struct cursor *c)
{
    if (c->size < HDR_SIZE)
        return fail(c, c->size, "truncated gmon.out header: %d bytes needed, %zu in the file",
                    HDR_SIZE, c->size);
    uint32_t version = get32(c, 4);
    if (version != 1 && version != 0)
        return fail(c, 4, "unsupported gmon.out version %u", version);
    d->version = version;
    c->pos = HDR_SIZE;
    while (c->pos < c->size) {
        size_t at = c->pos;
        int tag = c->buf[c->pos++];
        int rc;
        switch (tag) {
        case TAG_HIST:
            d->nhist_tags++;
            rc = read_hist(d, c);
            break;
        case TAG_ARC:
            d->narc_tags++;
            rc = read_arc(d, c);
            break;
        case TAG_BB:
            rc = read_bb(d, c, version);
            break;
        default:
            return fail(c, at, "unknown record tag %d", tag);
        }
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* Ticks per second gprof assumes for an old BSD file, which has no rate. */
static uint32_t clock_ticks(void)
{
    long t = sysconf(_SC_CLK_TCK);
    return t > 0 && t <= (long)UINT32_MAX ? (uint32_t)t : 1;
}

static int not_bsd(struct cursor *c, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int not_bsd(struct cursor *c, size_t at, const char *fmt, ...)
{
    char why[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return fail(c, at, "neither a GNU gmon.out (no 'gmon' magic) nor a BSD profile (%s)", why);
}

/* A BSD profile: header, histogram of (ncnt - header) / 2 counters, then
 * arcs to the end.  Every size is checked against the file's before use. */
static int read_bsd(struct gmon_data *d, struct cursor *c)
{
    if (c->size < BSDOLD_HDR_SIZE + 4)
        return not_bsd(c, 0, "%zu bytes are too few for a BSD header", c->size);
    struct gmon_hist h;
    memset(&h, 0, sizeof h);
    h.low_pc = get64(c, 0);
    h.high_pc = get64(c, 8);
    uint32_t ncnt = get32(c, 16);
    size_t hdr = BSDOLD_HDR_SIZE;
    h.rate = clock_ticks();
    if (get32(c, 20) == BSD_VERSION) {
        hdr = BSD44_HDR_SIZE;
        if (c->size < hdr)
            return not_bsd(c, 0, "%zu bytes are too few for a 4.4BSD header", c->size);
        h.rate = get32(c, 24);
        if (h.rate == 0)
            return not_bsd(c, 24, "4.4BSD header with a profiling rate of 0");
    }
    if (h.high_pc <= h.low_pc)
        return not_bsd(c, 0, "empty pc range 0x%llx-0x%llx", (unsigned long long)h.low_pc,
                       (unsigned long long)h.high_pc);
    if (ncnt > c->size)
        return not_bsd(c, 16, "histogram end %u is past the end of the file, %zu", ncnt, c->size);
    if (ncnt < hdr + 2 || (ncnt - hdr) % 2 != 0)
        return not_bsd(c, 16,
                       "histogram end %u does not leave whole bins after the %zu-byte header", ncnt,
                       hdr);
    if ((c->size - ncnt) % BSD_ARC_SIZE != 0)
        return not_bsd(c, ncnt, "%zu bytes after the histogram are not whole %d-byte arcs",
                       c->size - ncnt, BSD_ARC_SIZE);
    if (d->nhists > 0 && hdr == BSD44_HDR_SIZE && h.rate != d->hists[0].rate)
        return fail(c, 24, "profiling rate %u differs from the first histogram's %u", h.rate,
                    d->hists[0].rate);
    h.nbins = (ncnt - (uint32_t)hdr) / 2;
    strcpy(h.dimen, "seconds");
    h.dimen_abbrev = 's';
    if (add_hist(d, c, 0, &h, c->buf + hdr) != 0)
        return -1;
    d->version = 0;
    d->nhist_tags++;
    for (c->pos = ncnt; c->pos < c->size;) {
        d->narc_tags++;
        size_t at = c->pos;
        uint64_t from = take64(c);
        uint64_t self = take64(c);
        uint64_t count = take64(c);
        if (add_raw_arc(d, c, at, from, self, count) != 0)
            return -1;
    }
    return 0;
}

static int parse(struct gmon_data *d, struct cursor *c)
{
    c->first_new = d->nhists;
    int rc;
    if (c->size >= 4 && memcmp(c->buf, GMON_MAGIC, 4) == 0)
        rc = read_gnu(d, c);
    else
        rc = read_bsd(d, c);
    if (rc == 0)
        rc = check_overlaps(d, c);
    free(c->new_at);
    return rc;
}

/* ---- the file ---- */

/* Reads all of FD into a malloc'ed buffer: a regular file in one piece
 * (its size known), anything else (a pipe) in growing chunks. */
static unsigned char *slurp_fd(int fd, const struct stat *st, size_t *size)
{
    size_t cap = S_ISREG(st->st_mode) && st->st_size > 0 ? (size_t)st->st_size + 1 : 65536;
    size_t len = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        if (len == cap) {
            unsigned char *n = realloc(buf, cap * 2);
            if (!n)
                break;
            buf = n;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got == 0) {
            *size = len;
            return buf;
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        len += (size_t)got;
    }
    int e = errno;
    free(buf);
    errno = e ? e : ENOMEM;
    return NULL;
}

int gmon_read(struct gmon_data *d, const char *path, char *err, size_t errsz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errsz, "%s: %s", path, strerror(EISDIR));
        close(fd);
        return -1;
    }
    size_t size = 0;
    errno = 0;
    unsigned char *buf = slurp_fd(fd, &st, &size);
    int e = errno;
    close(fd);
    if (!buf) {
        snprintf(err, errsz, "%s: read error: %s", path, strerror(e));
        return -1;
    }
    int rc = gmon_read_buffer(d, path, buf, size, err, errsz);
    free(buf);
    return rc;
}

int gmon_read_buffer(struct gmon_data *d, const char *name, const void *buf, size_t size, char *err,
                     size_t errsz)
{
    struct cursor c = {buf, size, 0, name, err, errsz, 0, NULL, 0};
    return parse(d, &c);
}

int gmon_add_arc(struct gmon_data *d, uint64_t from_pc, uint64_t self_pc, uint64_t count)
{
    return arc_add(d, from_pc, self_pc, count);
}

/* Reader of cgprof's own profile format: every length is checked against
 * the bytes left in the file before anything is allocated or copied, so a
 * truncated or hostile file gets an error, never a crash or a huge
 * allocation. */
#include "cgdata.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const unsigned char magic[8] = {0x89, 'C', 'G', 'P', 'R', 'O', 'F', '\n'};

enum {
    TAG_INFO = 1,
    TAG_MODULE,
    TAG_SAMPLES,
    TAG_ARCS,
    TAG_TOTALS,
    TAG_IMAGE,
    TAG_THREADS,
    TAG_STACKS,
    TAG_RUN
};
enum { TAG_END = 255 }; /* the last record: without it the file was cut short */
enum { TAG_NOTES = 10, TAG_RUNTIME = 16, TAG_KERNEL = 17 };

int cgdata_is(const void *p, size_t n)
{
    return n >= 8 && memcmp(p, magic, 8) == 0;
}

/* A bounded cursor over one record's payload. */
struct cur {
    const unsigned char *p, *end;
    size_t base; /* file offset of p at start, for messages */
    const unsigned char *start;
    int bad;
};

static int need(struct cur *c, size_t n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = 1;
        return 0;
    }
    return 1;
}

static uint32_t get32(struct cur *c)
{
    uint32_t v = 0;
    if (need(c, 4)) {
        memcpy(&v, c->p, 4);
        c->p += 4;
    }
    return v;
}

static uint64_t get64(struct cur *c)
{
    uint64_t v = 0;
    if (need(c, 8)) {
        memcpy(&v, c->p, 8);
        c->p += 8;
    }
    return v;
}

static const unsigned char *get_bytes(struct cur *c, uint64_t n)
{
    if (!need(c, n))
        return NULL;
    const unsigned char *r = c->p;
    c->p += n;
    return r;
}

static size_t off(const struct cur *c)
{
    return c->base + (size_t)(c->p - c->start);
}

static int fail(char *err, size_t errsz, const char *path, size_t at, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(err, errsz, "%s: %s (at offset %zu)", path, what, at);
    return -1;
}

static int read_file(const char *path, unsigned char **buf, size_t *len, char *err, size_t errsz)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        snprintf(err, errsz, "%s: not a regular file", path);
        return -1;
    }
    *len = (size_t)st.st_size;
    *buf = malloc(*len ? *len : 1);
    if (!*buf || fread(*buf, 1, *len, f) != *len) {
        fclose(f);
        free(*buf);
        *buf = NULL;
        snprintf(err, errsz, "%s: cannot read", path);
        return -1;
    }
    fclose(f);
    return 0;
}

static int read_module(struct cgdata *d, struct cur *c)
{
    struct cgdata_module m;
    memset(&m, 0, sizeof m);
    m.id = get32(c);
    m.flags = get32(c);
    m.bias = get64(c);
    m.lo = get64(c);
    m.hi = get64(c);
    m.build_id_len = get32(c);
    uint32_t plen = get32(c);
    if (c->bad || m.build_id_len > sizeof m.build_id)
        return -1;
    const unsigned char *bid = get_bytes(c, m.build_id_len);
    const unsigned char *p = get_bytes(c, plen);
    if (!bid || !p || plen > 4096 || m.hi < m.lo)
        return -1;
    memcpy(m.build_id, bid, m.build_id_len);
    m.path = malloc(plen + 1);
    if (!m.path)
        return -1;
    memcpy(m.path, p, plen);
    m.path[plen] = '\0';
    m.unload_gen = UINT32_MAX;
    if (c->end - c->p >= 8) { /* since modules are told apart by their load */
        m.load_gen = get32(c);
        m.unload_gen = get32(c);
    }
    struct cgdata_module *n = realloc(d->modules, (d->nmodules + 1) * sizeof *n);
    if (!n) {
        free(m.path);
        return -1;
    }
    d->modules = n;
    d->modules[d->nmodules++] = m;
    return 0;
}

/* SAMPLES and ARCS: a count, then fixed-size entries that must all fit. */
static int read_samples(struct cgdata *d, struct cur *c)
{
    uint64_t n = get64(c);
    if (c->bad || n > (uint64_t)(c->end - c->p) / 24)
        return -1;
    struct cgdata_sample *s = realloc(d->samples, (d->nsamples + n + 1) * sizeof *s);
    if (!s)
        return -1;
    d->samples = s;
    for (uint64_t i = 0; i < n; i++) {
        struct cgdata_sample *x = &d->samples[d->nsamples++];
        x->module = get32(c);
        get32(c);
        x->addr = get64(c);
        x->count = get64(c);
    }
    return c->bad ? -1 : 0;
}

static int read_arcs(struct cgdata *d, struct cur *c)
{
    uint64_t n = get64(c);
    if (c->bad || n > (uint64_t)(c->end - c->p) / 32)
        return -1;
    struct cgdata_arc *a = realloc(d->arcs, (d->narcs + n + 1) * sizeof *a);
    if (!a)
        return -1;
    d->arcs = a;
    for (uint64_t i = 0; i < n; i++) {
        struct cgdata_arc *x = &d->arcs[d->narcs++];
        x->from_module = get32(c);
        x->self_module = get32(c);
        x->from_addr = get64(c);
        x->self_addr = get64(c);
        x->count = get64(c);
    }
    return c->bad ? -1 : 0;
}

static int read_threads(struct cgdata *d, struct cur *c)
{
    uint64_t n = get64(c);
    if (c->bad || n > (uint64_t)(c->end - c->p) / 24)
        return -1;
    struct cgdata_thread *t = realloc(d->threads, (d->nthreads + n + 1) * sizeof *t);
    if (!t)
        return -1;
    d->threads = t;
    for (uint64_t i = 0; i < n; i++) {
        struct cgdata_thread *x = &d->threads[d->nthreads++];
        x->tid = get32(c);
        x->flags = get32(c);
        x->samples = get64(c);
        x->cpu_ns = get64(c);
    }
    return c->bad ? -1 : 0;
}

/* STACKS: the call-path tree, each node after its parent. */
static int read_stacks(struct cgdata *d, struct cur *c)
{
    uint32_t version = get32(c);
    get32(c);
    uint64_t n = get64(c);
    uint64_t limit = get64(c), cut = get64(c), lost = get64(c);
    if (c->bad || version != 1 || d->has_stacks || n > (uint64_t)(c->end - c->p) / 24 ||
        n >= CGDATA_NO_PARENT)
        return -1;
    d->stacks = malloc((n + 1) * sizeof *d->stacks);
    if (!d->stacks)
        return -1;
    d->has_stacks = 1;
    d->stack_depth_limit = limit;
    d->stacks_cut = cut;
    d->stacks_lost = lost;
    for (uint64_t i = 0; i < n; i++) {
        struct cgdata_stack_node *x = &d->stacks[d->nstacks++];
        x->parent = get32(c);
        x->module = get32(c);
        x->addr = get64(c);
        x->count = get64(c);
        if (x->parent != CGDATA_NO_PARENT && x->parent >= i)
            return -1;
    }
    return c->bad ? -1 : 0;
}

static int read_record(struct cgdata *d, uint32_t tag, struct cur *c, int *seen_info)
{
    switch (tag) {
    case TAG_INFO: {
        d->pid = get64(c);
        d->rate = get64(c);
        d->period = get64(c);
        d->kind = get32(c);
        d->timed = get32(c);
        uint32_t n = get32(c);
        const unsigned char *name = get_bytes(c, n);
        if (!name || n >= sizeof d->event)
            return -1;
        memcpy(d->event, name, n);
        d->event[n] = '\0';
        *seen_info = 1;
        return 0;
    }
    case TAG_RUN: {
        const unsigned char *id = get_bytes(c, sizeof d->run_id);
        if (!id)
            return -1;
        memcpy(d->run_id, id, sizeof d->run_id);
        d->has_run_id = 1;
        return 0;
    }
    case TAG_MODULE:
        return read_module(d, c);
    case TAG_SAMPLES:
        return read_samples(d, c);
    case TAG_ARCS:
        return read_arcs(d, c);
    case TAG_THREADS:
        return read_threads(d, c);
    case TAG_STACKS:
        return read_stacks(d, c);
    case TAG_TOTALS:
        d->total_samples = get64(c);
        d->lost_samples = get64(c);
        d->total_calls = get64(c);
        d->lost_calls = get64(c);
        d->unsampled_threads = get64(c);
        return c->bad ? -1 : 0;
    case TAG_KERNEL: {
        d->kernel.flags = get32(c) | CGDATA_KERNEL_ASKED;
        uint32_t n = get32(c);
        const unsigned char *id = get_bytes(c, n);
        if (!id)
            return -1;
        size_t k = n < sizeof d->kernel.boot_id - 1 ? n : sizeof d->kernel.boot_id - 1;
        memcpy(d->kernel.boot_id, id, k);
        d->kernel.boot_id[k] = '\0';
        return c->bad ? -1 : 0;
    }
    case TAG_NOTES: {
        uint64_t n = get64(c);
        if (c->bad || n > (uint64_t)(c->end - c->p))
            return -1;
        const unsigned char *text = get_bytes(c, (size_t)n);
        if (!text || cgdata_add_notes(d, (const char *)text, (size_t)n) != 0)
            return -1;
        return 0;
    }
    case TAG_RUNTIME:
        d->runtime.helper_cpu_ns = get64(c);
        d->runtime.write_cpu_ns = get64(c);
        d->runtime.writes = get64(c);
        d->runtime.samples = get64(c);
        if (c->end - c->p >= 8) /* since the threads open their own events */
            d->runtime.start_cpu_ns = get64(c);
        if (c->end - c->p >= 8)
            d->runtime.before_cpu_ns = get64(c);
        if (c->end - c->p >= 8) /* since the samples' delays are noted */
            d->runtime.late_ns = get64(c);
        d->runtime.present = 1;
        return c->bad ? -1 : 0;
    case TAG_IMAGE: {
        uint32_t id = get32(c);
        get32(c);
        uint64_t n = get64(c);
        const unsigned char *img = get_bytes(c, n);
        if (!img)
            return -1;
        for (size_t i = 0; i < d->nmodules; i++)
            if (d->modules[i].id == id) {
                d->modules[i].image = img;
                d->modules[i].image_len = n;
            }
        return 0;
    }
    default:
        return 0; /* a newer kind of record: skipped */
    }
}

static int parse(struct cgdata *d, const char *path, char *err, size_t errsz);

int cgdata_read(struct cgdata *d, const char *path, char *err, size_t errsz)
{
    memset(d, 0, sizeof *d);
    if (read_file(path, &d->buf, &d->len, err, errsz) != 0)
        return -1;
    return parse(d, path, err, errsz);
}

int cgdata_read_buffer(struct cgdata *d, const char *name, const void *buf, size_t size, char *err,
                       size_t errsz)
{
    memset(d, 0, sizeof *d);
    d->buf = malloc(size ? size : 1);
    if (!d->buf) {
        snprintf(err, errsz, "%s: out of memory", name);
        return -1;
    }
    memcpy(d->buf, buf, size);
    d->len = size;
    return parse(d, name, err, errsz);
}

/* Parses d->buf (d->len bytes), read from PATH. */
static int parse(struct cgdata *d, const char *path, char *err, size_t errsz)
{
    if (!cgdata_is(d->buf, d->len))
        return fail(err, errsz, path, 0, "not a cgprof profile");
    if (d->len < 16)
        return fail(err, errsz, path, d->len, "truncated header");
    uint32_t version, hsize;
    memcpy(&version, d->buf + 8, 4);
    memcpy(&hsize, d->buf + 12, 4);
    if (version != 1)
        return fail(err, errsz, path, 8, "profile format version %u; this cgprof reads version 1",
                    version);
    if (hsize < 16 || hsize > d->len)
        return fail(err, errsz, path, 12, "bad header size %u", hsize);
    size_t pos = hsize;
    int seen_info = 0, seen_end = 0;
    while (pos < d->len && !seen_end) {
        if (d->len - pos < 16)
            return fail(err, errsz, path, pos, "truncated record header");
        uint32_t tag;
        uint64_t size;
        memcpy(&tag, d->buf + pos, 4);
        memcpy(&size, d->buf + pos + 8, 8);
        if (size > d->len - pos - 16)
            return fail(err, errsz, path, pos, "record of %llu bytes runs past the end of the file",
                        (unsigned long long)size);
        struct cur c = {d->buf + pos + 16, d->buf + pos + 16 + size, pos + 16, d->buf + pos + 16,
                        0};
        if (read_record(d, tag, &c, &seen_info) != 0)
            return fail(err, errsz, path, off(&c), "corrupted record (tag %u)", tag);
        pos += 16 + size;
        seen_end = tag == TAG_END;
    }
    if (!seen_end)
        return fail(err, errsz, path, pos,
                    "cut short: no END record (the profile was not completely written)");
    if (!seen_info)
        return fail(err, errsz, path, pos, "no INFO record: truncated or not written by cgprof");
    for (size_t i = 0; i < d->nsamples; i++)
        if (d->samples[i].module != CGDATA_NO_MODULE && !cgdata_module(d, d->samples[i].module))
            return fail(err, errsz, path, 0, "a sample names module %u, which the file lacks",
                        d->samples[i].module);
    for (size_t i = 0; i < d->nstacks; i++) {
        uint32_t m = d->stacks[i].module;
        if (m != CGDATA_NO_MODULE && m != CGDATA_CUT_MODULE && !cgdata_module(d, m))
            return fail(err, errsz, path, 0, "a stack frame names module %u, which the file lacks",
                        m);
    }
    return 0;
}

/* Adds the lines of TEXT (N bytes) not in D's notes yet; a last line
 * without its newline gets one.  A NUL ends the text.  0, or -1. */
int cgdata_add_notes(struct cgdata *d, const char *text, size_t n)
{
    for (size_t at = 0; at < n && text[at];) {
        size_t l = 0;
        while (at + l < n && text[at + l] && text[at + l] != '\n')
            l++;
        size_t have = d->notes ? strlen(d->notes) : 0;
        int dup = 0;
        for (const char *p = d->notes; p && *p && !dup;) {
            const char *nl = strchr(p, '\n');
            size_t pl = nl ? (size_t)(nl - p) : strlen(p);
            dup = pl == l && memcmp(p, text + at, l) == 0;
            p += pl + (nl != NULL);
        }
        if (!dup && l) {
            char *s = realloc(d->notes, have + l + 2);
            if (!s)
                return -1;
            memcpy(s + have, text + at, l);
            s[have + l] = '\n';
            s[have + l + 1] = '\0';
            d->notes = s;
        }
        at += l + (at + l < n && text[at + l] == '\n');
    }
    return 0;
}

void cgdata_free(struct cgdata *d)
{
    for (size_t i = 0; i < d->nmodules; i++) {
        free(d->modules[i].path);
        free(d->modules[i].image_owned);
    }
    free(d->modules);
    free(d->samples);
    free(d->arcs);
    free(d->threads);
    free(d->stacks);
    free(d->notes);
    free(d->buf);
    memset(d, 0, sizeof *d);
}

const struct cgdata_module *cgdata_module(const struct cgdata *d, uint32_t id)
{
    for (size_t i = 0; i < d->nmodules; i++)
        if (d->modules[i].id == id)
            return &d->modules[i];
    return NULL;
}

int cgdata_peek_run(const char *path, unsigned char id[16])
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    unsigned char head[16];
    int rc = -1;
    uint32_t hsize = 0;
    if (fread(head, 1, sizeof head, f) == sizeof head && cgdata_is(head, sizeof head)) {
        memcpy(&hsize, head + 12, 4);
        rc = hsize >= 16 && fseeko(f, hsize, SEEK_SET) == 0 ? 0 : -1;
    }
    if (rc == 0) {
        for (int i = 0; i < 64; i++) { /* RUN comes second; a few records at most */
            uint32_t tag;
            uint64_t size;
            if (fread(head, 1, 16, f) != 16)
                break;
            memcpy(&tag, head, 4);
            memcpy(&size, head + 8, 8);
            if (tag == TAG_RUN && size >= 16) {
                rc = fread(id, 1, 16, f) == 16;
                break;
            }
            if (tag == TAG_END || size > (uint64_t)INT64_MAX - 8 ||
                fseeko(f, (off_t)size, SEEK_CUR) != 0)
                break;
        }
    }
    fclose(f);
    return rc;
}

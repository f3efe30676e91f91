/* gmon_tool: test helper that converts, edits and sums gmon.out files (built by tests/t0230).
 *
 *   gmon_tool bsd44 IN OUT       GNU gmon.out IN (one histogram) -> 4.4BSD OUT
 *   gmon_tool bsdold IN OUT      the same, old BSD header (lpc, hpc, ncnt)
 *   gmon_tool edit IN OUT OP...  rewrites every histogram record of IN:
 *                                rate=N  dimen=NAME  abbrev=C  shift=N
 *                                (N added to both ends of the range)
 *                                nbins=N (range kept, bins cut or zero-padded)
 *                                bb=N    appends a basic-block record of N entries
 *   gmon_tool sum OUT IN...      reads every IN with gmon_read, writes OUT
 *                                with gmon_write_sum
 *
 * The GNU parser here is deliberately separate from analysis/gmon.c and
 * trusts its input: it only ever sees files the tests produced.
 */
#include "gmon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RECS 4096

struct hist {
    uint64_t lo, hi;
    uint32_t nbins, rate;
    char dimen[15];
    char abbrev;
    uint16_t *bins;
};

struct arc {
    uint64_t from, self;
    uint32_t count;
};

/* A GNU file as a list of records; kind[i] is the tag of record i. */
struct file {
    unsigned char header[20];
    int kind[MAX_RECS];
    struct hist hists[MAX_RECS];
    struct arc arcs[MAX_RECS];
    unsigned char *bb[MAX_RECS];
    size_t bb_len[MAX_RECS];
    int n;
};

static void die(const char *msg, const char *arg)
{
    fprintf(stderr, "gmon_tool: %s %s\n", msg, arg ? arg : "");
    exit(2);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open", path);
    size_t cap = 1 << 16, len = 0;
    unsigned char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap)
            b = realloc(b, cap *= 2);
    }
    fclose(f);
    if (!b)
        die("out of memory", NULL);
    *n = len;
    return b;
}

static void parse(struct file *f, const char *path)
{
    size_t n, p = 20;
    unsigned char *b = slurp(path, &n);
    if (n < 20 || memcmp(b, "gmon", 4) != 0)
        die("not a GNU gmon.out:", path);
    memcpy(f->header, b, 20);
    f->n = 0;
    while (p < n) {
        if (f->n == MAX_RECS)
            die("too many records in", path);
        int i = f->n++;
        f->kind[i] = b[p++];
        if (f->kind[i] == 0) {
            struct hist *h = &f->hists[i];
            memcpy(&h->lo, b + p, 8);
            memcpy(&h->hi, b + p + 8, 8);
            memcpy(&h->nbins, b + p + 16, 4);
            memcpy(&h->rate, b + p + 20, 4);
            memcpy(h->dimen, b + p + 24, 15);
            h->abbrev = (char)b[p + 39];
            p += 40;
            h->bins = malloc(h->nbins * 2u + 1);
            memcpy(h->bins, b + p, h->nbins * 2u);
            p += h->nbins * 2u;
        } else if (f->kind[i] == 1) {
            struct arc *a = &f->arcs[i];
            memcpy(&a->from, b + p, 8);
            memcpy(&a->self, b + p + 8, 8);
            memcpy(&a->count, b + p + 16, 4);
            p += 20;
        } else if (f->kind[i] == 2) {
            uint32_t k;
            memcpy(&k, b + p, 4);
            f->bb_len[i] = 4 + (size_t)k * 16;
            f->bb[i] = malloc(f->bb_len[i]);
            memcpy(f->bb[i], b + p, f->bb_len[i]);
            p += f->bb_len[i];
        } else {
            die("unknown tag in", path);
        }
    }
    free(b);
}

static FILE *create(const char *path)
{
    FILE *o = fopen(path, "wb");
    if (!o)
        die("cannot create", path);
    return o;
}

static void finish(FILE *o, const char *path)
{
    if (fclose(o) != 0)
        die("write error on", path);
}

static void write_gnu(const struct file *f, const char *path)
{
    FILE *o = create(path);
    fwrite(f->header, 1, 20, o);
    for (int i = 0; i < f->n; i++) {
        unsigned char tag = (unsigned char)f->kind[i];
        fwrite(&tag, 1, 1, o);
        if (tag == 0) {
            const struct hist *h = &f->hists[i];
            fwrite(&h->lo, 8, 1, o);
            fwrite(&h->hi, 8, 1, o);
            fwrite(&h->nbins, 4, 1, o);
            fwrite(&h->rate, 4, 1, o);
            fwrite(h->dimen, 1, 15, o);
            fwrite(&h->abbrev, 1, 1, o);
            fwrite(h->bins, 2, h->nbins, o);
        } else if (tag == 1) {
            const struct arc *a = &f->arcs[i];
            fwrite(&a->from, 8, 1, o);
            fwrite(&a->self, 8, 1, o);
            fwrite(&a->count, 4, 1, o);
        } else {
            fwrite(f->bb[i], 1, f->bb_len[i], o);
        }
    }
    finish(o, path);
}

/* BSD layout: header, 16-bit bins, then {from, self, long count} arcs. */
static void write_bsd(const struct file *f, const char *path, int bsd44)
{
    const struct hist *h = NULL;
    for (int i = 0; i < f->n; i++) {
        if (f->kind[i] == 0 && h)
            die("BSD holds one histogram only:", path);
        if (f->kind[i] == 0)
            h = &f->hists[i];
    }
    if (!h)
        die("no histogram to convert for", path);
    uint32_t hdr_size = bsd44 ? 40 : 20; /* gprof reads the old one unpadded */
    uint32_t ncnt = hdr_size + h->nbins * 2;
    unsigned char hdr[40] = {0};
    memcpy(hdr, &h->lo, 8);
    memcpy(hdr + 8, &h->hi, 8);
    memcpy(hdr + 16, &ncnt, 4);
    if (bsd44) {
        uint32_t version = 0x00051879;
        memcpy(hdr + 20, &version, 4);
        memcpy(hdr + 24, &h->rate, 4);
    }
    FILE *o = create(path);
    fwrite(hdr, 1, hdr_size, o);
    fwrite(h->bins, 2, h->nbins, o);
    for (int i = 0; i < f->n; i++) {
        if (f->kind[i] != 1)
            continue;
        uint64_t count = f->arcs[i].count;
        fwrite(&f->arcs[i].from, 8, 1, o);
        fwrite(&f->arcs[i].self, 8, 1, o);
        fwrite(&count, 8, 1, o);
    }
    finish(o, path);
}

static void edit(struct file *f, const char *op)
{
    const char *eq = strchr(op, '=');
    if (!eq)
        die("bad edit", op);
    const char *v = eq + 1;
    size_t klen = (size_t)(eq - op);
    if (strncmp(op, "bb", klen) == 0) {
        uint32_t k = (uint32_t)strtoul(v, NULL, 0);
        int i = f->n++;
        f->kind[i] = 2;
        f->bb_len[i] = 4 + (size_t)k * 16;
        f->bb[i] = calloc(1, f->bb_len[i]);
        memcpy(f->bb[i], &k, 4);
        for (uint32_t j = 0; j < k; j++) {
            uint64_t addr = f->hists[0].lo + 16 * j, calls = j + 1;
            memcpy(f->bb[i] + 4 + 16 * j, &addr, 8);
            memcpy(f->bb[i] + 12 + 16 * j, &calls, 8);
        }
        return;
    }
    for (int i = 0; i < f->n; i++) {
        struct hist *h = &f->hists[i];
        if (f->kind[i] != 0)
            continue;
        if (strncmp(op, "rate", klen) == 0) {
            h->rate = (uint32_t)strtoul(v, NULL, 0);
        } else if (strncmp(op, "dimen", klen) == 0) {
            memset(h->dimen, 0, 15);
            strncpy(h->dimen, v, 15);
        } else if (strncmp(op, "abbrev", klen) == 0) {
            h->abbrev = v[0];
        } else if (strncmp(op, "shift", klen) == 0) {
            long long d = strtoll(v, NULL, 0);
            h->lo += (uint64_t)d;
            h->hi += (uint64_t)d;
        } else if (strncmp(op, "nbins", klen) == 0) {
            uint32_t nb = (uint32_t)strtoul(v, NULL, 0);
            uint16_t *b = calloc(nb + 1u, 2);
            memcpy(b, h->bins, 2 * (nb < h->nbins ? nb : h->nbins));
            free(h->bins);
            h->bins = b;
            h->nbins = nb;
        } else {
            die("unknown edit", op);
        }
    }
}

int main(int argc, char **argv)
{
    static struct file f;
    if (argc >= 4 && (strcmp(argv[1], "bsd44") == 0 || strcmp(argv[1], "bsdold") == 0)) {
        parse(&f, argv[2]);
        write_bsd(&f, argv[3], argv[1][3] == '4');
    } else if (argc >= 4 && strcmp(argv[1], "edit") == 0) {
        parse(&f, argv[2]);
        for (int i = 4; i < argc; i++)
            edit(&f, argv[i]);
        write_gnu(&f, argv[3]);
    } else if (argc >= 4 && strcmp(argv[1], "sum") == 0) {
        struct gmon_data d;
        char err[512];
        gmon_init(&d);
        for (int i = 3; i < argc; i++)
            if (gmon_read(&d, argv[i], err, sizeof err) != 0)
                die(err, NULL);
        if (gmon_write_sum(&d, argv[2], err, sizeof err) != 0)
            die(err, NULL);
        gmon_free(&d);
    } else {
        die("usage: gmon_tool bsd44|bsdold|edit|sum ...", NULL);
    }
    return 0;
}

/* gprof's symbol specifications with a file or a line (FILE:FUNC, FILE:LINE, FILE, LINE).
 *
 * A spec is FILE:FUNC or FILE:LINE; without a colon, one with a dot is a
 * FILE, one starting with a digit a LINE, anything else a FUNC.  FILE is
 * a base name and stands for one source file: of those with that base
 * name, the one gprof met last (gprof keeps its files in a list it
 * prepends to, and takes the first match).  A file no symbol is from
 * matches nothing.  Runs of adjacent symbols matching every given part
 * mark address ranges, from the first one's start to the last one's end;
 * a table is the sorted ranges of its specs, and gprof asks of each
 * symbol whether its start lies in the range starting nearest below it.
 */
#include "symspec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int symspec_positional(const char *spec)
{
    return strchr(spec, ':') || strchr(spec, '.') || isdigit((unsigned char)spec[0]);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A parsed spec: any part may be absent (NULL, 0). */
struct pattern {
    const char *file; /* full path of the file meant, or "" for a file that is not there */
    const char *name;
    unsigned line;
};

/* The path of the source file named BASE that gprof met last, or "". */
static const char *find_file(const struct symtab *pos, const char *base)
{
    const char *best = "";
    size_t best_order = 0;
    for (size_t i = 0; i < pos->n; i++) {
        const struct symtab_sym *s = &pos->syms[i];
        if (!s->file || strcmp(base_name(s->file), base) != 0)
            continue;
        /* a file is met when its first symbol is; keep the latest such */
        size_t first = s->order;
        for (size_t j = 0; j < pos->n; j++)
            if (pos->syms[j].file && pos->syms[j].order < first &&
                strcmp(pos->syms[j].file, s->file) == 0)
                first = pos->syms[j].order;
        if (!best[0] || first > best_order) {
            best = s->file;
            best_order = first;
        }
    }
    return best;
}

static void parse(const struct symtab *pos, const char *spec, struct pattern *p, char *buf,
                  size_t bufsz)
{
    memset(p, 0, sizeof *p);
    snprintf(buf, bufsz, "%s", spec);
    char *colon = strrchr(buf, ':');
    char *rest = buf;
    if (colon) {
        *colon = '\0';
        if (colon > buf)
            p->file = find_file(pos, buf);
        rest = colon + 1;
    } else if (strchr(buf, '.')) {
        p->file = find_file(pos, buf);
        return;
    }
    if (isdigit((unsigned char)rest[0]))
        p->line = (unsigned)atoi(rest);
    else if (rest[0])
        p->name = rest;
}

static int matches(const struct pattern *p, const struct symtab_sym *s)
{
    if (p->file && (!s->file || strcmp(p->file, s->file) != 0))
        return 0;
    if (p->line && p->line != s->line)
        return 0;
    return !p->name || strcmp(p->name, s->name) == 0;
}

struct range {
    uint64_t lo, hi;
};

static int range_cmp(const void *pa, const void *pb)
{
    const struct range *a = pa, *b = pb;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Appends the ranges spec P marks: runs of adjacent matching symbols,
 * each from the first one's start to the last one's end. */
static size_t mark(const struct symtab *pos, const struct pattern *p, struct range *r, size_t n)
{
    long prev = -2;
    for (size_t i = 0; i < pos->n; i++) {
        if (!matches(p, &pos->syms[i]))
            continue;
        if (prev != (long)i - 1)
            r[n++] = (struct range){pos->syms[i].addr, pos->syms[i].end_addr};
        else
            r[n - 1].hi = pos->syms[i].end_addr;
        prev = (long)i;
    }
    return n;
}

void symspec_apply(const struct symtab *pos, const struct cg_spec *specs, size_t n, unsigned *bits)
{
    struct range *r = malloc((pos->n ? pos->n : 1) * (n ? n : 1) * sizeof *r);
    if (!r)
        return;
    for (int t = 0; t < CG_NTABLES; t++) {
        size_t nr = 0;
        for (size_t k = 0; k < n; k++) {
            if (specs[k].table != (enum cg_table)t)
                continue;
            struct pattern p;
            char buf[1024];
            parse(pos, specs[k].name, &p, buf, sizeof buf);
            nr = mark(pos, &p, r, nr);
        }
        if (nr == 0)
            continue;
        /* as gprof's table: sorted, one range per start, empty ones out */
        qsort(r, nr, sizeof *r, range_cmp);
        size_t m = 0;
        for (size_t i = 0; i < nr; i++)
            if ((m == 0 || r[i].lo != r[m - 1].lo) && r[i].lo <= r[i].hi)
                r[m++] = r[i];
        /* a symbol is in the table when its start lies in the range that
         * starts nearest below it */
        size_t j = 0;
        for (size_t i = 0; i < pos->n && m > 0; i++) {
            uint64_t a = pos->syms[i].addr;
            while (j + 1 < m && r[j + 1].lo <= a)
                j++;
            if (r[j].lo <= a && a <= r[j].hi)
                bits[i] |= 1u << t;
        }
    }
    free(r);
}

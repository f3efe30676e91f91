/* gprof -l and -A for a cgprof profile (see cglines.h).
 *
 * modmap gives module k the addresses [(k + 1) << 40, (k + 2) << 40), its
 * link-time addresses shifted up; a sample, an arc or a stack frame is
 * found there.  A module's line-level symbols are those lines.c builds
 * for its file at its link-time addresses, shifted the same way, so each
 * pc lands on the line symbol holding it exactly as a gmon.out pc lands
 * in gprof -l's table.  Invariant: OUT is sorted by address and no two
 * symbols' ranges overlap (each ends before the next starts), so
 * symtab_lookup finds one symbol per pc.
 */
#include "cglines.h"
#include "linemap.h"
#include "lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLICE_SHIFT 40 /* modmap.c's */

uint64_t cglines_addr_mask(void)
{
    return ((uint64_t)1 << SLICE_SHIFT) - 1;
}

/* The table being built: names and files are offsets into the arena
 * until the end (the arena moves as it grows). */
struct out {
    struct symtab_sym *v;
    size_t n, cap;
    char *arena;
    size_t alen, acap;
};

static long put_str(struct out *o, const char *s, const char *suffix)
{
    size_t len = strlen(s), slen = suffix ? strlen(suffix) : 0;
    while (o->alen + len + slen + 1 > o->acap) {
        size_t ncap = o->acap ? o->acap * 2 : 65536;
        char *a = realloc(o->arena, ncap);
        if (!a)
            return -1;
        o->arena = a;
        o->acap = ncap;
    }
    long off = (long)o->alen;
    memcpy(o->arena + o->alen, s, len);
    if (slen)
        memcpy(o->arena + o->alen + len, suffix, slen);
    o->arena[o->alen + len + slen] = '\0';
    o->alen += len + slen + 1;
    return off;
}

/* Appends S shifted up by BASE, named NAME + SUFFIX, at FILE (or none). */
static int put_sym(struct out *o, const struct symtab_sym *s, uint64_t base, const char *suffix,
                   const char *file, unsigned line)
{
    if (o->n == o->cap) {
        size_t ncap = o->cap ? o->cap * 2 : 1024;
        struct symtab_sym *v = realloc(o->v, ncap * sizeof *v);
        if (!v)
            return -1;
        o->v = v;
        o->cap = ncap;
    }
    long no = put_str(o, s->name, suffix), fo = file ? put_str(o, file, NULL) : -1;
    if (no < 0 || (file && fo < 0))
        return -1;
    struct symtab_sym *t = &o->v[o->n++];
    *t = *s;
    t->addr = s->addr + base;
    t->end_addr = s->end_addr + base;
    t->name = (const char *)(intptr_t)no;
    t->file = (const char *)(intptr_t)fo;
    t->line = file ? line : 0;
    return 0;
}

static int finish(struct symtab *out, struct out *o)
{
    for (size_t i = 0; i < o->n; i++) {
        o->v[i].name = o->arena + (intptr_t)o->v[i].name;
        intptr_t fo = (intptr_t)o->v[i].file;
        o->v[i].file = fo < 0 ? NULL : o->arena + fo;
        /* a module's catch-all entry "[libfoo.so]" (or any symbol) ends
         * before the next begins: line symbols fill what modmap's
         * sized symbols left to it */
        if (i + 1 < o->n && o->v[i].end_addr >= o->v[i + 1].addr)
            o->v[i].end_addr = o->v[i + 1].addr - 1;
    }
    out->syms = o->v;
    out->n = o->n;
    out->strings = o->arena;
    return 0;
}

/* The file to read module K's lines from, or NULL: the vDSO, an image
 * kept in the profile and libcgprof itself have none to give. */
static const char *module_file(const struct cgdata *d, size_t k)
{
    if (k >= d->nmodules)
        return NULL;
    const struct cgdata_module *m = &d->modules[k];
    const char *base = strrchr(m->path, '/');
    base = base ? base + 1 : m->path;
    if ((m->flags & CGDATA_MOD_VDSO) || m->image || strncmp(base, "libcgprof", 9) == 0)
        return NULL;
    return m->path;
}

/* Module K's line symbols from its function symbols F[0..NF) (modmap's,
 * without the catch-all), appended to O; F's own when it has no lines.
 * 0, 1 when its lines could not be read in whole (said in MSG), -1. */
static int add_module(struct out *o, const struct cgdata *d, size_t k, const struct symtab_sym *f,
                      size_t nf, char *msg, size_t msgsz)
{
    uint64_t base = (uint64_t)(k + 1) << SLICE_SHIFT;
    const char *path = module_file(d, k);
    int main_mod = (d->modules[k].flags & CGDATA_MOD_MAIN) != 0;
    struct symtab funcs, lst;
    memset(&funcs, 0, sizeof funcs);
    memset(&lst, 0, sizeof lst);
    int lrc = 1;
    char err[512];
    if (path && nf > 0) {
        funcs.syms = malloc(nf * sizeof *funcs.syms);
        if (!funcs.syms)
            return -1;
        for (size_t i = 0; i < nf; i++) {
            funcs.syms[i] = f[i];
            funcs.syms[i].addr -= base;
            funcs.syms[i].end_addr -= base;
        }
        funcs.n = nf;
        lrc = lines_symtab(&lst, &funcs, path, err, sizeof err);
        free(funcs.syms);
    }
    int rc = 0;
    if (lrc == 0 || lrc == 2) {
        /* line symbols of a library are named as its functions are */
        char suffix[512];
        const char *b = strrchr(path, '/');
        snprintf(suffix, sizeof suffix, " [%s]", b ? b + 1 : path);
        for (size_t i = 0; rc == 0 && i < lst.n; i++) {
            const struct symtab_sym *s = &lst.syms[i];
            rc = put_sym(o, s, base, s->is_func || main_mod ? NULL : suffix, s->file, s->line);
        }
        if (lrc == 2 && msg[0] == '\0')
            snprintf(msg, msgsz, "%s", err);
    } else {
        for (size_t i = 0; rc == 0 && i < nf; i++)
            rc = put_sym(o, &f[i], 0, NULL, NULL, 0);
        if (lrc < 0 && msg[0] == '\0')
            snprintf(msg, msgsz, "%s", err);
    }
    symtab_free(&lst);
    return rc < 0 ? -1 : lrc == 0 || lrc == 1 ? 0 : 1;
}

int cglines_symtab(struct symtab *out, const struct symtab *mst, const struct cgdata *d, char *msg,
                   size_t msgsz)
{
    memset(out, 0, sizeof *out);
    msg[0] = '\0';
    struct out o = {0};
    int rc = 0, partial = 0;
    for (size_t i = 0; rc >= 0 && i < mst->n;) {
        uint64_t s = mst->syms[i].addr >> SLICE_SHIFT;
        size_t j = i;
        while (j < mst->n && mst->syms[j].addr >> SLICE_SHIFT == s)
            j++;
        /* the slice's catch-all "[libfoo.so]" (slice 0: "[unknown]") first */
        for (; rc >= 0 && i < j && mst->syms[i].name[0] == '['; i++)
            rc = put_sym(&o, &mst->syms[i], 0, NULL, NULL, 0);
        if (s == 0 || i == j) {
            for (; rc >= 0 && i < j; i++)
                rc = put_sym(&o, &mst->syms[i], 0, NULL, NULL, 0);
        } else if (rc >= 0) {
            rc = add_module(&o, d, (size_t)s - 1, &mst->syms[i], j - i, msg, msgsz);
            partial |= rc == 1;
        }
        i = j;
    }
    if (rc < 0 || finish(out, &o) != 0) {
        free(o.v);
        free(o.arena);
        memset(out, 0, sizeof *out);
        return -1;
    }
    return partial ? 2 : 0;
}

int cglines_positions(struct symtab *out, const struct symtab *mst, const struct cgdata *d)
{
    memset(out, 0, sizeof *out);
    struct linemap lm;
    if (linemap_init(&lm, d, NULL) != 0)
        return -1;
    struct out o = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < mst->n; i++) {
        const struct symtab_sym *s = &mst->syms[i];
        const char *file = NULL;
        unsigned line = 0;
        if (s->name[0] == '[' || !module_file(d, (size_t)(s->addr >> SLICE_SHIFT) - 1) ||
            !linemap_find(&lm, s->addr, &file, &line))
            file = NULL;
        rc = put_sym(&o, s, 0, NULL, file, line);
    }
    linemap_free(&lm);
    if (rc != 0 || finish(out, &o) != 0) {
        free(o.v);
        free(o.arena);
        memset(out, 0, sizeof *out);
        return -1;
    }
    return 0;
}

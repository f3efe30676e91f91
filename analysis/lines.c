/* The line-level symbol table of gprof -l: one symbol per run of code from one source line.
 *
 * GNU gprof builds it by asking for the source position of every byte of
 * .text, one at a time, and starting a new symbol wherever the (line,
 * function, file) triple changes; a byte without a position is skipped
 * without ending the current run.  The answer can only change where a
 * line row, a function range or a symbol starts or ends, so here the
 * same symbols come from one sweep over those boundaries, each looked up
 * once against arrays sorted in advance (dwinfo.c).
 *
 * The function of an address is the one entry (function or inlined copy)
 * with the smallest range holding it, the later entry on a tie.  When its
 * name is not a linkage name (C++'s main, extern "C" functions) the
 * symbol table names it instead, and the entry takes that name for good
 * if the symbol starts where the entry does -- binutils' rules.
 *
 * A line symbol is static when the function symbol holding it is; the
 * function symbols are then added, sorted with the line symbols (at one
 * address a function symbol wins) and collapsed as gprof collapses them.
 */
#include "lines.h"
#include "dwinfo.h"
#include "elffile.h"

#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct builder;
static long intern(struct builder *b, const char *s);

/* A code symbol as binutils' fallback search for a function name sees
 * it: any function or untyped symbol in .text, its size at least 1. */
struct esym {
    uint64_t addr, size;
    size_t order;
    long name; /* offset in the arena */
};

struct text_ctx {
    uint64_t lo, hi;
    struct esym *esyms;
    size_t nesyms;
    struct builder *b;
    struct dwi *dw;
    const char *path;
    char *msg;
    size_t msgsz;
    int rc;
};

static int esym_cmp(const void *pa, const void *pb)
{
    const struct esym *a = pa, *b = pb;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1; /* at one address the larger */
    return a->order < b->order ? -1 : a->order > b->order;
}

/* The code symbols of .text (section TEXT) from SCN, sorted. */
static int read_esyms(struct text_ctx *t, Elf *elf, Elf_Scn *scn, size_t text)
{
    GElf_Shdr sh;
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!gelf_getshdr(scn, &sh) || !data || sh.sh_entsize == 0)
        return 0;
    size_t count = sh.sh_size / sh.sh_entsize;
    t->esyms = malloc((count ? count : 1) * sizeof *t->esyms);
    if (!t->esyms)
        return -1;
    for (size_t i = 1; i < count; i++) {
        GElf_Sym sym;
        const char *name;
        if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx != text ||
            !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
            continue;
        int type = GELF_ST_TYPE(sym.st_info);
        if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
            continue;
        if (sym.st_size == 0 && type == STT_NOTYPE && GELF_ST_BIND(sym.st_info) == STB_LOCAL &&
            GELF_ST_VISIBILITY(sym.st_other) == STV_HIDDEN)
            continue;
        long off = intern(t->b, name);
        if (off < 0)
            return -1;
        t->esyms[t->nesyms++] = (struct esym){sym.st_value, sym.st_size ? sym.st_size : 1, i, off};
    }
    if (t->nesyms > 1)
        qsort(t->esyms, t->nesyms, sizeof *t->esyms, esym_cmp);
    return 0;
}

static int read_text(Elf *elf, void *ctx)
{
    struct text_ctx *t = ctx;
    size_t shstrndx, text = 0;
    Elf_Scn *symtab = NULL;
    if (elf_getshdrstrndx(elf, &shstrndx) == 0)
        for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
            GElf_Shdr sh;
            const char *n;
            if (!gelf_getshdr(scn, &sh))
                continue;
            if (sh.sh_type == SHT_SYMTAB)
                symtab = scn;
            if ((n = elf_strptr(elf, shstrndx, sh.sh_name)) && strcmp(n, ".text") == 0) {
                t->lo = sh.sh_addr;
                t->hi = sh.sh_addr + sh.sh_size;
                text = elf_ndxscn(scn);
            }
        }
    if (symtab && text && read_esyms(t, elf, symtab, text) != 0) {
        t->rc = -1;
        return 0;
    }
    t->rc = dwi_load(t->dw, elf, t->path, DWI_FUNCS, t->msg, t->msgsz);
    return 0;
}

/* A symbol being built; names and files are offsets into the arena until the end. */
struct lsym {
    struct symtab_sym s;
    size_t order;
};

struct builder {
    struct lsym *v;
    size_t n, cap;
    char *arena;
    size_t alen, acap;
};

static long intern(struct builder *b, const char *s)
{
    size_t len = strlen(s) + 1;
    while (b->alen + len > b->acap) {
        size_t ncap = b->acap ? b->acap * 2 : 65536;
        char *a = realloc(b->arena, ncap);
        if (!a)
            return -1;
        b->arena = a;
        b->acap = ncap;
    }
    memcpy(b->arena + b->alen, s, len);
    b->alen += len;
    return (long)(b->alen - len);
}

static struct lsym *push(struct builder *b)
{
    if (b->n == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 1024;
        struct lsym *v = realloc(b->v, ncap * sizeof *v);
        if (!v)
            return NULL;
        b->v = v;
        b->cap = ncap;
    }
    memset(&b->v[b->n], 0, sizeof b->v[b->n]);
    b->v[b->n].order = b->n;
    return &b->v[b->n++];
}

/* The sweep's state: the function entries holding the current address. */
struct sweep {
    struct dwi *dw;
    const struct text_ctx *t;
    const char *arena;
    size_t next; /* next entry (by lo) not yet active */
    size_t *active;
    size_t nactive;
    long cached; /* binutils' cache of the last symbol found, or -1 */
};

/* binutils' search of the symbol table for the function at ADDR: the
 * last code symbol at or below it, unless ADDR is still within the size
 * of the symbol found last time.  NULL when there is none. */
static const char *elf_func(struct sweep *w, uint64_t addr, uint64_t *at)
{
    const struct esym *e = w->t->esyms;
    long c = w->cached;
    if (c < 0 || addr < e[c].addr || addr >= e[c].addr + e[c].size) {
        size_t lo = 0, hi = w->t->nesyms;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (e[mid].addr <= addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == 0)
            return NULL;
        c = (long)lo - 1;
        while (c > 0 &&
               e[c - 1].addr == e[c].addr) /* the first: largest, then first in the table */
            c--;
        w->cached = c;
    }
    *at = e[c].addr;
    return w->arena + e[c].name;
}

/* The function name gprof gets for ADDR, or NULL. */
static const char *func_name(struct sweep *w, uint64_t addr)
{
    struct dwi_func *f = w->dw->funcs;
    while (w->next < w->dw->nfuncs && f[w->next].lo <= addr)
        w->active[w->nactive++] = w->next++;
    struct dwi_func *best = NULL;
    for (size_t i = 0; i < w->nactive;) {
        struct dwi_func *c = &f[w->active[i]];
        if (c->hi <= addr) {
            w->active[i] = w->active[--w->nactive];
            continue;
        }
        i++;
        if (!best || c->hi - c->lo < best->hi - best->lo ||
            (c->hi - c->lo == best->hi - best->lo && c->order > best->order))
            best = c;
    }
    if (best && best->is_linkage)
        return best->name;
    uint64_t at = 0;
    const char *name = elf_func(w, addr, &at);
    if (best) {
        if (!name)
            name = best->name;
        else if (at == best->lo)
            best->name = name;
        best->is_linkage = 1;
    }
    return name;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every address in [LO, HI) where the answer may change, sorted. */
static uint64_t *boundaries(const struct dwi *dw, const struct text_ctx *t, uint64_t lo,
                            uint64_t hi, size_t *n)
{
    size_t cap = 1 + dw->nrows + 2 * dw->nfuncs + 2 * t->nesyms, k = 0;
    uint64_t *b = malloc(cap * sizeof *b);
    if (!b)
        return NULL;
    b[k++] = lo;
#define ADD(x)                                                                                     \
    do {                                                                                           \
        if ((x) > lo && (x) < hi)                                                                  \
            b[k++] = (x);                                                                          \
    } while (0)
    for (size_t i = 0; i < dw->nrows; i++)
        ADD(dw->rows[i].addr);
    for (size_t i = 0; i < dw->nfuncs; i++) {
        ADD(dw->funcs[i].lo);
        ADD(dw->funcs[i].hi);
    }
    for (size_t i = 0; i < t->nesyms; i++) {
        ADD(t->esyms[i].addr);
        ADD(t->esyms[i].addr + t->esyms[i].size);
    }
#undef ADD
    if (k > 1)
        qsort(b, k, sizeof *b, cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (m == 0 || b[i] != b[m - 1])
            b[m++] = b[i];
    *n = m;
    return b;
}

/* The line symbols of [LO, HI), appended to B. */
static int line_syms(struct builder *b, struct dwi *dw, const struct symtab *funcs,
                     const struct text_ctx *t)
{
    size_t nb;
    uint64_t lo = t->lo, hi = t->hi;
    uint64_t *bounds = boundaries(dw, t, lo, hi, &nb);
    struct sweep w = {dw, t, NULL, 0, malloc((dw->nfuncs + 1) * sizeof(size_t)), 0, -1};
    int rc = bounds && w.active ? 0 : -1;
    long prev = -1; /* index of the last line symbol */
    const char *prev_name = NULL;
    uint32_t prev_file = 0;
    for (size_t i = 0; rc == 0 && i < nb && lo < hi; i++) {
        uint64_t a = bounds[i];
        const struct dwi_row *row = dwi_line(dw, a);
        w.arena = b->arena;
        const char *name = func_name(&w, a);
        if (!row || row->line == 0 || !name)
            continue;
        if (prev >= 0 && b->v[prev].s.line == row->line && strcmp(prev_name, name) == 0 &&
            strcmp(dw->files[prev_file], dw->files[row->file]) == 0)
            continue;
        int is_static = 0;
        if (prev >= 0 && strcmp(dw->files[prev_file], dw->files[row->file]) == 0 &&
            strcmp(prev_name, name) == 0) {
            is_static = b->v[prev].s.is_static;
        } else {
            long f = symtab_lookup(funcs, a);
            is_static = f >= 0 && funcs->syms[f].is_static;
        }
        struct lsym *l = push(b);
        long no = intern(b, name), fo = intern(b, dw->files[row->file]);
        if (!l || no < 0 || fo < 0) {
            rc = -1;
            break;
        }
        l->s.addr = a;
        l->s.name = (const char *)(intptr_t)no;
        l->s.file = (const char *)(intptr_t)fo;
        l->s.line = row->line;
        l->s.is_static = is_static;
        l->s.order = (SIZE_MAX >> 1) + b->n; /* after every ELF symbol, in address order */
        prev = (long)(b->n - 1);
        prev_name = name;
        prev_file = row->file;
    }
    free(bounds);
    free(w.active);
    return rc;
}

/* The function symbols, with the position of their first address. */
static int func_syms(struct builder *b, const struct dwi *dw, const struct symtab *funcs)
{
    for (size_t i = 0; i < funcs->n; i++) {
        const struct symtab_sym *f = &funcs->syms[i];
        struct lsym *l = push(b);
        long no = intern(b, f->name);
        if (!l || no < 0)
            return -1;
        l->s = *f;
        l->s.name = (const char *)(intptr_t)no;
        l->s.file = NULL;
        l->s.line = 0;
        const struct dwi_row *row = dwi_line(dw, f->addr);
        if (row && row->line != 0) {
            long fo = intern(b, dw->files[row->file]);
            if (fo < 0)
                return -1;
            l->s.file = (const char *)(intptr_t)fo;
            l->s.line = row->line;
        }
        l->s.file = l->s.file ? l->s.file : (const char *)(intptr_t)-1;
    }
    return 0;
}

/* gprof's symbol order: address, then function symbols first, then
 * globals first, then as added. */
static int lsym_cmp(const void *pa, const void *pb)
{
    const struct lsym *a = pa, *b = pb;
    if (a->s.addr != b->s.addr)
        return a->s.addr < b->s.addr ? -1 : 1;
    if (a->s.is_func != b->s.is_func)
        return b->s.is_func - a->s.is_func;
    if (a->s.is_static != b->s.is_static)
        return a->s.is_static - b->s.is_static;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Should SRC replace KEPT at the same address (gprof's rule)? */
static int prefer(const struct symtab_sym *src, const struct symtab_sym *kept)
{
    if (src->is_static != kept->is_static)
        return !src->is_static;
    if (src->is_func != kept->is_func)
        return src->is_func;
    if (src->name[0] != '_' && kept->name[0] == '_')
        return 1;
    return src->name[0] == '_' && kept->name[0] == '_' && src->name[1] != '_' &&
           kept->name[1] == '_';
}

static int finish(struct symtab *out, struct builder *b, uint64_t text_end)
{
    for (size_t i = 0; i < b->n; i++) {
        b->v[i].s.name = b->arena + (intptr_t)b->v[i].s.name;
        intptr_t fo = (intptr_t)b->v[i].s.file;
        b->v[i].s.file = fo < 0 ? NULL : b->arena + fo;
    }
    if (b->n > 1)
        qsort(b->v, b->n, sizeof *b->v, lsym_cmp);
    out->syms = malloc((b->n ? b->n : 1) * sizeof *out->syms);
    if (!out->syms)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < b->n; i++) {
        const struct symtab_sym *s = &b->v[i].s;
        if (n > 0 && s->addr == out->syms[n - 1].addr) {
            if (prefer(s, &out->syms[n - 1]))
                out->syms[n - 1] = *s;
            continue;
        }
        /* a line symbol ends where the next symbol starts; a function
         * symbol keeps the end it has, and is dropped (as gprof drops it)
         * when that lies before its start: the last one, past .text */
        if (n > 0 && out->syms[n - 1].end_addr == 0)
            out->syms[n - 1].end_addr = s->addr - 1;
        if (s->end_addr == 0 || s->addr <= s->end_addr)
            out->syms[n++] = *s;
    }
    if (n > 0 && out->syms[n - 1].end_addr == 0)
        out->syms[n - 1].end_addr = text_end - 1;
    out->n = n;
    out->strings = b->arena;
    b->arena = NULL;
    return 0;
}

int lines_symtab(struct symtab *out, const struct symtab *funcs, const char *path, char *msg,
                 size_t msgsz)
{
    memset(out, 0, sizeof *out);
    struct dwi dw;
    memset(&dw, 0, sizeof dw);
    struct builder b = {0};
    struct text_ctx t = {0, 0, NULL, 0, &b, &dw, path, msg, msgsz, 0};
    if (elffile_with(path, read_text, &t, msg, msgsz) != 0 || t.rc < 0) {
        free(t.esyms);
        free(b.arena);
        dwi_free(&dw);
        return -1;
    }
    uint64_t text_end = funcs->n ? funcs->syms[funcs->n - 1].end_addr + 1 : t.hi;
    int rc = line_syms(&b, &dw, funcs, &t);
    if (rc == 0)
        rc = func_syms(&b, &dw, funcs);
    if (rc == 0)
        rc = finish(out, &b, text_end);
    size_t nrows = dw.nrows;
    free(t.esyms);
    free(b.v);
    free(b.arena);
    dwi_free(&dw);
    if (rc != 0) {
        symtab_free(out);
        snprintf(msg, msgsz, "%s: out of memory for line symbols", path);
        return -1;
    }
    if (t.rc > 0)
        return t.rc;
    if (nrows == 0) {
        snprintf(msg, msgsz, "%s: no line information", path);
        return 1;
    }
    return 0;
}

int lines_positions(struct symtab *out, const struct symtab *funcs, const char *path, char *msg,
                    size_t msgsz)
{
    memset(out, 0, sizeof *out);
    struct dwi dw;
    struct builder b = {0};
    struct text_ctx t = {0, 0, NULL, 0, &b, &dw, path, msg, msgsz, 0};
    memset(&dw, 0, sizeof dw);
    if (elffile_with(path, read_text, &t, msg, msgsz) != 0 || t.rc < 0) {
        free(t.esyms);
        free(b.arena);
        dwi_free(&dw);
        return -1;
    }
    free(t.esyms);
    int rc = func_syms(&b, &dw, funcs);
    out->syms = malloc((b.n ? b.n : 1) * sizeof *out->syms);
    if (rc == 0 && out->syms) {
        for (size_t i = 0; i < b.n; i++) {
            out->syms[i] = b.v[i].s;
            out->syms[i].name = b.arena + (intptr_t)b.v[i].s.name;
            intptr_t fo = (intptr_t)b.v[i].s.file;
            out->syms[i].file = fo < 0 ? NULL : b.arena + fo;
        }
        out->n = b.n;
        out->strings = b.arena;
        b.arena = NULL;
    } else {
        rc = -1;
        snprintf(msg, msgsz, "%s: out of memory for source positions", path);
    }
    free(b.v);
    free(b.arena);
    dwi_free(&dw);
    if (rc != 0)
        symtab_free(out);
    return rc;
}

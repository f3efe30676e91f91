/* Function symbols of an executable, chosen and collapsed the way GNU gprof does.
 *
 * gprof takes every symbol that nm would class 'T', 't' or 'W': defined
 * symbols in code sections, plus weak non-object symbols wherever they
 * are.  Local ones must look like C function names (no '$', and a '.'
 * only in GCC's ".constprop.N"/".clone.N"/".N" suffixes).  After sorting
 * by address, symbols at one address collapse to one: a global beats a
 * local, a function beats a non-function, a name without a leading '_'
 * beats one with it; otherwise the first in symbol-table order stays.
 * SYMTAB_NO_STATIC drops local symbols before that collapse, as gprof's
 * -a does, so their addresses fall to the symbol before them.
 */
#include "symtab.h"
#include "elffile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A symbol while loading: names still point into libelf's buffers. */
struct cand {
    struct symtab_sym s;
    size_t order; /* position in the ELF symbol table, for stable sorting */
    uint64_t size; /* st_size, 0 if unknown */
};

/* gprof's test of a local name, reproduced with its quirk: the name may
 * hold '.' only before GCC suffixes of digits (".constprop.N", ".clone.N",
 * ".N"), and when the name ends in such a suffix the scan runs on into the
 * next string of the string table, which must then pass the same test.
 * LIMIT is the end of the string table. */
static int local_name_ok(const char *name, const char *limit)
{
    if (!name[0] || strncmp(name, "__gnu_compiled", 14) == 0)
        return 0;
    for (const char *p = name; p < limit && *p; ++p) {
        if (*p == '$')
            return 0;
        while (p < limit && *p == '.') {
            int digit_seen = 0;
            size_t left = strnlen(p, (size_t)(limit - p));
            if (left > 7 && strncmp(p, ".clone.", 7) == 0)
                p += 6;
            else if (left > 11 && strncmp(p, ".constprop.", 11) == 0)
                p += 10;
            for (p++; p < limit && *p; p++) {
                if (digit_seen && *p == '.')
                    break;
                if (!isdigit((unsigned char)*p))
                    return 0;
                digit_seen = 1;
            }
        }
        if (p >= limit)
            break;
    }
    return 1;
}

/* nm's class of SYM reduced to what gprof keeps: 'T' (global or weak),
 * 't' (local) or 0 (not a function symbol). */
static int sym_class(Elf *elf, const GElf_Sym *sym, const char *name, const char *limit,
                     unsigned flags)
{
    int type = GELF_ST_TYPE(sym->st_info);
    int bind = GELF_ST_BIND(sym->st_info);
    if (type == STT_FILE || type == STT_SECTION || sym->st_shndx == SHN_UNDEF ||
        sym->st_shndx == SHN_COMMON || type == STT_GNU_IFUNC)
        return 0;
    if (bind == STB_WEAK)
        return type == STT_OBJECT ? 0 : 'T';
    if (bind == STB_GNU_UNIQUE || sym->st_shndx == SHN_ABS || sym->st_shndx >= SHN_LORESERVE)
        return 0;
    GElf_Shdr sh;
    Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
    if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
        return 0;
    if (bind == STB_GLOBAL)
        return 'T';
    return (flags & SYMTAB_ANY_NAME) || local_name_ok(name, limit) ? 't' : 0;
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, const char *name)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *n = elf_strptr(elf, shstrndx, sh.sh_name);
        if (name ? (n && strcmp(n, name) == 0) : sh.sh_type == type)
            return scn;
    }
    return NULL;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Address ranges with debugging information, from .debug_aranges. */
struct ranges {
    uint64_t (*r)[2];
    size_t n;
};

static uint64_t get_uint(const unsigned char *p, int size)
{
    uint64_t v = 0;
    if (size == 8) {
        memcpy(&v, p, 8);
    } else if (size == 4) {
        uint32_t w;
        memcpy(&w, p, 4);
        v = w;
    }
    return v;
}

/* Reads one address-range set at P (END bounds the section) into R;
 * returns the start of the next set, or NULL when malformed. */
static const unsigned char *aranges_set(const unsigned char *p, const unsigned char *end,
                                        struct ranges *r, size_t cap)
{
    const unsigned char *set = p;
    if (end - p < 4)
        return NULL;
    uint64_t len = get_uint(p, 4);
    int off = 4;
    if (len == 0xffffffffu) {
        if (end - p < 12)
            return NULL;
        len = get_uint(p + 4, 8);
        off = 12;
    }
    if (len > (uint64_t)(end - p - off))
        return NULL;
    const unsigned char *next = p + off + len;
    p += off + 2 + (off == 12 ? 8 : 4);
    if (p + 2 > next || (p[0] != 4 && p[0] != 8))
        return NULL;
    int asz = p[0];
    p += 2;
    p = set + ((size_t)(p - set) + 2 * asz - 1) / (2 * asz) * (2 * asz);
    for (; p + 2 * asz <= next && r->n < cap; p += 2 * asz) {
        uint64_t a = get_uint(p, asz), l = get_uint(p + asz, asz);
        if (a == 0 && l == 0)
            break;
        r->r[r->n][0] = a;
        r->r[r->n++][1] = a + l;
    }
    return next;
}

static void read_aranges(Elf *elf, struct ranges *r)
{
    memset(r, 0, sizeof *r);
    Elf_Scn *scn = find_section(elf, 0, ".debug_aranges");
    Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
    if (!d || !d->d_buf || d->d_size < 16)
        return;
    size_t cap = d->d_size / 16;
    r->r = malloc(cap * sizeof *r->r);
    const unsigned char *p = d->d_buf, *end = p + d->d_size;
    while (r->r && p && p < end)
        p = aranges_set(p, end, r, cap);
}

/* Whether ADDR has debugging information, as far as .debug_aranges says. */
static int has_debug_info(const struct ranges *r, uint64_t addr)
{
    for (size_t i = 0; i < r->n; i++)
        if (addr >= r->r[i][0] && addr < r->r[i][1])
            return 1;
    return 0;
}

/* Without .debug_aranges (clang does not emit it): whether FILE is named
 * in the line-table strings, i.e. whether some unit with debugging
 * information was compiled from it. */
static int file_in_debug_strings(Elf *elf, const char *file)
{
    static const char *const secs[] = {".debug_line_str", ".debug_line", ".debug_str"};
    size_t len = strlen(file);
    for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
        Elf_Scn *scn = find_section(elf, 0, secs[i]);
        Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
        if (!d || !d->d_buf)
            continue;
        const char *p = d->d_buf, *end = p + d->d_size;
        while ((p = memmem(p, (size_t)(end - p), file, len + 1)) != NULL) {
            if (p == (const char *)d->d_buf || p[-1] == '\0' || p[-1] == '/')
                return 1;
            p++;
        }
    }
    return 0;
}

/* Collects the candidate symbols of SCN into *OUT.  Static functions are
 * tagged with the preceding STT_FILE name when WITH_FILES (the binary has
 * debugging information, from which gprof would name their files). */
static size_t collect(Elf *elf, Elf_Scn *scn, int with_files, unsigned flags, struct cand **out)
{
    GElf_Shdr sh;
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!gelf_getshdr(scn, &sh) || !data || sh.sh_entsize == 0)
        return 0;
    size_t count = sh.sh_size / sh.sh_entsize, n = 0;
    struct cand *c = calloc(count ? count : 1, sizeof *c);
    const char *file = NULL;
    struct ranges ar;
    read_aranges(elf, &ar);
    Elf_Data *str = elf_getdata(elf_getscn(elf, sh.sh_link), NULL);
    const char *limit = str && str->d_buf ? (const char *)str->d_buf + str->d_size : NULL;
    for (size_t i = 0; c && i < count; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym))
            continue;
        const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
        if (!name)
            continue;
        if (GELF_ST_TYPE(sym.st_info) == STT_FILE)
            file = name;
        int inside = limit && name >= (const char *)str->d_buf && name < limit;
        int cls = sym_class(elf, &sym, name, inside ? limit : name + strlen(name) + 1, flags);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!cls || (cls == 't' && (flags & SYMTAB_NO_STATIC)))
            continue;
        c[n].s = (struct symtab_sym){
            sym.st_value, 0, name, NULL, cls == 't', type == STT_FUNC || type == STT_GNU_IFUNC, 0};
        if (cls == 't' && with_files && file && file[0] &&
            (ar.r ? has_debug_info(&ar, sym.st_value) : file_in_debug_strings(elf, file)))
            c[n].s.file = base_name(file);
        c[n].order = i;
        c[n].size = sym.st_size;
        n++;
    }
    free(ar.r);
    *out = c;
    return c ? n : 0;
}

/* Address order; at one address functions first, then globals, then
 * symbol-table order. */
static int cand_cmp(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;
    if (a->s.addr != b->s.addr)
        return a->s.addr < b->s.addr ? -1 : 1;
    if (a->s.is_func != b->s.is_func)
        return b->s.is_func - a->s.is_func;
    if (a->s.is_static != b->s.is_static)
        return a->s.is_static - b->s.is_static;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Should SRC replace KEPT, an earlier symbol at the same address? */
static int prefer(const struct symtab_sym *src, const struct symtab_sym *kept)
{
    if (!src->is_static && kept->is_static)
        return 1;
    if (src->is_static != kept->is_static)
        return 0;
    if (src->is_func && !kept->is_func)
        return 1;
    if (src->is_func != kept->is_func)
        return 0;
    if (src->name[0] != '_' && kept->name[0] == '_')
        return 1;
    return src->name[0] == '_' && kept->name[0] == '_' && src->name[1] != '_' &&
           kept->name[1] == '_';
}

/* The end of C's range: LIMIT (the next symbol's address minus one), or
 * with SYMTAB_SIZES its own last byte when that comes first. */
static uint64_t range_end(const struct cand *c, uint64_t limit, unsigned flags)
{
    if ((flags & SYMTAB_SIZES) && c->size > 0 && c->size - 1 < limit - c->s.addr)
        return c->s.addr + c->size - 1;
    return limit;
}

/* Sorts, collapses aliases and sets end addresses; returns the new count. */
static size_t finalize(struct cand *c, size_t n, uint64_t text_end, unsigned flags)
{
    qsort(c, n, sizeof *c, cand_cmp);
    size_t dst = 0;
    for (size_t i = 0; i < n; i++) {
        if (dst > 0 && c[i].s.addr == c[dst - 1].s.addr) {
            uint64_t size = c[i].size > c[dst - 1].size ? c[i].size : c[dst - 1].size;
            if (prefer(&c[i].s, &c[dst - 1].s))
                c[dst - 1] = c[i];
            c[dst - 1].size = size;
            continue;
        }
        if (dst > 0)
            c[dst - 1].s.end_addr = range_end(&c[dst - 1], c[i].s.addr - 1, flags);
        c[dst++] = c[i];
    }
    if (dst > 0)
        c[dst - 1].s.end_addr = range_end(&c[dst - 1], text_end - 1, flags);
    return dst;
}

/* Copies the chosen symbols, with their names, out of libelf's buffers. */
static int keep(struct symtab *t, const struct cand *c, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += strlen(c[i].s.name) + 1 + (c[i].s.file ? strlen(c[i].s.file) + 1 : 0);
    t->syms = malloc((n ? n : 1) * sizeof *t->syms);
    t->strings = malloc(len ? len : 1);
    if (!t->syms || !t->strings)
        return -1;
    char *p = t->strings;
    for (size_t i = 0; i < n; i++) {
        t->syms[i] = c[i].s;
        t->syms[i].name = strcpy(p, c[i].s.name);
        p += strlen(p) + 1;
        if (c[i].s.file) {
            t->syms[i].file = strcpy(p, c[i].s.file);
            p += strlen(p) + 1;
        }
    }
    t->n = n;
    return 0;
}

static int load_elf(struct symtab *t, Elf *elf, const char *path, unsigned flags, char *err,
                    size_t errsz)
{
    GElf_Shdr text;
    Elf_Scn *text_scn = find_section(elf, 0, ".text");
    if (!text_scn || !gelf_getshdr(text_scn, &text)) {
        snprintf(err, errsz, "%s: no .text section", path);
        return -1;
    }
    Elf_Scn *scn = find_section(elf, SHT_SYMTAB, NULL);
    if (!scn)
        scn = find_section(elf, SHT_DYNSYM, NULL);
    int with_files = find_section(elf, 0, ".debug_line") != NULL;
    struct cand *c = NULL;
    size_t n = scn ? collect(elf, scn, with_files, flags, &c) : 0;
    n = finalize(c, n, text.sh_addr + text.sh_size, flags);
    int rc = 0;
    if (n == 0) {
        snprintf(err, errsz, "%s: no function symbols", path);
        rc = -1;
    } else if (keep(t, c, n) != 0) {
        snprintf(err, errsz, "%s: out of memory for symbols", path);
        rc = -1;
    }
    free(c);
    return rc;
}

int symtab_load(struct symtab *t, const char *path, char *err, size_t errsz)
{
    return symtab_load_flags(t, path, 0, err, errsz);
}

struct load_ctx {
    struct symtab *t;
    const char *path;
    unsigned flags;
    char *err;
    size_t errsz;
};

static int load_cb(Elf *elf, void *ctx)
{
    struct load_ctx *c = ctx;
    return load_elf(c->t, elf, c->path, c->flags, c->err, c->errsz);
}

int symtab_load_flags(struct symtab *t, const char *path, unsigned flags, char *err, size_t errsz)
{
    memset(t, 0, sizeof *t);
    struct load_ctx c = {t, path, flags, err, errsz};
    int rc = elffile_with(path, load_cb, &c, err, errsz);
    if (rc != 0)
        symtab_free(t);
    return rc;
}

void symtab_free(struct symtab *t)
{
    free(t->syms);
    free(t->strings);
    memset(t, 0, sizeof *t);
}

long symtab_lookup(const struct symtab *t, uint64_t pc)
{
    size_t lo = 0, hi = t->n; /* answer is the last symbol with addr <= pc */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->syms[mid].addr <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || pc > t->syms[lo - 1].end_addr)
        return -1;
    return (long)(lo - 1);
}

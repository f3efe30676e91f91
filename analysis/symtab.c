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
#include "dwinfo.h"
#include "elffile.h"
#include "plt.h"

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
    size_t order;  /* position in the ELF symbol table, for stable sorting */
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

/* Collects the candidate symbols of SCN into *OUT.  Static functions are
 * tagged with the source file that DW names for their first address, as
 * gprof names them (it asks for the file, function and a line, non-zero). */
static size_t collect(Elf *elf, Elf_Scn *scn, const struct dwi *dw, unsigned flags,
                      struct cand **out)
{
    GElf_Shdr sh;
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!gelf_getshdr(scn, &sh) || !data || sh.sh_entsize == 0)
        return 0;
    size_t count = sh.sh_size / sh.sh_entsize, n = 0;
    struct cand *c = calloc(count ? count : 1, sizeof *c);
    Elf_Data *str = elf_getdata(elf_getscn(elf, sh.sh_link), NULL);
    const char *limit = str && str->d_buf ? (const char *)str->d_buf + str->d_size : NULL;
    for (size_t i = 0; c && i < count; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym))
            continue;
        const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
        if (!name)
            continue;
        int inside = limit && name >= (const char *)str->d_buf && name < limit;
        int cls = sym_class(elf, &sym, name, inside ? limit : name + strlen(name) + 1, flags);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!cls || (cls == 't' && (flags & SYMTAB_NO_STATIC)))
            continue;
        c[n].s = (struct symtab_sym){.addr = sym.st_value,
                                     .name = name,
                                     .is_static = cls == 't',
                                     .is_func = type == STT_FUNC || type == STT_GNU_IFUNC,
                                     .order = i};
        const struct dwi_row *row = cls == 't' && dw ? dwi_line(dw, sym.st_value) : NULL;
        if (row && row->line != 0)
            c[n].s.file = base_name(dw->files[row->file]);
        c[n].order = i;
        c[n].size = sym.st_size;
        n++;
    }
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
    struct dwi dw;
    char note[512];
    int drc = 1;
    memset(&dw, 0, sizeof dw);
    if (!(flags & SYMTAB_NO_LINES))
        drc = dwi_load(&dw, elf, path, 0, note, sizeof note);
    if (drc < 0) {
        snprintf(err, errsz, "%s", note);
        return -1;
    }
    t->debug = dw.nrows > 0 ? (drc ? 2 : 1) : 0;
    if (drc == 2)
        t->note = strdup(note);
    struct cand *c = NULL;
    size_t n = scn ? collect(elf, scn, dw.nrows ? &dw : NULL, flags, &c) : 0;
    struct plt_name *plt = NULL;
    size_t nplt = flags & SYMTAB_PLT ? plt_names(elf, &plt) : 0;
    struct cand *more = nplt ? realloc(c, (n + nplt) * sizeof *c) : NULL;
    if (more) {
        c = more;
        for (size_t i = 0; i < nplt; i++)
            c[n++] = (struct cand){{.addr = plt[i].addr, .name = plt[i].name, .is_func = 1},
                                   (size_t)-1,
                                   16}; /* a PLT entry is 16 bytes */
    }
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
    for (size_t i = 0; i < nplt; i++)
        free(plt[i].name);
    free(plt);
    dwi_free(&dw);
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
    free(t->note);
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

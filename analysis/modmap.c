/* Module map: turns a cgprof profile (several modules, addresses within
 * each) into what the analysis takes -- one symbol table, exact-pc samples
 * and arcs -- by giving each module its own slice of a synthetic address
 * space.  Library functions are named "name [libfoo.so.1]".
 *
 * Every function symbol is a function, in the executable as in libraries:
 * GCC's clones (heavy.constprop.0, f.part.0, f.isra.0, f.cold,
 * f.lto_priv.0) keep their own names, as perf names them, rather than
 * gprof's rule giving their bytes to the symbol before them (that rule
 * stays for gmon.out, read with symtab.c directly); PLT stubs are
 * "free@plt".  Each symbol with a size owns only its own bytes.
 *
 * Every sample, arc and stack frame lands on a symbol (modmap_owned): a
 * pc in a module with no symbol there goes to the module's own entry
 * "[libfoo.so.1]", and a pc in no module to "[unknown]", so the flat
 * profile's total is the whole profile and a frame with no symbol keeps
 * its place in its stack.
 */
#include "modmap.h"
#include "escape.h"
#include "kernel.h"
#include "disasm.h"
#include "elffile.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLICE_SHIFT 40 /* module k's addresses start at (k + 1) << 40 */

static uint64_t slice(size_t k)
{
    return (uint64_t)(k + 1) << SLICE_SHIFT;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

struct bid {
    unsigned char *out;
    size_t cap, got;
};

static int find_build_id(Elf *e, void *ctx)
{
    struct bid *b = ctx;
    for (Elf_Scn *scn = NULL; !b->got && (scn = elf_nextscn(e, scn)) != NULL;) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz <= b->cap) {
                memcpy(b->out, (char *)d->d_buf + desc_off, nh.n_descsz);
                b->got = nh.n_descsz;
                break;
            }
        }
    }
    return 0;
}

size_t modmap_file_build_id(const char *path, unsigned char *out, size_t cap)
{
    struct bid b = {out, cap, 0};
    char err[256];
    elffile_with(path, find_build_id, &b, err, sizeof err);
    return b.got;
}

/* Separate debug information found by build-id (Debian's -dbg and
 * -dbgsym packages install it there): its .symtab names the local
 * functions a stripped library's .dynsym lacks, such as libc's
 * __memmove_avx_unaligned_erms.  0 if found and loaded. */
static int load_debug_syms(const struct cgdata_module *m, unsigned flags, struct symtab *st)
{
    if (m->build_id_len < 2)
        return -1;
    char path[256] = "/usr/lib/debug/.build-id/";
    size_t n = strlen(path);
    for (uint32_t i = 0; i < m->build_id_len && n + 8 < sizeof path; i++) {
        n += (size_t)snprintf(path + n, sizeof path - n, "%02x", m->build_id[i]);
        if (i == 0)
            path[n++] = '/';
    }
    snprintf(path + n, sizeof path - n, ".debug");
    char err[256];
    if (access(path, R_OK) != 0 || symtab_load_flags(st, path, flags, err, sizeof err) != 0)
        return -1;
    if (st->n == 0) {
        symtab_free(st);
        return -1;
    }
    return 0;
}

/* Symbols of module M: separate debug symbols when installed, else its
 * file's own (or, for the vDSO, its saved image's). */
static int load_module_syms(const struct cgdata_module *m, unsigned flags, struct symtab *st,
                            char *err, size_t errsz)
{
    if (load_debug_syms(m, flags, st) == 0)
        return 0;
    if (!m->image)
        return symtab_load_flags(st, m->path, flags, err, errsz);
    char tmp[] = "/tmp/cgprof-vdso-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errsz, "[vdso]: %s", strerror(errno));
        return -1;
    }
    int ok = write(fd, m->image, m->image_len) == (ssize_t)m->image_len;
    close(fd);
    int rc = ok ? symtab_load_flags(st, tmp, flags, err, errsz) : -1;
    unlink(tmp);
    return rc;
}

struct builder {
    struct symtab_sym *syms;
    size_t n, cap;
    char **names; /* owned strings */
    size_t nnames;
};

static int add_sym(struct builder *b, uint64_t addr, uint64_t end, const char *name,
                   const struct symtab_sym *like)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        struct symtab_sym *s = realloc(b->syms, cap * sizeof *s);
        char **nm = realloc(b->names, 2 * cap * sizeof *nm); /* a name and a file each */
        if (!s || !nm) {
            free(s ? s : b->syms);
            b->syms = NULL;
            b->names = nm ? nm : b->names;
            return -1;
        }
        b->syms = s;
        b->names = nm;
        b->cap = cap;
    }
    /* the name and the source file in one owned block: LIKE's strings
     * belong to a symbol table that is freed after this */
    const char *file = like ? like->file : NULL;
    size_t nlen = strlen(name) + 1, flen = file ? strlen(file) + 1 : 0;
    char *copy = malloc(nlen + flen);
    if (!copy)
        return -1;
    memcpy(copy, name, nlen);
    if (file)
        memcpy(copy + nlen, file, flen);
    b->names[b->nnames++] = copy;
    struct symtab_sym *s = &b->syms[b->n++];
    memset(s, 0, sizeof *s);
    if (like)
        *s = *like;
    s->addr = addr;
    s->end_addr = end;
    s->name = copy;
    s->file = file ? copy + nlen : NULL;
    if (!like)
        s->is_func = 1;
    return 0;
}

static int by_addr(const void *a, const void *b)
{
    const struct symtab_sym *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Adds module K's symbols, shifted into its slice, named for the module
 * unless it is the executable; then the module's own catch-all entry. */
static int add_module(struct builder *b, size_t k, const struct cgdata_module *m, unsigned flags,
                      FILE *warn)
{
    char err[512], name[1024];
    const char *mod = m->flags & CGDATA_MOD_VDSO ? "vdso" : base_name(m->path);
    int main_mod = (m->flags & CGDATA_MOD_MAIN) != 0;
    struct symtab st;
    memset(&st, 0, sizeof st);
    /* every function name (clones too), each over its own bytes only */
    unsigned lflags = (flags & ~MODMAP_LIB_NO_LINES) | SYMTAB_ANY_NAME | SYMTAB_SIZES | SYMTAB_PLT;
    if (!main_mod && (flags & MODMAP_LIB_NO_LINES))
        lflags |= SYMTAB_NO_LINES;
    int runtime = strncmp(base_name(m->path), "libcgprof.", 10) == 0;
    if (load_module_syms(m, lflags, &st, err, sizeof err) != 0) {
        fprintf(warn, "cgprof report: warning: no symbols for %s: %s\n", esc_text(m->path),
                esc_text(err));
    } else {
        unsigned char bid[64];
        size_t blen = m->image ? 0 : modmap_file_build_id(m->path, bid, sizeof bid);
        if (m->build_id_len && blen &&
            (blen != m->build_id_len || memcmp(bid, m->build_id, blen) != 0))
            fprintf(warn,
                    "cgprof report: warning: %s is not the file that was profiled (its "
                    "build-id differs); its functions may be misnamed\n",
                    esc_text(m->path));
        for (size_t i = 0; i < st.n; i++) {
            const struct symtab_sym *s = &st.syms[i];
            if (main_mod)
                snprintf(name, sizeof name, "%s", s->name);
            else
                snprintf(name, sizeof name, "%s [%s]", s->name, mod);
            if (add_sym(b, slice(k) + s->addr, slice(k) + s->end_addr, name, s) != 0) {
                symtab_free(&st);
                return -1;
            }
            b->syms[b->n - 1].is_runtime = runtime;
        }
        symtab_free(&st);
    }
    /* the rest of the slice: pcs in the module but in none of its symbols */
    snprintf(name, sizeof name, "[%s]", mod);
    return add_sym(b, slice(k), slice(k), name, NULL);
}

/* The kernel's functions the profile's kernel frames are in (record
 * --kernel), named from this boot's /proc/kallsyms, in the slice after the
 * modules'; "[kernel]" for the rest, and for all of them when they cannot
 * be named (said once). */
static int add_kernel(struct builder *b, const struct cgdata *d, FILE *warn)
{
    struct kernel_sym *ks;
    size_t n;
    char why[512];
    if (kernel_symbols(d, "/proc/kallsyms", "/proc/sys/kernel/random/boot_id", &ks, &n, why,
                       sizeof why) != 0)
        return -1;
    if (why[0])
        fprintf(warn, "cgprof report: note: the kernel's functions are not named: %s\n",
                esc_text(why));
    uint64_t k = slice(d->nmodules), mask = ((uint64_t)1 << SLICE_SHIFT) - 1;
    int fail = 0;
    for (size_t i = 0; i < n && !fail; i++)
        fail = add_sym(b, k + (ks[i].addr & mask), k + ((ks[i].end - 1) & mask), ks[i].name, NULL);
    kernel_symbols_free(ks, n);
    int any = n > 0;
    for (size_t i = 0; i < d->nstacks && !any; i++)
        any = CGDATA_IS_KERNEL(d->stacks[i].module, d->stacks[i].addr);
    for (size_t i = 0; i < d->nsamples && !any; i++)
        any = CGDATA_IS_KERNEL(d->samples[i].module, d->samples[i].addr);
    return fail ? -1 : any ? add_sym(b, k, k, "[kernel]", NULL) : 0;
}

/* Makes symbol ends consistent after sorting: each ends before the next. */
static void close_ranges(struct builder *b)
{
    qsort(b->syms, b->n, sizeof *b->syms, by_addr);
    for (size_t i = 0; i < b->n; i++) {
        uint64_t next = i + 1 < b->n ? b->syms[i + 1].addr : UINT64_MAX;
        uint64_t slice_end = (b->syms[i].addr | (((uint64_t)1 << SLICE_SHIFT) - 1));
        uint64_t end = next - 1 < slice_end ? next - 1 : slice_end;
        if (b->syms[i].end_addr < b->syms[i].addr || b->syms[i].end_addr > end ||
            b->syms[i].name[0] == '[')
            b->syms[i].end_addr = end;
    }
}

/* ---- library calls under the name the program called ---------------
 *
 * A library call's arc (docs/libcalls.md) has for `self` the function that
 * ran -- an IFUNC's implementation (__strlen_evex), a versioned definition
 * (pthread_join@@GLIBC_2.34).  The name the program called is the one its
 * call instruction went to: `from` is the return address of either
 *   - a `call rel32` (e8) to one of the calling module's PLT stubs, which
 *     SYMTAB_PLT names "strlen@plt", or
 *   - a `call *slot(%rip)` (ff 15 disp32: -fno-plt) through a GOT slot whose
 *     R_X86_64_GLOB_DAT relocation names the symbol (the runtime rewrote
 *     the site in memory into `nop; call rel32`, the same 6 bytes; the file
 *     keeps the original).
 * Each function reached by such arcs takes that name when every one of
 * them agrees (memcpy and memmove may share one implementation: then it
 * keeps its own), with its module's suffix.  */
static char disagree[1];

struct called {
    const struct cgdata *d;
    const struct symtab *st;
    size_t k;      /* the calling module */
    char **callee; /* per symbol: the name it was called by, NULL none, disagree */
    int failed;    /* out of memory */
};

/* The bytes at link-time address ADDR of ELF, N of them, or NULL. */
static const unsigned char *elf_bytes(Elf *elf, uint64_t addr, size_t n)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
            !(sh.sh_flags & SHF_EXECINSTR) || addr < sh.sh_addr ||
            addr + n > sh.sh_addr + sh.sh_size)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data || !data->d_buf || addr - sh.sh_addr + n > data->d_size)
            return NULL;
        return (const unsigned char *)data->d_buf + (addr - sh.sh_addr);
    }
    return NULL;
}

/* The symbol named by the R_X86_64_GLOB_DAT relocation of the GOT slot at
 * link-time address SLOT, or NULL. */
static const char *glob_dat_name(Elf *elf, uint64_t slot)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize == 0)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
        GElf_Shdr symsh;
        Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
        if (!data || !syms || !gelf_getshdr(symscn, &symsh))
            continue;
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; i < n; i++) {
            GElf_Rela r;
            GElf_Sym sym;
            if (!gelf_getrela(data, (int)i, &r) || r.r_offset != slot ||
                GELF_R_TYPE(r.r_info) != R_X86_64_GLOB_DAT)
                continue;
            if (!gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
                return NULL;
            const char *name = elf_strptr(elf, symsh.sh_link, sym.st_name);
            return name && *name ? name : NULL;
        }
    }
    return NULL;
}

/* The name the call ending at FROM (link-time address) in ELF called,
 * without its @-suffix: its length in *LEN, or NULL. */
static const char *called_name(const struct called *c, Elf *elf, uint32_t id, uint64_t from,
                               size_t *len)
{
    const unsigned char *b = from >= 5 ? elf_bytes(elf, from - 5, 5) : NULL;
    const char *name = NULL;
    if (b && b[0] == 0xe8) {
        int32_t rel = (int32_t)((uint32_t)b[1] | (uint32_t)b[2] << 8 | (uint32_t)b[3] << 16 |
                                (uint32_t)b[4] << 24);
        long via = symtab_lookup(c->st, modmap_pc(c->d, id, from + (uint64_t)(int64_t)rel));
        if (via >= 0 && strstr(c->st->syms[via].name, "@plt"))
            name = c->st->syms[via].name;
    }
    b = !name && from >= 6 ? elf_bytes(elf, from - 6, 6) : NULL;
    if (b && b[0] == 0xff && b[1] == 0x15) {
        int32_t rel = (int32_t)((uint32_t)b[2] | (uint32_t)b[3] << 8 | (uint32_t)b[4] << 16 |
                                (uint32_t)b[5] << 24);
        name = glob_dat_name(elf, from + (uint64_t)(int64_t)rel);
    }
    if (name)
        *len = strcspn(name, "@");
    return name;
}

static int called_cb(Elf *elf, void *ctx)
{
    struct called *c = ctx;
    const struct cgdata *d = c->d;
    uint32_t id = d->modules[c->k].id;
    for (size_t i = 0; i < d->narcs; i++) {
        const struct cgdata_arc *a = &d->arcs[i];
        if (a->from_module != id || a->self_module == id || a->from_addr < 5)
            continue;
        long to = symtab_lookup(c->st, modmap_pc(d, a->self_module, a->self_addr));
        if (to < 0 || c->callee[to] == disagree)
            continue;
        size_t len;
        const char *via = called_name(c, elf, id, a->from_addr, &len);
        if (!via)
            continue;
        char *had = c->callee[to];
        if (had && (strlen(had) != len || strncmp(had, via, len) != 0)) {
            free(had);
            c->callee[to] = disagree;
        } else if (!had && !(c->callee[to] = strndup(via, len))) {
            c->failed = 1;
            return 0;
        }
    }
    return 0;
}

/* Renames the functions library calls reach to the name they were called by. */
static int called_names(struct builder *b, const struct cgdata *d)
{
    struct symtab st = {.syms = b->syms, .n = b->n};
    char **callee = calloc(b->n ? b->n : 1, sizeof *callee);
    if (!callee)
        return -1;
    int failed = 0;
    for (size_t k = 0; k < d->nmodules && !failed; k++) {
        const struct cgdata_module *m = &d->modules[k];
        int any = 0;
        for (size_t i = 0; i < d->narcs && !any; i++)
            any = d->arcs[i].from_module == m->id && d->arcs[i].self_module != m->id;
        if (!any || m->image || (m->flags & CGDATA_MOD_VDSO))
            continue;
        struct called c = {.d = d, .st = &st, .k = k, .callee = callee};
        char err[256];
        elffile_with(m->path, called_cb, &c, err, sizeof err); /* unreadable: names stay */
        failed = c.failed;
    }
    for (size_t i = 0; i < b->n && !failed; i++) {
        if (!callee[i] || callee[i] == disagree || b->syms[i].name[0] == '[' ||
            b->syms[i].is_runtime)
            continue;
        const char *own = b->syms[i].name;
        const char *mod = strstr(own, " [");
        char name[1024];
        snprintf(name, sizeof name, "%s%s", callee[i], mod ? mod : "");
        if (strcmp(name, own) == 0)
            continue;
        char *copy = strdup(name);
        char **nm = realloc(b->names, (b->nnames + 1) * sizeof *nm);
        if (nm)
            b->names = nm;
        if (!copy || !nm) {
            free(copy);
            failed = 1;
            break;
        }
        b->names[b->nnames++] = copy;
        b->syms[i].name = copy;
    }
    for (size_t i = 0; i < b->n; i++)
        if (callee[i] != disagree)
            free(callee[i]);
    free(callee);
    return failed ? -1 : 0;
}

/* The synthetic pc of (module, address); "[unknown]" lives in slice 0,
 * the kernel (record --kernel) in the slice after the modules'. */
uint64_t modmap_pc(const struct cgdata *d, uint32_t module, uint64_t addr)
{
    if (module == CGDATA_SYMTAB_MODULE && d->symtab_frames)
        return addr;
    if (CGDATA_IS_KERNEL(module, addr))
        return slice(d->nmodules) + (addr & (((uint64_t)1 << SLICE_SHIFT) - 1));
    for (size_t k = 0; k < d->nmodules; k++)
        if (d->modules[k].id == module)
            return slice(k) + (addr & (((uint64_t)1 << SLICE_SHIFT) - 1));
    return 0;
}

const char *modmap_tag(const struct cgdata *d, uint64_t pc)
{
    uint64_t k = pc >> SLICE_SHIFT;
    if (k == 0 || k > d->nmodules)
        return NULL;
    const struct cgdata_module *m = &d->modules[k - 1];
    if (m->flags & CGDATA_MOD_MAIN)
        return NULL;
    return m->flags & CGDATA_MOD_VDSO ? "vdso" : base_name(m->path);
}

int modmap_addr(const struct cgdata *d, uint64_t pc, uint32_t *module, uint64_t *addr)
{
    uint64_t k = pc >> SLICE_SHIFT;
    if (k == 0 || k > d->nmodules)
        return -1;
    *module = d->modules[k - 1].id;
    *addr = pc & (((uint64_t)1 << SLICE_SHIFT) - 1);
    return 0;
}

uint64_t modmap_owned(const struct symtab *st, uint64_t pc)
{
    if (symtab_lookup(st, pc) >= 0)
        return pc;
    return pc & ~(((uint64_t)1 << SLICE_SHIFT) - 1);
}

static uint64_t owned(const struct symtab *st, uint64_t pc)
{
    return modmap_owned(st, pc);
}

uint64_t modmap_owned_return(const struct symtab *st, uint64_t pc)
{
    if (symtab_lookup(st, pc) < 0 && pc > 0 && symtab_lookup(st, pc - 1) >= 0)
        return pc - 1;
    return owned(st, pc);
}

static void mark(const struct symtab *st, unsigned char *used, uint64_t pc)
{
    long j = symtab_lookup(st, pc);
    if (j >= 0)
        used[j] = 1;
}

/* Leaves out the symbols no sample or arc points into, except the
 * executable's own functions: a library's thousands of unused functions
 * would only be listed by -z and slow everything down.  No pc changes
 * hands: nothing lies in the ranges taken out. */
static void drop_unused(struct modmap *mm, const struct cgdata *d, uint64_t main_slice)
{
    unsigned char *used = calloc(mm->st.n ? mm->st.n : 1, 1);
    if (!used)
        return;                             /* keep them all */
    for (size_t i = 0; i < d->nstacks; i++) /* every frame of the sampled stacks */
        if (d->stacks[i].module != CGDATA_CUT_MODULE)
            mark(&mm->st, used,
                 owned(&mm->st, modmap_pc(d, d->stacks[i].module, d->stacks[i].addr)));
    for (size_t i = 0; i < mm->nsamples; i++)
        mark(&mm->st, used, mm->samples[i].pc);
    for (size_t i = 0; i < mm->gd.narcs; i++) {
        mark(&mm->st, used, mm->gd.arcs[i].from_pc);
        mark(&mm->st, used, mm->gd.arcs[i].self_pc);
    }
    size_t dst = 0;
    for (size_t i = 0; i < mm->st.n; i++) {
        const struct symtab_sym *s = &mm->st.syms[i];
        int keep = used[i] || (main_slice && s->addr >> SLICE_SHIFT == main_slice >> SLICE_SHIFT &&
                               s->name[0] != '[');
        if (keep)
            mm->st.syms[dst++] = *s;
    }
    mm->st.n = dst;
    free(used);
}

static void builder_free(struct builder *b)
{
    free(b->syms);
    for (size_t i = 0; i < b->nnames; i++)
        free(b->names[i]);
    free(b->names);
}

int modmap_build(struct modmap *mm, const struct cgdata *d, unsigned sym_flags, FILE *warn,
                 char *err, size_t errsz)
{
    memset(mm, 0, sizeof *mm);
    struct builder b = {0};
    int fail = add_sym(&b, 0, 0, "[unknown]", NULL);
    /* only modules that something in the profile points into */
    for (size_t k = 0; k < d->nmodules && !fail; k++) {
        uint32_t id = d->modules[k].id;
        int used = 0;
        for (size_t i = 0; i < d->nsamples && !used; i++)
            used = d->samples[i].module == id;
        for (size_t i = 0; i < d->narcs && !used; i++)
            used = d->arcs[i].from_module == id || d->arcs[i].self_module == id;
        for (size_t i = 0; i < d->nstacks && !used; i++)
            used = d->stacks[i].module == id;
        if (used)
            fail = add_module(&b, k, &d->modules[k], sym_flags, warn);
    }
    if (!fail)
        fail = add_kernel(&b, d, warn);
    const char *why = fail ? "out of memory reading symbols" : NULL;
    if (!fail) {
        close_ranges(&b);
        if (called_names(&b, d) != 0)
            why = "out of memory naming library calls";
    }
    if (why) {
        snprintf(err, errsz, "%s", why);
        modmap_free(mm);
        builder_free(&b);
        return -1;
    }
    mm->st.syms = b.syms;
    mm->st.n = b.n;
    mm->names = b.names;
    mm->nnames = b.nnames;
    mm->samples = calloc(d->nsamples + 1, sizeof *mm->samples);
    if (!mm->samples) {
        snprintf(err, errsz, "out of memory");
        modmap_free(mm);
        return -1;
    }
    uint64_t main_slice = 0;
    for (size_t k = 0; k < d->nmodules; k++)
        if (d->modules[k].flags & CGDATA_MOD_MAIN)
            main_slice = slice(k);
    for (size_t i = 0; i < d->nsamples; i++) {
        mm->samples[i].pc = owned(&mm->st, modmap_pc(d, d->samples[i].module, d->samples[i].addr));
        mm->samples[i].count = d->samples[i].count;
    }
    mm->nsamples = d->nsamples;
    gmon_init(&mm->gd);
    for (size_t i = 0; i < d->narcs; i++) {
        const struct cgdata_arc *a = &d->arcs[i];
        int rc = gmon_add_arc(
            &mm->gd, modmap_owned_return(&mm->st, modmap_pc(d, a->from_module, a->from_addr)),
            owned(&mm->st, modmap_pc(d, a->self_module, a->self_addr)), a->count);
        if (rc != 0) {
            snprintf(err, errsz,
                     rc == -2 ? "call counts add up to more than 2^64: corrupt" : "out of memory");
            modmap_free(mm);
            return -1;
        }
    }
    mm->gd.lost_calls = d->lost_calls;
    drop_unused(mm, d, main_slice);
    return 0;
}

int modmap_static_calls(const struct modmap *mm, const struct cgdata *d, unsigned sym_flags,
                        struct cg_static_call **out, size_t *n, char *err, size_t errsz)
{
    *out = NULL;
    *n = 0;
    size_t k = 0;
    while (k < d->nmodules && !(d->modules[k].flags & CGDATA_MOD_MAIN))
        k++;
    if (k == d->nmodules)
        return 0;
    struct symtab own;
    if (symtab_load_flags(&own, d->modules[k].path, sym_flags | SYMTAB_ANY_NAME, err, errsz) != 0)
        return -1;
    /* the whole text counts, as a histogram covering everything would */
    struct gmon_hist all = {0};
    all.high_pc = UINT64_MAX;
    struct gmon_data gd;
    memset(&gd, 0, sizeof gd);
    gd.hists = &all;
    gd.nhists = 1;
    struct cg_static_call *calls = NULL;
    size_t nc = 0;
    int rc = disasm_static_calls(d->modules[k].path, &own, &gd, &calls, &nc, err, errsz);
    if (rc == 0) {
        /* symbol indices of the file -> those of the map (the main
         * executable's slice) */
        size_t m = 0;
        for (size_t i = 0; i < nc; i++) {
            long from = symtab_lookup(&mm->st, slice(k) + own.syms[calls[i].caller].addr);
            long to = symtab_lookup(&mm->st, slice(k) + own.syms[calls[i].callee].addr);
            if (from >= 0 && to >= 0)
                calls[m++] = (struct cg_static_call){(int)from, (int)to};
        }
        *out = calls;
        *n = m;
    } else {
        free(calls);
    }
    symtab_free(&own);
    return rc;
}

void modmap_free(struct modmap *mm)
{
    free(mm->st.syms);
    for (size_t i = 0; i < mm->nnames; i++)
        free(mm->names[i]);
    free(mm->names);
    free(mm->samples);
    gmon_free(&mm->gd);
    memset(mm, 0, sizeof *mm);
}

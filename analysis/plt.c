/* Names for the PLT stubs of an executable or library, "malloc@plt", as perf and objdump give them.
 *
 * Without names, time in a stub goes to the symbol before the PLT, which
 * is _init: GNU gprof reports it so, and gmon.out reports keep that; for
 * cgprof profiles the stubs are named.  x86-64 layout: .plt starts with
 * one resolver stub, then one 16-byte stub per .rela.plt entry, in order;
 * with IBT (.plt.sec) the stubs proper are there, one per entry.  A
 * .plt.got stub is an indirect jump through a GOT slot, which a
 * .rela.dyn entry names.  AArch64: a 32-byte resolver stub, then stubs
 * in .rela.plt's order, of 16 bytes, or 24 with BTI (non-PIE) or PAC
 * (-z pac-plt).
 */
#include "plt.h"

#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sections {
    Elf_Scn *plt, *plt_sec, *plt_got, *rela_plt, *rela_dyn;
};

static void find_sections(Elf *elf, struct sections *s)
{
    size_t shstrndx;
    memset(s, 0, sizeof *s);
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *n;
        if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
            continue;
        if (strcmp(n, ".plt") == 0)
            s->plt = scn;
        else if (strcmp(n, ".plt.sec") == 0)
            s->plt_sec = scn;
        else if (strcmp(n, ".plt.got") == 0)
            s->plt_got = scn;
        else if (strcmp(n, ".rela.plt") == 0 && sh.sh_type == SHT_RELA)
            s->rela_plt = scn;
        else if (strcmp(n, ".rela.dyn") == 0 && sh.sh_type == SHT_RELA)
            s->rela_dyn = scn;
    }
}

/* The name of relocation I of RELA's symbol table, or NULL. */
static const char *reloc_name(Elf *elf, Elf_Scn *rela, size_t i, GElf_Rela *r)
{
    GElf_Shdr sh, symsh;
    Elf_Data *d = elf_getdata(rela, NULL);
    if (!gelf_getshdr(rela, &sh) || !d || !gelf_getrela(d, (int)i, r))
        return NULL;
    Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
    Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
    GElf_Sym sym;
    if (!syms || !gelf_getshdr(symscn, &symsh) || GELF_R_SYM(r->r_info) == 0 ||
        !gelf_getsym(syms, (int)GELF_R_SYM(r->r_info), &sym))
        return NULL;
    const char *n = elf_strptr(elf, symsh.sh_link, sym.st_name);
    return n && n[0] ? n : NULL;
}

static int add(struct plt_name **v, size_t *n, size_t *cap, uint64_t addr, const char *sym)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        struct plt_name *nv = realloc(*v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = ncap;
    }
    size_t len = strlen(sym) + 5;
    char *name = malloc(len);
    if (!name)
        return -1;
    snprintf(name, len, "%s@plt", sym);
    (*v)[(*n)++] = (struct plt_name){addr, name};
    return 0;
}

/* .plt.got: each stub jumps through a GOT slot (ff 25 disp32), named by
 * the .rela.dyn entry for that slot. */
static int name_plt_got(Elf *elf, const struct sections *s, struct plt_name **v, size_t *n,
                        size_t *cap)
{
    GElf_Shdr sh, rsh;
    Elf_Data *d = elf_getdata(s->plt_got, NULL);
    if (!s->rela_dyn || !gelf_getshdr(s->plt_got, &sh) || !d || !d->d_buf ||
        !gelf_getshdr(s->rela_dyn, &rsh) || rsh.sh_entsize == 0 || sh.sh_entsize < 6)
        return 0;
    size_t nrel = rsh.sh_size / rsh.sh_entsize;
    const unsigned char *b = d->d_buf;
    for (size_t off = 0; off + sh.sh_entsize <= d->d_size; off += sh.sh_entsize) {
        for (size_t k = off; k + 6 <= off + sh.sh_entsize; k++) {
            if (b[k] != 0xff || b[k + 1] != 0x25)
                continue;
            int32_t disp;
            memcpy(&disp, b + k + 2, 4);
            uint64_t slot = sh.sh_addr + k + 6 + (uint64_t)(int64_t)disp;
            for (size_t i = 0; i < nrel; i++) {
                GElf_Rela r;
                const char *name = reloc_name(elf, s->rela_dyn, i, &r);
                if (name && r.r_offset == slot) {
                    if (add(v, n, cap, sh.sh_addr + off, name) != 0)
                        return -1;
                    break;
                }
            }
            break;
        }
    }
    return 0;
}

size_t plt_names(Elf *elf, struct plt_name **out)
{
    struct sections s;
    struct plt_name *v = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    *out = NULL;
    find_sections(elf, &s);
    Elf_Scn *stubs = s.plt_sec ? s.plt_sec : s.plt;
    GElf_Shdr sh, rsh;
    if (stubs && s.rela_plt && gelf_getshdr(stubs, &sh) && gelf_getshdr(s.rela_plt, &rsh) &&
        rsh.sh_entsize != 0) {
        GElf_Ehdr eh;
        int a64 = gelf_getehdr(elf, &eh) && eh.e_machine == EM_AARCH64;
        uint64_t size = sh.sh_entsize >= 8 ? sh.sh_entsize : 16;
        size_t nrel = rsh.sh_size / rsh.sh_entsize;
        /* AArch64: a 32-byte resolver stub, then stubs of 16 bytes, or 24
         * with BTI's `bti c` (non-PIE) or PAC's autia1716 (-z pac-plt);
         * binutils leaves sh_entsize 0, so the size is what the section
         * holds per entry */
        if (a64 && nrel && sh.sh_size > 32 && (sh.sh_size - 32) % nrel == 0 &&
            ((sh.sh_size - 32) / nrel == 16 || (sh.sh_size - 32) / nrel == 24))
            size = (sh.sh_size - 32) / nrel;
        /* .plt begins with the resolver's stub: one stub's size (32 bytes on AArch64) */
        uint64_t base = sh.sh_addr + (s.plt_sec ? 0 : a64 ? 32 : size);
        for (size_t i = 0; rc == 0 && i < nrel && base + (i + 1) * size <= sh.sh_addr + sh.sh_size;
             i++) {
            GElf_Rela r;
            const char *name = reloc_name(elf, s.rela_plt, i, &r);
            if (name)
                rc = add(&v, &n, &cap, base + i * size, name);
        }
    }
    if (rc == 0 && s.plt_got)
        rc = name_plt_got(elf, &s, &v, &n, &cap);
    if (rc != 0) {
        for (size_t i = 0; i < n; i++)
            free(v[i].name);
        free(v);
        return 0;
    }
    *out = v;
    return n;
}

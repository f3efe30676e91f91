/* The static call graph: direct calls found by disassembling the text with capstone (gprof -c).
 *
 * For each function, the part of its address range that lies both in
 * .text and in a histogram is decoded instruction by instruction; a byte
 * capstone cannot decode is stepped over.  A call is kept when it is a
 * direct near call (opcode E8 with a 32-bit displacement) whose target,
 * reckoned as gprof 2.40 reckons it, lies in a histogram and is exactly
 * the entry of a known function.  gprof adds the displacement to the
 * address after the call without sign extension, so a call to a lower
 * address lands 4 GiB too high and is never kept: only forward calls
 * make static arcs.  That is reproduced here so that `-c` output matches.
 * gprof also scans the bytes of a function before .text (such as _init,
 * whose range runs over .plt) from memory outside the section it read;
 * those bytes are not code it loaded, and they are skipped here.
 *
 * AArch64 (gprof 2.40's aarch64.c rules): every aligned word of the
 * function's range is decoded; an unconditional B or BL (imm26, either:
 * gprof keeps tail branches too) whose target lies in a histogram and is
 * exactly a function's entry is a static arc.  Conditional branches are
 * not calls.  A word capstone cannot decode is stepped over.
 *
 * Capstone is loaded when -c first needs it (dlopen), not linked: its
 * 1.8 MB of relocated tables cost every cgprof command 11 ms of start-up
 * on these machines, as much as gprof's whole report of Lua.  The unit
 * tests link the analysis modules without it.
 */
#include "disasm.h"
#include "elffile.h"

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CS_SONAME
#define CS_SONAME "libcapstone.so.4" /* Debian 12's; the Makefile asks the linker */
#endif

/* The capstone functions used here, from the library loaded on first use. */
static struct {
    cs_err (*open)(cs_arch, cs_mode, csh *);
    cs_err (*close)(csh *);
    cs_insn *(*malloc)(csh);
    void (*free)(cs_insn *, size_t);
    bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
    cs_err (*option)(csh, cs_opt_type, size_t);
} capstone;

static int load_capstone(char *err, size_t errsz)
{
    if (capstone.disasm_iter)
        return 0;
    void *h = dlopen(CS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen("libcapstone.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errsz, "-c: cannot load capstone (%s): install libcapstone4", CS_SONAME);
        return -1;
    }
    *(void **)&capstone.open = dlsym(h, "cs_open");
    *(void **)&capstone.close = dlsym(h, "cs_close");
    *(void **)&capstone.malloc = dlsym(h, "cs_malloc");
    *(void **)&capstone.free = dlsym(h, "cs_free");
    *(void **)&capstone.disasm_iter = dlsym(h, "cs_disasm_iter");
    *(void **)&capstone.option = dlsym(h, "cs_option");
    if (!capstone.open || !capstone.close || !capstone.malloc || !capstone.free ||
        !capstone.disasm_iter || !capstone.option) {
        snprintf(err, errsz, "-c: %s lacks the functions needed", CS_SONAME);
        capstone.disasm_iter = NULL;
        return -1;
    }
    return 0;
}

/* The section gprof reads for -c. */
struct text {
    const unsigned char *bytes;
    uint64_t vma;
    uint64_t size;
};

/* The calls found so far. */
struct calls {
    struct cg_static_call *v;
    size_t n, cap;
};

static int push_call(struct calls *c, int caller, int callee)
{
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 64;
        struct cg_static_call *v = realloc(c->v, ncap * sizeof *v);
        if (!v)
            return -1;
        c->v = v;
        c->cap = ncap;
    }
    c->v[c->n++] = (struct cg_static_call){caller, callee};
    return 0;
}

static int in_histogram(const struct gmon_data *gd, uint64_t pc)
{
    for (size_t i = 0; i < gd->nhists; i++)
        if (pc >= gd->hists[i].low_pc && pc < gd->hists[i].high_pc)
            return 1;
    return 0;
}

/* Clips [*LO, *HI) to the histogram it overlaps; returns 0 when it
 * overlaps none (gprof then scans nothing). */
static int clip_to_histogram(const struct gmon_data *gd, uint64_t *lo, uint64_t *hi)
{
    for (size_t i = 0; i < gd->nhists; i++) {
        uint64_t l = *lo > gd->hists[i].low_pc ? *lo : gd->hists[i].low_pc;
        uint64_t h = *hi < gd->hists[i].high_pc ? *hi : gd->hists[i].high_pc;
        if (l < h) {
            *lo = l;
            *hi = h;
            return 1;
        }
    }
    return 0;
}

/* The target of the E8 call at PC with displacement bytes D, as gprof
 * computes it (no sign extension). */
static uint64_t gprof_target(uint64_t pc, const uint8_t *d)
{
    uint32_t rel =
        (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
    return pc + 5 + (uint64_t)rel;
}

/* A call from function J to DEST is kept, as gprof keeps it, when DEST is
 * in a histogram and exactly a function's entry.  0, or -1 out of memory. */
static int keep_call(const struct symtab *st, const struct gmon_data *gd, size_t j, uint64_t dest,
                     struct calls *out)
{
    if (!in_histogram(gd, dest))
        return 0;
    long callee = symtab_lookup(st, dest);
    if (callee >= 0 && st->syms[callee].addr == dest)
        return push_call(out, (int)j, (int)callee);
    return 0;
}

/* Decodes function J's bytes in [LO, HI) and records its kept calls. */
static int scan_function(csh cs, cs_insn *insn, const struct text *tx, const struct symtab *st,
                         const struct gmon_data *gd, size_t j, uint64_t lo, uint64_t hi,
                         struct calls *out)
{
    uint64_t pc = lo;
    while (pc < hi) {
        const uint8_t *code = tx->bytes + (pc - tx->vma);
        size_t left = (size_t)(hi - pc);
        uint64_t addr = pc;
        if (!capstone.disasm_iter(cs, &code, &left, &addr, insn)) {
            pc++;
            continue;
        }
        pc = addr;
        if (insn->id != X86_INS_CALL || insn->size < 5 || insn->bytes[insn->size - 5] != 0xe8)
            continue;
        uint64_t at = insn->address + insn->size - 5;
        if (keep_call(st, gd, j, gprof_target(at, insn->bytes + insn->size - 4), out) != 0)
            return -1;
    }
    return 0;
}

/* The kept calls of function J in [LO, HI) of AArch64 code: B and BL,
 * decoded a word at a time with the instruction's detail (its target). */
static int scan_function_a64(csh cs, cs_insn *insn, const struct text *tx, const struct symtab *st,
                             const struct gmon_data *gd, size_t j, uint64_t lo, uint64_t hi,
                             struct calls *out)
{
    for (uint64_t pc = lo; pc + 4 <= hi; pc += 4) {
        const uint8_t *code = tx->bytes + (pc - tx->vma);
        size_t left = 4;
        uint64_t addr = pc;
        if (!capstone.disasm_iter(cs, &code, &left, &addr, insn))
            continue;
        if (insn->id != ARM64_INS_BL && insn->id != ARM64_INS_B)
            continue;
        const cs_arm64 *a = &insn->detail->arm64;
        if (a->cc != ARM64_CC_INVALID && a->cc != ARM64_CC_AL)
            continue; /* b.cond */
        if (a->op_count != 1 || a->operands[0].type != ARM64_OP_IMM)
            continue;
        if (keep_call(st, gd, j, (uint64_t)a->operands[0].imm, out) != 0)
            return -1;
    }
    return 0;
}

static int scan_all(const struct text *tx, int arch, int mode, const struct symtab *st,
                    const struct gmon_data *gd, struct calls *out, char *err, size_t errsz)
{
    csh cs;
    if (capstone.open(arch, mode, &cs) != CS_ERR_OK) {
        snprintf(err, errsz, "capstone: cannot open a disassembler for %s",
                 arch == CS_ARCH_ARM64 ? "AArch64" : "x86");
        return -1;
    }
    if (arch == CS_ARCH_ARM64 && capstone.option(cs, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
        capstone.close(&cs);
        snprintf(err, errsz, "capstone: no instruction detail for AArch64");
        return -1;
    }
    cs_insn *insn = capstone.malloc(cs);
    int rc = insn ? 0 : -1;
    uint64_t text_end = tx->vma + tx->size;
    for (size_t j = 0; rc == 0 && j < st->n; j++) {
        uint64_t lo = st->syms[j].addr, hi = st->syms[j].end_addr + 1;
        if (!clip_to_histogram(gd, &lo, &hi))
            continue;
        if (lo < tx->vma)
            lo = tx->vma;
        if (hi > text_end)
            hi = text_end;
        if (lo < hi)
            rc = arch == CS_ARCH_ARM64 ? scan_function_a64(cs, insn, tx, st, gd, j, lo, hi, out)
                                       : scan_function(cs, insn, tx, st, gd, j, lo, hi, out);
    }
    if (rc != 0)
        snprintf(err, errsz, "out of memory disassembling the text");
    if (insn)
        capstone.free(insn, 1);
    capstone.close(&cs);
    return rc;
}

/* Finds .text in ELF; returns 0, or -1 when there is none with contents. */
static int find_text(Elf *elf, struct text *tx)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return -1;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
            continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (!name || strcmp(name, ".text") != 0)
            continue;
        Elf_Data *d = elf_rawdata(scn, NULL);
        if (!d || !d->d_buf || d->d_size < sh.sh_size)
            return -1;
        *tx = (struct text){d->d_buf, sh.sh_addr, sh.sh_size};
        return 0;
    }
    return -1;
}

static int scan_elf(Elf *elf, const char *path, const struct symtab *st, const struct gmon_data *gd,
                    struct calls *out, char *err, size_t errsz)
{
    GElf_Ehdr eh;
    struct text tx;
    if (!gelf_getehdr(elf, &eh)) {
        snprintf(err, errsz, "%s: not an ELF file", path);
        return -1;
    }
    if (eh.e_machine != EM_X86_64 && eh.e_machine != EM_386 && eh.e_machine != EM_AARCH64) {
        snprintf(err, errsz, "-c not supported on architecture %d", (int)eh.e_machine);
        return 1;
    }
    if (find_text(elf, &tx) != 0) {
        snprintf(err, errsz, "%s: no .text section", path);
        return -1;
    }
    if (eh.e_machine == EM_AARCH64)
        return scan_all(&tx, CS_ARCH_ARM64, CS_MODE_ARM, st, gd, out, err, errsz);
    int mode = eh.e_machine == EM_X86_64 ? CS_MODE_64 : CS_MODE_32;
    return scan_all(&tx, CS_ARCH_X86, mode, st, gd, out, err, errsz);
}

struct scan_ctx {
    const char *path;
    const struct symtab *st;
    const struct gmon_data *gd;
    struct calls *c;
    char *err;
    size_t errsz;
};

static int scan_cb(Elf *elf, void *ctx)
{
    struct scan_ctx *x = ctx;
    return scan_elf(elf, x->path, x->st, x->gd, x->c, x->err, x->errsz);
}

int disasm_static_calls(const char *path, const struct symtab *st, const struct gmon_data *gd,
                        struct cg_static_call **out, size_t *n, char *err, size_t errsz)
{
    struct calls c = {NULL, 0, 0};
    *out = NULL;
    *n = 0;
    if (load_capstone(err, errsz) != 0)
        return -1;
    struct scan_ctx sc = {path, st, gd, &c, err, errsz};
    int rc = elffile_with(path, scan_cb, &sc, err, errsz);
    if (rc != 0) {
        free(c.v);
        return rc;
    }
    *out = c.v;
    *n = c.n;
    return 0;
}

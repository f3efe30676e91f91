/* insnlen_vs_capstone FILE...: the runtime's x86-64 instruction-length
 * decoder (runtime/insnlen.c) against capstone, over every function
 * symbol of each ELF file (with -s before the files: over each whole
 * executable section, a linear sweep that resumes a byte later where
 * capstone stops, which reaches the functions a stripped file has no
 * symbol for).  Each function is walked as capstone decodes
 * it; at each instruction the decoder must give capstone's length or 0
 * ("not sure", after which the runtime leaves that function alone).
 * Prints, per file, the instructions compared, those the decoder gave up
 * on, and every disagreement; exits 1 if there is any disagreement.
 * Built and run by tests/t0600-libcalls.sh (not a test_*.c of t0050: it
 * needs capstone). */
#include <capstone/capstone.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t cg_insn_len(const unsigned char *p, size_t avail);

struct range {
    uint64_t lo, hi;
};

static int by_lo(const void *a, const void *b)
{
    uint64_t x = ((const struct range *)a)->lo, y = ((const struct range *)b)->lo;
    return x < y ? -1 : x > y;
}

/* The bytes of [lo, hi) in an executable section of ELF, or NULL. */
static const unsigned char *text_at(Elf *elf, uint64_t lo, uint64_t hi)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
            !(sh.sh_flags & SHF_EXECINSTR) || lo < sh.sh_addr || hi > sh.sh_addr + sh.sh_size)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        return d && d->d_buf && hi - sh.sh_addr <= d->d_size
                   ? (const unsigned char *)d->d_buf + (lo - sh.sh_addr)
                   : NULL;
    }
    return NULL;
}

static int sweep;

static int check(const char *path, csh cs)
{
    int fd = open(path, O_RDONLY);
    Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    if (!elf) {
        fprintf(stderr, "insnlen_vs_capstone: %s: cannot read\n", path);
        return 2;
    }
    struct range *r = NULL;
    size_t n = 0, cap = 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sweep && sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size) {
            if (n == cap && !(r = realloc(r, (cap = cap ? 2 * cap : 1024) * sizeof *r)))
                return 2;
            r[n++] = (struct range){sh.sh_addr, sh.sh_addr + sh.sh_size};
        }
        if (sweep || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
                s.st_size == 0 || s.st_shndx == SHN_UNDEF)
                continue;
            if (n == cap && !(r = realloc(r, (cap = cap ? 2 * cap : 1024) * sizeof *r)))
                return 2;
            r[n++] = (struct range){s.st_value, s.st_value + s.st_size};
        }
    }
    qsort(r, n, sizeof *r, by_lo);
    unsigned long compared = 0, unknown = 0, differ = 0, funcs = 0;
    cs_insn *insn = cs_malloc(cs);
    for (size_t i = 0; i < n; i++) {
        if (i && r[i].lo == r[i - 1].lo)
            continue; /* aliases */
        const unsigned char *code = text_at(elf, r[i].lo, r[i].hi);
        if (!code)
            continue;
        funcs++;
        const uint8_t *p = code;
        size_t left = r[i].hi - r[i].lo;
        uint64_t addr = r[i].lo;
        while (left) {
            if (!cs_disasm_iter(cs, &p, &left, &addr, insn)) {
                if (!sweep)
                    break;
                p++, left--, addr++; /* data, or what capstone does not know */
                continue;
            }
            const unsigned char *at = p - insn->size;
            size_t ours = cg_insn_len(at, insn->size + left);
            compared++;
            if (ours == 0) {
                unknown++;
            } else if (ours != insn->size) {
                if (differ++ < 20) {
                    printf("%s: %#lx: capstone %u (%s %s), decoder %zu:", path,
                           (unsigned long)insn->address, insn->size, insn->mnemonic, insn->op_str,
                           ours);
                    for (unsigned k = 0; k < insn->size; k++)
                        printf(" %02x", at[k]);
                    printf("\n");
                }
            }
        }
    }
    cs_free(insn, 1);
    printf("%s: %lu functions, %lu instructions, %lu not decoded, %lu lengths differ\n", path,
           funcs, compared, unknown, differ);
    free(r);
    elf_end(elf);
    close(fd);
    return differ ? 1 : 0;
}

int main(int argc, char **argv)
{
    csh cs;
    if (elf_version(EV_CURRENT) == EV_NONE || cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
        return 2;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-s") == 0) {
            sweep = 1;
            continue;
        }
        int k = check(argv[i], cs);
        if (k > rc)
            rc = k;
    }
    cs_close(&cs);
    return rc;
}

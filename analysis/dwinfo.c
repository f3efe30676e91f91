/* Source lines and function ranges of one module from its DWARF (elfutils libdw), sorted once.
 *
 * Every unit's line table is read once into one array of rows sorted by
 * address, so that finding the line of an address is a binary search.
 * The rows follow the rules binutils (and so GNU gprof) applies to line
 * tables: of several rows at one address in a sequence the last one
 * counts; sequences are ordered by start address, the longer first at
 * equal starts; a sequence inside an earlier one is dropped, and one
 * overlapping an earlier one starts where that one ends.  An address
 * past the end of every sequence has no line.
 *
 * With DWI_FUNCS the address ranges of every function entry (inlined
 * copies included) are kept too, with the name binutils gives them: the
 * linkage name if there is one (a C function's DW_AT_name counts as
 * one), else DW_AT_name, looked up through abstract origins and
 * specifications.
 *
 * libdw reads DWARF 4 and 5 and decompresses SHF_COMPRESSED sections.
 * A unit it cannot read is skipped and named in the message; nothing
 * here trusts the contents beyond what libdw checked.
 */
#include "dwinfo.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEBUG_DIR "/usr/lib/debug"

/* A growing array of N elements of size SZ with capacity *CAP.  0, or -1. */
static int grow(void **p, size_t n, size_t *cap, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 256;
    void *q = realloc(*p, ncap * sz);
    if (!q)
        return -1;
    *p = q;
    *cap = ncap;
    return 0;
}

/* ---- separate debug files ---- */

/* The CRC-32 of .gnu_debuglink (the zlib polynomial). */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static int file_crc(int fd, uint32_t *crc)
{
    unsigned char buf[65536];
    ssize_t n;
    *crc = 0;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        *crc = crc32_update(*crc, buf, (size_t)n);
    return n < 0 ? -1 : 0;
}

/* An open separate debug file. */
struct debugfile {
    int fd;
    Elf *elf;
};

static int open_debug(struct debugfile *df, const char *path, int check_crc, uint32_t crc)
{
    df->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (df->fd < 0)
        return -1;
    uint32_t got;
    if (check_crc && (file_crc(df->fd, &got) != 0 || got != crc)) {
        close(df->fd);
        return -1;
    }
    df->elf = elf_begin(df->fd, ELF_C_READ_MMAP, NULL);
    if (!df->elf || elf_kind(df->elf) != ELF_K_ELF) {
        if (df->elf)
            elf_end(df->elf);
        close(df->fd);
        return -1;
    }
    return 0;
}

/* Finds ELF's separate debug file as gdb and perf do (under
 * $CGPROF_DEBUG_DIR instead of /usr/lib/debug when that is set); its path
 * goes to *FOUND (malloc'd).  0, or -1 when there is none. */
static int find_debug(Elf *elf, const char *path, struct debugfile *df, char **found)
{
    char buf[4096];
    const char *dbg = getenv("CGPROF_DEBUG_DIR");
    if (!dbg || !dbg[0])
        dbg = DEBUG_DIR;
    const void *id;
    ssize_t idlen = dwelf_elf_gnu_build_id(elf, &id);
    if (idlen >= 2) {
        const unsigned char *b = id;
        size_t n = (size_t)snprintf(buf, sizeof buf, "%s/.build-id/%02x/", dbg, b[0]);
        for (ssize_t i = 1; i < idlen && n + 8 < sizeof buf; i++)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%02x", b[i]);
        snprintf(buf + n, sizeof buf - n, ".debug");
        if (open_debug(df, buf, 0, 0) == 0)
            return (*found = strdup(buf)) ? 0 : -1;
    }
    GElf_Word crc;
    const char *link = dwelf_elf_gnu_debuglink(elf, &crc);
    if (!link || !link[0] || strchr(link, '/'))
        return -1;
    char dir[2048];
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    char absdir[2048];
    if (!realpath(dir, absdir))
        snprintf(absdir, sizeof absdir, "%s", dir);
    for (size_t i = 0; i < 3; i++) {
        if (i < 2)
            snprintf(buf, sizeof buf, i ? "%s/.debug/%s" : "%s/%s", dir, link);
        else
            snprintf(buf, sizeof buf, "%s%s/%s", dbg, absdir, link);
        if (strcmp(buf, path) != 0 && open_debug(df, buf, 1, crc) == 0)
            return (*found = strdup(buf)) ? 0 : -1;
    }
    return -1;
}

/* ---- line tables ---- */

/* A sequence while loading: rows [first, first + n) of the scratch rows. */
struct seq {
    uint64_t lo, hi;
    size_t first, n;
    size_t idx;
};

struct loader {
    struct dwi *d;
    struct dwi_row *tmp; /* rows of every sequence, sequence by sequence */
    size_t ntmp, tmpcap;
    struct seq *seqs;
    size_t nseqs, seqcap;
    size_t filecap, funccap, inlcap, namelen, namecap;
    int bad_units;
    Dwarf_Off first_bad;
    const unsigned char *line_sec; /* .debug_line, decompressed */
    size_t line_size;
};

static int add_files(struct loader *L, Dwarf_Files *files, size_t nfiles)
{
    struct dwi *d = L->d;
    for (size_t i = 0; i < nfiles; i++) {
        if (grow((void **)&d->files, d->nfiles, &L->filecap, sizeof *d->files) != 0)
            return -1;
        const char *name = dwarf_filesrc(files, i, NULL, NULL);
        d->files[d->nfiles] = strdup(name ? name : "<unknown>");
        if (!d->files[d->nfiles])
            return -1;
        d->nfiles++;
    }
    return 0;
}

/* The sequences of a line program, from its raw bytes.  libdw gives the
 * rows of a unit sorted by address, which loses where each sequence
 * starts and ends (a row at a sequence's end address, or sequences that
 * meet, look alike), so the program is scanned once for the address
 * range of every sequence.
 *
 * The scan also serves a binutils quirk: binutils starts each sequence of
 * a DWARF 5 line table with file 0 in the file register, where the
 * standard (and libdw) says 1; gcc relies on 1 and sets no file when a
 * sequence starts in file 1, so gprof names file 0 for those rows.
 * fileless_hi is the address of the first row made after the sequence
 * first sets a file: a row made before the DW_LNS_set_file, even at the
 * address where the file changes (clang puts set_file after the row
 * ending a prologue), is still file 0's.
 *
 * Everything is bounds-checked; a malformed program yields no sequences
 * and the caller falls back on the sorted rows alone. */
struct rawseq {
    uint64_t lo, hi, fileless_hi;
    size_t idx;
};

static int uleb(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; *p < end; shift += 7) {
        unsigned char b = *(*p)++;
        if (shift < 64)
            *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 0;
    }
    return -1;
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* The header of the line program at OFF: where its opcodes start and end. */
struct lphdr {
    const unsigned char *prog, *end, *std_len;
    unsigned version, min_inst, line_range, opcode_base;
};

static int line_header(const unsigned char *sec, size_t size, uint64_t off, struct lphdr *h)
{
    if (off >= size || size - off < 4)
        return -1;
    const unsigned char *p = sec + off;
    uint64_t len = get_le(p, 4);
    int osz = 4;
    p += 4;
    if (len == 0xffffffffu) {
        if ((size_t)(sec + size - p) < 8)
            return -1;
        len = get_le(p, 8);
        osz = 8;
        p += 8;
    }
    if (len > (uint64_t)(sec + size - p) || len < 2u + 2u + (unsigned)osz + 6u)
        return -1;
    h->end = p + len;
    h->version = (unsigned)get_le(p, 2);
    if (h->version < 2 || h->version > 5)
        return -1;
    p += h->version >= 5 ? 4 : 2; /* version (, address_size, segment_selector_size) */
    uint64_t hlen = get_le(p, osz);
    p += osz;
    unsigned fixed = h->version >= 4 ? 6 : 5; /* min_inst [max_ops] is_stmt base range opbase */
    if (hlen > (uint64_t)(h->end - p) || hlen < fixed)
        return -1;
    h->prog = p + hlen;
    h->min_inst = p[0];
    h->line_range = p[fixed - 2];
    h->opcode_base = p[fixed - 1];
    h->std_len = p + fixed;
    if (h->line_range == 0 || h->opcode_base == 0 ||
        (size_t)(h->prog - h->std_len) < h->opcode_base - 1u)
        return -1;
    return 0;
}

/* Appends the sequences of the line program at OFF to *R.  0, or -1
 * (malformed: *N is put back; or out of memory: *OOM set). */
static int scan_program(const unsigned char *sec, size_t size, uint64_t off, struct rawseq **r,
                        size_t *n, size_t *cap, int *oom)
{
    struct lphdr h;
    size_t n0 = *n;
    if (line_header(sec, size, off, &h) != 0)
        return -1;
    uint64_t addr = 0, lo = 0, fhi = 0, v;
    int rows = 0, set = 0, filed = 0;
    for (const unsigned char *p = h.prog; p < h.end;) {
        unsigned op = *p++;
        int row = 0;
        if (op >= h.opcode_base) {
            addr += (uint64_t)((op - h.opcode_base) / h.line_range) * h.min_inst;
            row = 1;
        } else if (op == 0) {
            if (uleb(&p, h.end, &v) != 0 || v == 0 || v > (uint64_t)(h.end - p))
                goto bad;
            const unsigned char *next = p + v;
            if (*p == 1) { /* end_sequence */
                if (rows) {
                    if (grow((void **)r, *n, cap, sizeof **r) != 0) {
                        *oom = 1;
                        goto bad;
                    }
                    (*r)[*n] = (struct rawseq){lo, addr, set ? fhi : addr, *n};
                    ++*n;
                }
                addr = 0;
                rows = set = filed = 0;
            } else if (*p == 2 && (v == 5 || v == 9)) {
                addr = get_le(p + 1, (int)v - 1);
            }
            p = next;
        } else if (op == 1) {
            row = 1;
        } else if (op == 2) {
            if (uleb(&p, h.end, &v) != 0)
                goto bad;
            addr += v * h.min_inst;
        } else if (op == 4) {
            if (uleb(&p, h.end, &v) != 0)
                goto bad;
            filed = 1; /* the rows from the next on have a file */
        } else if (op == 8) {
            addr += (uint64_t)((255 - h.opcode_base) / h.line_range) * h.min_inst;
        } else if (op == 9) {
            if (h.end - p < 2)
                goto bad;
            addr += get_le(p, 2);
            p += 2;
        } else {
            for (unsigned k = 0; k < h.std_len[op - 1]; k++)
                if (uleb(&p, h.end, &v) != 0)
                    goto bad;
        }
        if (row && filed && !set) {
            set = 1;
            fhi = addr;
        }
        if (row && !rows++)
            lo = addr;
    }
    if (h.version < 5) /* the quirk is DWARF 5's alone */
        for (size_t i = n0; i < *n; i++)
            (*r)[i].fileless_hi = (*r)[i].lo;
    return 0;
bad:
    *n = n0;
    return -1;
}

static int rawseq_cmp(const void *pa, const void *pb)
{
    const struct rawseq *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* One row of libdw's, or 0 when it is an end of sequence; -1 when unreadable. */
static int get_row(Dwarf_Lines *lines, size_t i, size_t nfiles, uint32_t base, struct dwi_row *row)
{
    Dwarf_Line *l = dwarf_onesrcline(lines, i);
    Dwarf_Addr addr;
    bool end;
    int lineno;
    Dwarf_Files *lf;
    size_t idx;
    if (!l || dwarf_lineaddr(l, &addr) != 0 || dwarf_lineendsequence(l, &end) != 0 ||
        dwarf_lineno(l, &lineno) != 0)
        return -1;
    if (end)
        return 0;
    if (dwarf_line_file(l, &lf, &idx) != 0 || idx >= nfiles)
        row->file = DWI_NO_FILE;
    else
        row->file = base + (uint32_t)idx;
    row->addr = addr;
    row->line = (uint32_t)lineno;
    return 1;
}

/* Adds ROW to the sequence being built (the last row at an address counts). */
static int seq_add(struct loader *L, struct seq *cur, const struct dwi_row *row)
{
    if (cur->n > 0 && L->tmp[L->ntmp - 1].addr == row->addr) {
        L->tmp[L->ntmp - 1] = *row;
        return 0;
    }
    if (grow((void **)&L->tmp, L->ntmp, &L->tmpcap, sizeof *L->tmp) != 0)
        return -1;
    L->tmp[L->ntmp++] = *row;
    cur->n++;
    return 0;
}

static struct seq *seq_new(struct loader *L, uint64_t lo)
{
    if (grow((void **)&L->seqs, L->nseqs, &L->seqcap, sizeof *L->seqs) != 0)
        return NULL;
    struct seq *q = &L->seqs[L->nseqs];
    *q = (struct seq){lo, lo, L->ntmp, 0, L->nseqs};
    return q;
}

/* libdw's rows (sorted by address) laid into the scanned sequences RS. */
static int rows_by_scan(struct loader *L, Dwarf_Lines *lines, size_t n, size_t nfiles,
                        uint32_t base, const struct rawseq *rs, size_t nrs)
{
    for (size_t s = 0; s < nrs; s++) {
        size_t lo = 0, hi = n; /* the first row at or above the sequence's start */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            Dwarf_Addr a;
            if (dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a) != 0)
                return 1;
            if (a < rs[s].lo)
                lo = mid + 1;
            else
                hi = mid;
        }
        struct seq *cur = seq_new(L, rs[s].lo);
        if (!cur)
            return -1;
        cur->hi = rs[s].hi;
        for (size_t i = lo; i < n; i++) {
            struct dwi_row row;
            int r = get_row(lines, i, nfiles, base, &row);
            if (r < 0)
                return 1;
            if (r == 0)
                continue;
            if (row.addr >= rs[s].hi)
                break;
            if (row.addr < rs[s].fileless_hi && row.file == base + 1)
                row.file = base; /* binutils' file register starts at 0 */
            if (seq_add(L, cur, &row) != 0)
                return -1;
        }
        if (cur->n > 0)
            L->nseqs++;
        else
            L->ntmp = cur->first;
    }
    return 0;
}

/* Without a scan: sequences as the sorted rows suggest (an end row closes one). */
static int rows_by_order(struct loader *L, Dwarf_Lines *lines, size_t n, size_t nfiles,
                         uint32_t base)
{
    struct seq *cur = NULL;
    for (size_t i = 0; i < n; i++) {
        struct dwi_row row;
        int r = get_row(lines, i, nfiles, base, &row);
        if (r < 0)
            return 1;
        if (r == 0) {
            if (cur) {
                Dwarf_Addr a;
                dwarf_lineaddr(dwarf_onesrcline(lines, i), &a);
                cur->hi = a;
                if (cur->n > 0)
                    L->nseqs++;
                else
                    L->ntmp = cur->first;
            }
            cur = NULL;
            continue;
        }
        if (!cur && !(cur = seq_new(L, row.addr)))
            return -1;
        if (seq_add(L, cur, &row) != 0)
            return -1;
    }
    if (cur) /* a sequence without its end: dropped */
        L->ntmp = cur->first;
    return 0;
}

/* Reads one unit's line table into sequences.  0, 1 when unreadable, -1. */
static int read_lines(struct loader *L, Dwarf_Die *cu)
{
    Dwarf_Lines *lines;
    Dwarf_Files *files;
    size_t n, nfiles;
    if (dwarf_getsrclines(cu, &lines, &n) != 0 || dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
        return dwarf_hasattr(cu, DW_AT_stmt_list) ? 1 : 0;
    uint32_t base = (uint32_t)L->d->nfiles;
    if (add_files(L, files, nfiles) != 0)
        return -1;
    struct rawseq *rs = NULL;
    size_t nrs = 0, rscap = 0;
    int oom = 0, scanned = 0;
    Dwarf_Attribute at;
    Dwarf_Word stmt;
    if (L->line_sec && dwarf_formudata(dwarf_attr(cu, DW_AT_stmt_list, &at), &stmt) == 0)
        scanned = scan_program(L->line_sec, L->line_size, stmt, &rs, &nrs, &rscap, &oom) == 0;
    int rc = -1;
    if (!oom) {
        if (nrs > 1)
            qsort(rs, nrs, sizeof *rs, rawseq_cmp);
        rc = scanned ? rows_by_scan(L, lines, n, nfiles, base, rs, nrs)
                     : rows_by_order(L, lines, n, nfiles, base);
    }
    free(rs);
    return rc;
}

static int seq_cmp(const void *pa, const void *pb)
{
    const struct seq *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi > b->hi ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int emit(struct dwi *d, size_t *cap, uint64_t addr, uint32_t file, uint32_t line)
{
    if (d->nrows > 0 && d->rows[d->nrows - 1].addr >= addr) {
        if (d->rows[d->nrows - 1].addr > addr)
            return 0;
        d->nrows--;
    }
    if (grow((void **)&d->rows, d->nrows, cap, sizeof *d->rows) != 0)
        return -1;
    d->rows[d->nrows++] = (struct dwi_row){addr, file, line};
    return 0;
}

/* Orders the sequences, drops nested ones, trims overlaps and lays the
 * rows out in one sorted array. */
static int flatten(struct loader *L)
{
    struct dwi *d = L->d;
    size_t cap = 0;
    if (L->nseqs > 1)
        qsort(L->seqs, L->nseqs, sizeof *L->seqs, seq_cmp);
    uint64_t last_hi = 0;
    int any = 0;
    for (size_t s = 0; s < L->nseqs; s++) {
        struct seq *q = &L->seqs[s];
        uint64_t lo = q->lo;
        if (any && lo < last_hi) {
            if (q->hi <= last_hi)
                continue;
            lo = last_hi;
        }
        any = 1;
        last_hi = q->hi;
        const struct dwi_row *r = &L->tmp[q->first];
        size_t k = 0;
        while (k + 1 < q->n && r[k + 1].addr <= lo)
            k++;
        if (emit(d, &cap, lo, r[k].file, r[k].line) != 0)
            return -1;
        for (k++; k < q->n; k++)
            if (r[k].addr < q->hi && emit(d, &cap, r[k].addr, r[k].file, r[k].line) != 0)
                return -1;
        if (emit(d, &cap, q->hi, DWI_NO_FILE, 0) != 0)
            return -1;
    }
    return 0;
}

/* ---- functions ---- */

/* Whether binutils takes DW_AT_name as the linkage name in LANG. */
static int plain_names(int lang)
{
    switch (lang) {
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_C99:
    case DW_LANG_C11:
    case DW_LANG_Cobol74:
    case DW_LANG_Cobol85:
    case DW_LANG_Fortran77:
    case DW_LANG_Fortran90:
    case DW_LANG_Fortran95:
    case DW_LANG_Pascal83:
    case DW_LANG_Modula2:
    case DW_LANG_Mips_Assembler:
        return 1;
    default:
        return 0;
    }
}

static long add_name(struct loader *L, const char *name)
{
    struct dwi *d = L->d;
    size_t len = strlen(name) + 1;
    while (L->namelen + len > L->namecap) {
        size_t ncap = L->namecap ? L->namecap * 2 : 4096;
        char *n = realloc(d->names, ncap);
        if (!n)
            return -1;
        d->names = n;
        L->namecap = ncap;
    }
    memcpy(d->names + L->namelen, name, len);
    L->namelen += len;
    return (long)(L->namelen - len);
}

static int add_func(struct loader *L, Dwarf_Die *die, int plain, uint32_t order)
{
    Dwarf_Attribute a;
    const char *name = NULL;
    int linkage = 0;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a)) {
        name = dwarf_formstring(&a);
        linkage = name != NULL;
    }
    if (!name && dwarf_attr_integrate(die, DW_AT_name, &a)) {
        name = dwarf_formstring(&a);
        linkage = plain;
    }
    if (!name)
        return 0;
    /* binutils 2.40 cannot read a range list given by index
     * (DW_FORM_rnglistx, clang's DWARF 5): gprof never finds such a
     * function, so it is left out here too */
    if (dwarf_attr(die, DW_AT_ranges, &a) && dwarf_whatform(&a) == DW_FORM_rnglistx)
        return 0;
    long off = -1;
    Dwarf_Addr base, start, end;
    ptrdiff_t it = 0;
    while ((it = dwarf_ranges(die, it, &base, &start, &end)) > 0) {
        if (start >= end)
            continue;
        if (off < 0 && (off = add_name(L, name)) < 0)
            return -1;
        struct dwi *d = L->d;
        if (grow((void **)&d->funcs, d->nfuncs, &L->funccap, sizeof *d->funcs) != 0)
            return -1;
        d->funcs[d->nfuncs++] =
            (struct dwi_func){start, end, (const char *)(intptr_t)off, order, linkage};
    }
    return 0;
}

/* An inlined copy's ranges, its name (through its abstract origin) and
 * the file and line of the call it replaced. */
static int add_inl(struct loader *L, Dwarf_Die *cu, Dwarf_Die *die, uint32_t depth)
{
    Dwarf_Attribute a;
    const char *name = NULL, *file = NULL;
    Dwarf_Word fidx = 0, line = 0;
    if (dwarf_attr_integrate(die, DW_AT_name, &a))
        name = dwarf_formstring(&a);
    if (!name)
        return 0;
    if (dwarf_attr(die, DW_AT_ranges, &a) && dwarf_whatform(&a) == DW_FORM_rnglistx)
        return 0;
    if (dwarf_attr(die, DW_AT_call_file, &a) && dwarf_formudata(&a, &fidx) == 0) {
        Dwarf_Files *files;
        size_t nf;
        if (dwarf_getsrcfiles(cu, &files, &nf) == 0 && fidx < nf)
            file = dwarf_filesrc(files, fidx, NULL, NULL);
    }
    if (dwarf_attr(die, DW_AT_call_line, &a))
        dwarf_formudata(&a, &line);
    long off = -1, foff = -1;
    Dwarf_Addr base, start, end;
    ptrdiff_t it = 0;
    while ((it = dwarf_ranges(die, it, &base, &start, &end)) > 0) {
        if (start >= end)
            continue;
        if (off < 0 && ((off = add_name(L, name)) < 0 || (file && (foff = add_name(L, file)) < 0)))
            return -1;
        struct dwi *d = L->d;
        if (grow((void **)&d->inl, d->ninl, &L->inlcap, sizeof *d->inl) != 0)
            return -1;
        d->inl[d->ninl++] = (struct dwi_inl){
            start,          end,  (const char *)(intptr_t)off, (const char *)(intptr_t)foff,
            (uint32_t)line, depth};
    }
    return 0;
}

/* Every function entry of the unit CU, depth first in DWARF order. */
static int read_funcs(struct loader *L, Dwarf_Die *cu, uint32_t *order, unsigned flags)
{
    int plain = plain_names(dwarf_srclang(cu));
    Dwarf_Die stack[64];
    int depth = 0;
    if (dwarf_child(cu, &stack[0]) != 0)
        return 0;
    for (;;) {
        Dwarf_Die *die = &stack[depth];
        int tag = dwarf_tag(die);
        if ((flags & DWI_FUNCS) &&
            (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
             tag == DW_TAG_entry_point) &&
            add_func(L, die, plain, (*order)++) != 0)
            return -1;
        if ((flags & DWI_INLINE) && tag == DW_TAG_inlined_subroutine &&
            add_inl(L, cu, die, (uint32_t)depth) != 0)
            return -1;
        if (depth + 1 < (int)(sizeof stack / sizeof stack[0]) && dwarf_haschildren(die) > 0 &&
            dwarf_child(die, &stack[depth + 1]) == 0) {
            depth++;
            continue;
        }
        while (dwarf_siblingof(&stack[depth], &stack[depth]) != 0)
            if (--depth < 0)
                return 0;
    }
}

static int func_cmp(const void *pa, const void *pb)
{
    const struct dwi_func *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int inl_cmp(const void *pa, const void *pb)
{
    const struct dwi_inl *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return a->depth < b->depth ? -1 : a->depth > b->depth;
}

/* ---- loading ---- */

/* .debug_line's bytes (libdw has decompressed them in place). */
static void find_line_section(Dwarf *dw, struct loader *L)
{
    Elf *elf = dwarf_getelf(dw);
    size_t shstrndx;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
        return;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *name;
        if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
            strcmp(name, ".debug_line") != 0 || (sh.sh_flags & SHF_COMPRESSED))
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (data && data->d_buf) {
            L->line_sec = data->d_buf;
            L->line_size = data->d_size;
        }
        return;
    }
}

static int read_units(struct loader *L, Dwarf *dw, unsigned flags)
{
    Dwarf_Off off = 0, next;
    size_t hsize;
    uint8_t unit_type;
    uint32_t order = 0;
    while (dwarf_next_unit(dw, off, &next, &hsize, NULL, NULL, NULL, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        Dwarf_Half version;
        Dwarf_Die sub;
        if (dwarf_offdie(dw, off + hsize, &cu) == NULL ||
            dwarf_cu_info(cu.cu, &version, &unit_type, &cu, &sub, NULL, NULL, NULL) != 0) {
            if (!L->bad_units++)
                L->first_bad = off;
            off = next;
            continue;
        }
        if (unit_type == DW_UT_compile || unit_type == DW_UT_partial ||
            unit_type == DW_UT_skeleton) {
            int r = read_lines(L, &cu);
            if (r == 0 && (flags & (DWI_FUNCS | DWI_INLINE)))
                r = read_funcs(L, &cu, &order, flags);
            if (r < 0)
                return -1;
            if (r > 0 && !L->bad_units++)
                L->first_bad = off;
        }
        off = next;
    }
    return 0;
}

int dwi_load(struct dwi *d, Elf *elf, const char *path, unsigned flags, char *msg, size_t msgsz)
{
    memset(d, 0, sizeof *d);
    struct debugfile df = {-1, NULL};
    Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
    if (!dw && find_debug(elf, path, &df, &d->debug_path) == 0)
        dw = dwarf_begin_elf(df.elf, DWARF_C_READ, NULL);
    if (!dw) {
        snprintf(msg, msgsz, "%s: no debugging information%s", d->debug_path ? d->debug_path : path,
                 d->debug_path ? "" : " (nor a separate debug file)");
        if (df.elf) {
            elf_end(df.elf);
            close(df.fd);
        }
        return 1;
    }
    struct loader L = {.d = d};
    find_line_section(dw, &L);
    int rc = read_units(&L, dw, flags);
    if (rc >= 0 && flatten(&L) != 0)
        rc = -1;
    if (rc >= 0 && (flags & DWI_FUNCS)) {
        for (size_t i = 0; i < d->nfuncs; i++)
            d->funcs[i].name = d->names + (intptr_t)d->funcs[i].name;
        if (d->nfuncs > 1)
            qsort(d->funcs, d->nfuncs, sizeof *d->funcs, func_cmp);
    }
    if (rc >= 0 && (flags & DWI_INLINE) && d->ninl) {
        for (size_t i = 0; i < d->ninl; i++) {
            d->inl[i].name = d->names + (intptr_t)d->inl[i].name;
            intptr_t f = (intptr_t)d->inl[i].call_file;
            d->inl[i].call_file = f < 0 ? NULL : d->names + f;
        }
        qsort(d->inl, d->ninl, sizeof *d->inl, inl_cmp);
        if (!(d->inl_reach = malloc(d->ninl * sizeof *d->inl_reach)))
            rc = -1;
        for (size_t i = 0; rc >= 0 && i < d->ninl; i++)
            d->inl_reach[i] =
                i && d->inl_reach[i - 1] > d->inl[i].hi ? d->inl_reach[i - 1] : d->inl[i].hi;
    }
    const char *from = d->debug_path ? d->debug_path : path;
    if (rc == 1 || (rc == 0 && L.bad_units)) {
        rc = 2;
        snprintf(msg, msgsz,
                 "%s: debugging information unreadable (%d unit%s, the first at offset 0x%llx: %s)",
                 from, L.bad_units, L.bad_units == 1 ? "" : "s", (unsigned long long)L.first_bad,
                 dwarf_errmsg(-1));
    } else if (rc < 0) {
        snprintf(msg, msgsz, "%s: out of memory reading debugging information", from);
    }
    free(L.tmp);
    free(L.seqs);
    dwarf_end(dw);
    if (df.elf) {
        elf_end(df.elf);
        close(df.fd);
    }
    return rc;
}

void dwi_free(struct dwi *d)
{
    for (size_t i = 0; i < d->nfiles; i++)
        free(d->files[i]);
    free(d->files);
    free(d->rows);
    free(d->funcs);
    free(d->inl);
    free(d->inl_reach);
    free(d->names);
    free(d->debug_path);
    memset(d, 0, sizeof *d);
}

const struct dwi_row *dwi_line(const struct dwi *d, uint64_t addr)
{
    size_t lo = 0, hi = d->nrows; /* the last row with addr <= ADDR */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->rows[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || d->rows[lo - 1].file == DWI_NO_FILE)
        return NULL;
    return &d->rows[lo - 1];
}

size_t dwi_inline_chain(const struct dwi *d, uint64_t addr, const struct dwi_inl **out, size_t max)
{
    size_t lo = 0, hi = d->ninl; /* the entries with lo <= ADDR: [0, lo) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->inl[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* walk back while some entry before can still reach ADDR; keep the
     * holders ordered by depth, the deepest (innermost) first */
    size_t n = 0;
    for (size_t i = lo; i-- > 0 && d->inl_reach[i] > addr;) {
        const struct dwi_inl *x = &d->inl[i];
        if (addr >= x->hi)
            continue;
        size_t k = n < max ? n++ : max;
        while (k > 0 && out[k - 1]->depth < x->depth) {
            if (k < max)
                out[k] = out[k - 1];
            k--;
        }
        if (k < max)
            out[k] = x;
    }
    return n;
}

/* Unwind tables: each module's .eh_frame call-frame information turned,
 * once, into a sorted array of rows saying how to find the caller's frame
 * from any pc -- the compact "stack deltas" a signal handler can use.
 *
 * Built when a module is first seen (modules.c, never in a signal
 * handler), from the module's own mapped .eh_frame_hdr and .eh_frame: the
 * header's sorted table lists every FDE, each FDE's CFA program (and its
 * CIE's initial program) is run, and every change of the rules that matter
 * for a walk -- where the CFA is, where the caller's frame pointer and
 * return address are -- becomes a row.  The return address is at CFA - 8
 * on x86-64, always; on AArch64 it is x30's rule: saved at CFA + N, or
 * still in x30 (leaves, prologues).  Register numbers are the
 * architecture's (arch.h: CG_DW_*); "rbp" below is its frame pointer.
 *
 * What x86-64 and AArch64 compilers and assemblers emit is covered: CFA
 * from the stack or frame pointer, x86-64's PLT expression, stack
 * realignment's CFA = *(rbp - 8), signal trampolines ('S' augmentation),
 * undefined return addresses (outermost frames), remember/restore state,
 * AArch64's signed return addresses (negate_ra_state).  Anything else becomes a row "no
 * information", where the walk falls back to frame pointers.  Every read
 * is bounds-checked against the segment that holds .eh_frame_hdr, so a
 * corrupt table gives fewer rows, never a fault.
 */
#include "unwind.h"

#include <string.h>
#include <sys/mman.h>

/* A bounded reader over mapped memory. */
struct rd {
    uintptr_t p, lo, hi;
    int bad;
};

static int avail(struct rd *r, size_t n)
{
    if (r->bad || r->p < r->lo || r->p > r->hi || r->hi - r->p < n) {
        r->bad = 1;
        return 0;
    }
    return 1;
}

static uint64_t rd_n(struct rd *r, size_t n)
{
    uint64_t v = 0;
    if (avail(r, n)) {
        memcpy(&v, (const void *)r->p, n);
        r->p += n;
    }
    return v;
}

static uint64_t uleb(struct rd *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; avail(r, 1); shift += 7) {
        uint8_t b = *(const uint8_t *)r->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    return 0;
}

static int64_t sleb(struct rd *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    while (avail(r, 1)) {
        b = *(const uint8_t *)r->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* A DW_EH_PE-encoded pointer; DATAREL is the base of datarel encodings. */
static uintptr_t encoded(struct rd *r, uint8_t enc, uintptr_t datarel)
{
    if (enc == 0xff)
        return 0;
    uintptr_t at = r->p, v;
    switch (enc & 0x0f) {
    case 0x00:
        v = (uintptr_t)rd_n(r, 8);
        break;
    case 0x01:
        v = (uintptr_t)uleb(r);
        break;
    case 0x02:
        v = (uintptr_t)rd_n(r, 2);
        break;
    case 0x03:
        v = (uintptr_t)rd_n(r, 4);
        break;
    case 0x04:
        v = (uintptr_t)rd_n(r, 8);
        break;
    case 0x09:
        v = (uintptr_t)sleb(r);
        break;
    case 0x0a:
        v = (uintptr_t)(int64_t)(int16_t)rd_n(r, 2);
        break;
    case 0x0b:
        v = (uintptr_t)(int64_t)(int32_t)rd_n(r, 4);
        break;
    case 0x0c:
        v = (uintptr_t)rd_n(r, 8);
        break;
    default:
        r->bad = 1;
        return 0;
    }
    switch (enc & 0x70) {
    case 0x00:
        break;
    case 0x10:
        v += at;
        break;
    case 0x30:
        v += datarel;
        break;
    default:
        r->bad = 1;
        return 0;
    }
    if (enc & 0x80) /* indirect: not used for code addresses in .eh_frame */
        r->bad = 1;
    return v;
}

/* ---- rows, in a growing mapped array ----------------------------------- */

struct build {
    struct cg_cfi *t;
    size_t cap; /* rows */
    uintptr_t lo, hi;
};

static int grow(struct build *b)
{
    size_t cap = b->cap ? b->cap * 2 : 4096;
    size_t bytes = sizeof(struct cg_cfi) + cap * sizeof(struct cg_cfi_row);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    struct cg_cfi *n = p;
    n->bytes = bytes;
    n->nrows = 0;
    if (b->t) {
        n->nrows = b->t->nrows;
        memcpy(n->rows, b->t->rows, b->t->nrows * sizeof(struct cg_cfi_row));
        munmap(b->t, b->t->bytes);
    }
    b->t = n;
    b->cap = cap;
    return 0;
}

static int same_rules(const struct cg_cfi_row *a, const struct cg_cfi_row *b)
{
    return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->rbp == b->rbp &&
           a->rbp_off == b->rbp_off && a->ra == b->ra && a->ra_off == b->ra_off;
}

static int emit(struct build *b, uintptr_t at, struct cg_cfi_row row)
{
    if (at < b->lo || at >= b->hi || at - b->lo > UINT32_MAX)
        return 0;
    row.start = (uint32_t)(at - b->lo);
    struct cg_cfi *t = b->t;
    if (t && t->nrows) {
        struct cg_cfi_row *last = &t->rows[t->nrows - 1];
        if (row.start < last->start)
            return 0; /* out of order (overlapping FDEs): keep the first */
        if (row.start == last->start) {
            *last = row;
            if (t->nrows > 1 && same_rules(&t->rows[t->nrows - 2], last))
                t->nrows--;
            return 0;
        }
        if (same_rules(last, &row))
            return 0;
    }
    if ((!t || t->nrows == b->cap) && grow(b) != 0)
        return -1;
    b->t->rows[b->t->nrows++] = row;
    return 0;
}

/* ---- running CFA programs ---------------------------------------------- */

/* the frame pointer, the stack pointer and the return-address column, by
 * the architecture's DWARF numbers (rbp, rsp, rip; x29, sp, x30) */
enum { R_RBP = CG_DW_FP, R_RSP = CG_DW_SP, R_RA = CG_DW_RA };
enum { RULE_SAME, RULE_OFFSET, RULE_DEREF_RBP, RULE_OTHER, RULE_UNDEF };

struct state {
    uint8_t cfa;     /* CG_CFA_* */
    int64_t cfa_off; /* or the PLT threshold in cfa_arg */
    int cfa_arg;
    uint8_t rbp_rule, ra_rule;
    int64_t rbp_off, ra_off;
};

struct cie {
    uintptr_t at;
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;
    int has_z, signal;
    uintptr_t insns, insns_end;
};

/* Recognizes the CFA expressions compilers emit; CG_CFA_NONE otherwise. */
static void cfa_expression(struct state *s, uintptr_t p, uint64_t len)
{
    const uint8_t *e = (const uint8_t *)p;
    /* PLT: DW_OP_breg7 8; DW_OP_breg16 0; lit15; and; litN; ge; lit3; shl; plus */
    static const uint8_t plt_a[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a};
    static const uint8_t plt_b[] = {0x2a, 0x33, 0x24, 0x22};
    if (len == 11 && memcmp(e, plt_a, 6) == 0 && e[6] >= 0x30 && e[6] <= 0x4f &&
        memcmp(e + 7, plt_b, 4) == 0) {
        s->cfa = CG_CFA_PLT;
        s->cfa_off = 8;
        s->cfa_arg = e[6] - 0x30;
        return;
    }
    /* realigned stack: DW_OP_breg6 N; DW_OP_deref (breg of the frame pointer) */
    if (len >= 3 && e[0] == 0x70 + R_RBP && e[len - 1] == 0x06) {
        struct rd r = {p + 1, p + 1, p + len - 1, 0};
        int64_t off = sleb(&r);
        if (!r.bad && r.p == p + len - 1) {
            s->cfa = CG_CFA_DEREF_RBP;
            s->cfa_off = off;
            return;
        }
    }
    s->cfa = CG_CFA_NONE;
}

static void set_rule(struct state *s, uint64_t reg, uint8_t rule, int64_t off)
{
    if (reg == R_RBP) {
        s->rbp_rule = rule;
        s->rbp_off = off;
    } else if (reg == R_RA) {
        s->ra_rule = rule;
        s->ra_off = off;
    }
}

static struct cg_cfi_row to_row(const struct state *s, int signal)
{
    struct cg_cfi_row row = {0, 0, 0, CG_CFA_NONE, CG_RBP_LOST, 0, CG_RA_CFA, 0};
    if (signal) {
        row.cfa = CG_CFA_SIGNAL;
        return row;
    }
    if (s->ra_rule == RULE_UNDEF) {
        row.cfa = CG_CFA_OUTERMOST;
        return row;
    }
    /* the return address: saved at CFA + off (at CFA - 8 on x86-64,
     * always), or still in the link register (a leaf; CG_RA_IN_REG) */
    if (s->ra_rule == RULE_OFFSET && s->ra_off >= INT16_MIN && s->ra_off <= INT16_MAX &&
        (CG_RA_IN_REG || s->ra_off == -8))
        row.ra_off = (int16_t)s->ra_off;
    else if (s->ra_rule == RULE_SAME && CG_RA_IN_REG)
        row.ra = CG_RA_REG;
    else
        return row;
    if (s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX)
        return row;
    row.cfa = s->cfa;
    row.cfa_off = (int32_t)s->cfa_off;
    if (s->cfa == CG_CFA_PLT)
        row.rbp_off = (int16_t)s->cfa_arg;
    switch (s->rbp_rule) {
    case RULE_SAME:
        row.rbp = CG_RBP_SAME;
        break;
    case RULE_OFFSET:
    case RULE_DEREF_RBP:
        if (s->rbp_off >= INT16_MIN && s->rbp_off <= INT16_MAX && s->cfa != CG_CFA_PLT) {
            row.rbp = s->rbp_rule == RULE_OFFSET ? CG_RBP_CFA : CG_RBP_DEREF;
            row.rbp_off = (int16_t)s->rbp_off;
        }
        break;
    default:
        break;
    }
    return row;
}

#define STATE_STACK 16

/* Runs a CFA program over [insns, end).  With B set, emits a row at every
 * advance (loc starts at *LOC), else only computes the CIE's initial
 * state.  INIT is the CIE's initial state (for DW_CFA_restore). */
static int run(struct build *b, const struct cie *c, uintptr_t insns, uintptr_t end,
               struct state *s, const struct state *init, uintptr_t *loc, uintptr_t loc_end,
               uintptr_t seg_lo)
{
    struct state saved[STATE_STACK];
    int nsaved = 0;
    struct rd r = {insns, seg_lo, end, 0};
    while (r.p < end && !r.bad) {
        uint8_t op = (uint8_t)rd_n(&r, 1);
        uint64_t reg, delta = 0;
        int advance = 0;
        switch (op >> 6) {
        case 1:
            delta = (op & 0x3f) * c->code_align;
            advance = 1;
            break;
        case 2:
            set_rule(s, op & 0x3f, RULE_OFFSET, (int64_t)uleb(&r) * c->data_align);
            continue;
        case 3:
            reg = op & 0x3f;
            if (init)
                set_rule(s, reg, reg == R_RBP ? init->rbp_rule : init->ra_rule,
                         reg == R_RBP ? init->rbp_off : init->ra_off);
            continue;
        default:
            break;
        }
        if (!advance) {
            switch (op) {
            case 0x00:
                break; /* nop */
            case 0x01:
                r.bad = 1;
                break; /* set_loc: unused */
            case 0x02:
                delta = rd_n(&r, 1) * c->code_align;
                advance = 1;
                break;
            case 0x03:
                delta = rd_n(&r, 2) * c->code_align;
                advance = 1;
                break;
            case 0x04:
                delta = rd_n(&r, 4) * c->code_align;
                advance = 1;
                break;
            case 0x05:
                reg = uleb(&r);
                set_rule(s, reg, RULE_OFFSET, (int64_t)uleb(&r) * c->data_align);
                break;
            case 0x06:
                reg = uleb(&r);
                if (init)
                    set_rule(s, reg, reg == R_RBP ? init->rbp_rule : init->ra_rule,
                             reg == R_RBP ? init->rbp_off : init->ra_off);
                break;
            case 0x07:
                set_rule(s, uleb(&r), RULE_UNDEF, 0);
                break;
            case 0x08:
                set_rule(s, uleb(&r), RULE_SAME, 0);
                break;
            case 0x09:
                reg = uleb(&r);
                set_rule(s, reg, uleb(&r) == reg ? RULE_SAME : RULE_OTHER, 0);
                break;
            case 0x0a:
                if (nsaved < STATE_STACK)
                    saved[nsaved] = *s;
                nsaved++;
                break;
            case 0x0b:
                if (nsaved > 0 && --nsaved < STATE_STACK) {
                    /* the CFA rule is restored too (DWARF 5 6.4.2.4) */
                    *s = saved[nsaved];
                }
                break;
            case 0x0c:
            case 0x12:
                reg = uleb(&r);
                s->cfa = reg == R_RSP ? CG_CFA_RSP : reg == R_RBP ? CG_CFA_RBP : CG_CFA_NONE;
                s->cfa_off = op == 0x0c ? (int64_t)uleb(&r) : sleb(&r) * c->data_align;
                break;
            case 0x0d:
                reg = uleb(&r);
                if (s->cfa == CG_CFA_RSP || s->cfa == CG_CFA_RBP || s->cfa == CG_CFA_NONE)
                    s->cfa = reg == R_RSP ? CG_CFA_RSP : reg == R_RBP ? CG_CFA_RBP : CG_CFA_NONE;
                break;
            case 0x0e:
                s->cfa_off = (int64_t)uleb(&r);
                break;
            case 0x13:
                s->cfa_off = sleb(&r) * c->data_align;
                break;
            case 0x0f: {
                uint64_t len = uleb(&r);
                if (avail(&r, len))
                    cfa_expression(s, r.p, len);
                r.p += len;
                break;
            }
            case 0x10:
            case 0x16: {
                reg = uleb(&r);
                uint64_t len = uleb(&r);
                uint8_t rule = RULE_OTHER;
                int64_t off = 0;
                if (op == 0x10 && reg == R_RBP && len >= 2 && avail(&r, len) &&
                    *(const uint8_t *)r.p == 0x70 + R_RBP) {
                    struct rd e = {r.p + 1, r.p + 1, r.p + len, 0};
                    off = sleb(&e);
                    if (!e.bad && e.p == r.p + len)
                        rule = RULE_DEREF_RBP;
                }
                set_rule(s, reg, rule, off);
                r.p += len;
                break;
            }
            case 0x11:
                reg = uleb(&r);
                set_rule(s, reg, RULE_OFFSET, sleb(&r) * c->data_align);
                break;
            case 0x14:
            case 0x15:
                reg = uleb(&r);
                if (op == 0x14)
                    uleb(&r);
                else
                    sleb(&r);
                set_rule(s, reg, RULE_OTHER, 0);
                break;
            case 0x2e:
                uleb(&r);
                break; /* GNU_args_size */
            case 0x2d:
                /* AArch64: DW_CFA_AARCH64_negate_ra_state, the return
                 * address signed from here (a walk strips every one it
                 * reads: cg_strip_ra); elsewhere SPARC's window save */
                r.bad = !CG_RA_IN_REG;
                break;
            case 0x2f:
                reg = uleb(&r);
                set_rule(s, reg, RULE_OFFSET, -(int64_t)uleb(&r) * c->data_align);
                break;
            default:
                r.bad = 1;
                break;
            }
        }
        if (advance && b && loc) {
            /* the rules so far hold from *loc; what follows, from the next */
            if (emit(b, *loc, to_row(s, c->signal)) != 0)
                return -1;
            *loc = delta > loc_end - *loc ? loc_end : *loc + delta;
        }
    }
    return r.bad ? 1 : 0;
}

static int parse_cie(uintptr_t at, uintptr_t seg_lo, uintptr_t seg_hi, struct cie *c)
{
    struct rd r = {at, seg_lo, seg_hi, 0};
    uint64_t len = rd_n(&r, 4);
    if (len == 0xffffffffu)
        len = rd_n(&r, 8);
    uintptr_t body = r.p;
    if (r.bad || len > seg_hi - body)
        return -1;
    uintptr_t end = body + len;
    r.hi = end;
    if (rd_n(&r, 4) != 0)
        return -1; /* not a CIE */
    uint8_t version = (uint8_t)rd_n(&r, 1);
    char aug[8];
    size_t na = 0;
    for (;;) {
        char ch = (char)rd_n(&r, 1);
        if (r.bad)
            return -1;
        if (!ch)
            break;
        if (na < sizeof aug - 1)
            aug[na++] = ch;
    }
    aug[na] = '\0';
    memset(c, 0, sizeof *c);
    c->at = at;
    if (aug[0] == 'e' && aug[1] == 'h')
        rd_n(&r, 8);
    c->code_align = uleb(&r);
    c->data_align = sleb(&r);
    c->ra_reg = version == 1 ? rd_n(&r, 1) : uleb(&r);
    c->fde_enc = 0x00;
    uintptr_t aug_end = 0;
    for (const char *a = aug; *a && !r.bad; a++) {
        switch (*a) {
        case 'z':
            c->has_z = 1;
            aug_end = (uintptr_t)uleb(&r);
            aug_end += r.p;
            break;
        case 'L':
            rd_n(&r, 1);
            break;
        case 'P': {
            uint8_t enc = (uint8_t)rd_n(&r, 1);
            encoded(&r, enc & 0x7f, 0); /* personality: only skipped */
            break;
        }
        case 'R':
            c->fde_enc = (uint8_t)rd_n(&r, 1);
            break;
        case 'S':
            c->signal = 1;
            break;
        case 'e':
        case 'h':
            break;
        default: /* unknown augmentation: 'z' tells its length */
            if (!c->has_z)
                return -1;
            r.p = aug_end;
            a = " ";
            break;
        }
    }
    if (c->has_z && aug_end)
        r.p = aug_end;
    if (r.bad || r.p > end || c->ra_reg != R_RA || c->code_align == 0)
        return -1;
    c->insns = r.p;
    c->insns_end = end;
    return 0;
}

/* The header of the FDE at AT: R left at its instructions (augmentation
 * data not yet skipped), *END its end, *PC and *RANGE its code, CACHE its
 * CIE.  1, or 0 when it has none usable. */
static int fde_head(uintptr_t at, uintptr_t seg_lo, uintptr_t seg_hi, struct cie *cache,
                    struct rd *r, uintptr_t *end, uintptr_t *pc, uintptr_t *range)
{
    *r = (struct rd){at, seg_lo, seg_hi, 0};
    uint64_t len = rd_n(r, 4);
    if (len == 0xffffffffu)
        len = rd_n(r, 8);
    uintptr_t body = r->p;
    if (r->bad || len == 0 || len > seg_hi - body)
        return 0;
    *end = body + len;
    r->hi = *end;
    uintptr_t id_at = r->p;
    uint32_t cie_off = (uint32_t)rd_n(r, 4);
    if (r->bad || cie_off == 0 || cie_off > id_at - seg_lo)
        return 0;
    uintptr_t cie_at = id_at - cie_off;
    if (cache->at != cie_at && parse_cie(cie_at, seg_lo, seg_hi, cache) != 0) {
        cache->at = 0;
        return 0;
    }
    *pc = encoded(r, cache->fde_enc, 0);
    *range = encoded(r, cache->fde_enc & 0x0f, 0);
    return !r->bad;
}

/* One FDE at AT: its rows. */
static int do_fde(struct build *b, uintptr_t at, uintptr_t seg_lo, uintptr_t seg_hi,
                  struct cie *cache)
{
    struct rd r;
    uintptr_t end, pc, range;
    if (!fde_head(at, seg_lo, seg_hi, cache, &r, &end, &pc, &range))
        return 0;
    if (cache->has_z) {
        uint64_t n = uleb(&r);
        r.p += n;
    }
    if (r.bad || r.p > end || range == 0 || pc < b->lo || pc >= b->hi || range > b->hi - pc)
        return 0;
    struct state init = {CG_CFA_NONE, 0, 0, RULE_SAME, RULE_SAME, 0, 0};
    struct state s;
    if (run(NULL, cache, cache->insns, cache->insns_end, &init, NULL, NULL, 0, seg_lo) < 0)
        return -1;
    s = init;
    uintptr_t loc = pc;
    if (run(b, cache, r.p, end, &s, &init, &loc, pc + range, seg_lo) < 0)
        return -1;
    if (loc < pc + range && emit(b, loc, to_row(&s, cache->signal)) != 0)
        return -1;
    struct cg_cfi_row none = {0, 0, 0, CG_CFA_NONE, CG_RBP_LOST, 0, CG_RA_CFA, 0};
    return emit(b, pc + range, none);
}

/* Every FDE of .eh_frame, in file order, when the header has no table. */
static int walk_eh_frame(struct build *b, uintptr_t p, uintptr_t seg_lo, uintptr_t seg_hi,
                         struct cie *cache)
{
    while (p >= seg_lo && p < seg_hi && seg_hi - p >= 8) {
        struct rd r = {p, seg_lo, seg_hi, 0};
        uint64_t len = rd_n(&r, 4);
        if (len == 0)
            break;
        if (len == 0xffffffffu)
            len = rd_n(&r, 8);
        if (r.bad || len > seg_hi - r.p)
            break;
        uintptr_t next = r.p + len;
        if (rd_n(&r, 4) != 0 && do_fde(b, p, seg_lo, seg_hi, cache) < 0)
            return -1;
        p = next;
    }
    return 0;
}

/* Builds T's page index (none if it cannot be mapped: lookups then
 * search every row). */
static void index_pages(struct cg_cfi *t)
{
    if (t->nrows == 0)
        return;
    uint32_t np = (t->rows[t->nrows - 1].start >> CG_CFI_PAGE_SHIFT) + 1;
    size_t bytes = (size_t)np * sizeof *t->first;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    uint32_t *first = p, j = 0;
    for (uint32_t i = 0; i < np; i++) {
        uint64_t at = (uint64_t)i << CG_CFI_PAGE_SHIFT;
        while (j + 1 < t->nrows && t->rows[j + 1].start <= at)
            j++;
        first[i] = j;
    }
    t->first = first;
    t->npages = np;
}

struct cg_cfi *cg_cfi_build(uintptr_t lo, uintptr_t hi, uintptr_t hdr, uintptr_t seg_lo,
                            uintptr_t seg_hi)
{
    if (!CG_ARCH_CFI)
        return NULL; /* not this architecture's rules: frame records alone */
    struct rd r = {hdr, seg_lo, seg_hi, 0};
    uint8_t version = (uint8_t)rd_n(&r, 1);
    uint8_t ptr_enc = (uint8_t)rd_n(&r, 1);
    uint8_t count_enc = (uint8_t)rd_n(&r, 1);
    uint8_t table_enc = (uint8_t)rd_n(&r, 1);
    uintptr_t eh = encoded(&r, ptr_enc, hdr);
    uint64_t n = count_enc == 0xff ? 0 : encoded(&r, count_enc, hdr);
    if (r.bad || version != 1)
        return NULL;
    struct build b = {NULL, 0, lo, hi};
    struct cie cache;
    memset(&cache, 0, sizeof cache);
    int rc = 0;
    if (n && table_enc != 0xff) {
        for (uint64_t i = 0; i < n && !r.bad && rc >= 0; i++) {
            encoded(&r, table_enc, hdr); /* initial location: the FDE says it too */
            uintptr_t fde = encoded(&r, table_enc, hdr);
            if (!r.bad)
                rc = do_fde(&b, fde, seg_lo, seg_hi, &cache);
        }
    } else if (eh) {
        rc = walk_eh_frame(&b, eh, seg_lo, seg_hi, &cache);
    }
    if (rc < 0 && b.t) {
        munmap(b.t, b.t->bytes);
        return NULL;
    }
    if (b.t)
        index_pages(b.t);
    return b.t;
}

const struct cg_cfi_row *cg_cfi_find(const struct cg_cfi *t, uintptr_t off)
{
    if (!t || t->nrows == 0 || off < t->rows[0].start || off > UINT32_MAX)
        return NULL;
    uint32_t a = 0, z = t->nrows; /* rows[a].start <= off < rows[z].start */
    uintptr_t pg = off >> CG_CFI_PAGE_SHIFT;
    if (t->first && pg < t->npages) {
        /* first[pg] starts at or before off (or is row 0, which does);
         * the row wanted starts at or before first[pg + 1] */
        a = t->first[pg];
        if (pg + 1 < t->npages)
            z = t->first[pg + 1] + 1;
    } else if (t->first) {
        a = t->first[t->npages - 1];
    }
    while (z - a > 1) {
        uint32_t m = a + (z - a) / 2;
        if (t->rows[m].start <= off)
            a = m;
        else
            z = m;
    }
    return &t->rows[a];
}

/* The code range of the FDE at AT, or 0 (*pc untouched) when it has none
 * usable. */
static uintptr_t fde_range(uintptr_t at, uintptr_t seg_lo, uintptr_t seg_hi, struct cie *cache,
                           uintptr_t *pc)
{
    struct rd r;
    uintptr_t end, p, range;
    if (!fde_head(at, seg_lo, seg_hi, cache, &r, &end, &p, &range))
        return 0;
    *pc = p;
    return range;
}

int cg_cfi_each_range(uintptr_t hdr, uintptr_t seg_lo, uintptr_t seg_hi,
                      void (*fn)(uintptr_t pc, uintptr_t len, void *ctx), void *ctx)
{
    struct rd r = {hdr, seg_lo, seg_hi, 0};
    uint8_t version = (uint8_t)rd_n(&r, 1);
    uint8_t ptr_enc = (uint8_t)rd_n(&r, 1);
    uint8_t count_enc = (uint8_t)rd_n(&r, 1);
    uint8_t table_enc = (uint8_t)rd_n(&r, 1);
    encoded(&r, ptr_enc, hdr);
    uint64_t n = count_enc == 0xff ? 0 : encoded(&r, count_enc, hdr);
    if (r.bad || version != 1 || !n || table_enc == 0xff)
        return -1;
    struct cie cache;
    memset(&cache, 0, sizeof cache);
    for (uint64_t i = 0; i < n && !r.bad; i++) {
        encoded(&r, table_enc, hdr);
        uintptr_t fde = encoded(&r, table_enc, hdr), pc = 0;
        uintptr_t len = r.bad ? 0 : fde_range(fde, seg_lo, seg_hi, &cache, &pc);
        if (len)
            fn(pc, len, ctx);
    }
    return r.bad ? -1 : 0;
}

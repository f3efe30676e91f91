/* The stack walk: from a sampled thread's registers, caller after caller,
 * with each module's unwind table (cfi.c), falling back to frame pointers
 * where a pc has no unwind information.
 *
 * It reads nothing but the stack (through struct cg_mem: bounds-checked,
 * or process_vm_readv, which reports unmapped memory instead of faulting;
 * from a copy taken with a sample, nothing past the copy: the walk ends
 * there, marked cut) and our own tables, takes no lock and calls no allocator, so it runs in a
 * signal handler.  It stops cleanly wherever the next frame cannot be
 * trusted: an unreadable word, a CFA that does not move up the stack, a
 * zero return address, an outermost frame, or no information and no
 * usable frame pointer (JIT or hand-written code).
 */
#include "unwind.h"

#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

static pid_t self_pid;
int cg_modules_stale;

void cg_unwind_after_fork(void)
{
    self_pid = 0;
}

/* The memory a walk reads, and whether it wanted a word past a copy. */
struct rdm {
    const struct cg_mem *m;
    int beyond;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* the vDSO's: async-signal-safe */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int rd(struct rdm *w, uintptr_t a, uintptr_t *v)
{
    const struct cg_mem *m = w->m;
    if (a >= m->lo && m->hi >= 8 && a <= m->hi - 8) {
        memcpy(v, m->copy ? m->copy + (a - m->lo) : (const unsigned char *)a, 8);
        return 1;
    }
    if (m->only) {
        w->beyond = 1;
        return 0;
    }
    if (a < 4096 || a > UINTPTR_MAX - 8)
        return 0;
    pid_t pid = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);
    if (!pid) {
        pid = (pid_t)syscall(SYS_getpid);
        __atomic_store_n(&self_pid, pid, __ATOMIC_RELAXED);
    }
    struct iovec local = {v, 8}, remote = {(void *)a, 8};
    return syscall(SYS_process_vm_readv, pid, &local, 1, &remote, 1, 0) == 8;
}

/* The unwind row for PC, or NULL: no module, no table, or a gap. */
static const struct cg_cfi_row *row_of(uintptr_t pc)
{
    int i = cg_module_of(pc);
    if (i < 0) {
        __atomic_store_n(&cg_modules_stale, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    unsigned n;
    const struct cg_module *m = &cg_modules(&n)[i];
    const struct cg_cfi *t = __atomic_load_n(&m->cfi, __ATOMIC_ACQUIRE);
    if (!t && m->eh_hdr)
        __atomic_store_n(&cg_modules_stale, 1, __ATOMIC_RELAXED);
    if (!t || pc < m->lo)
        return NULL;
    const struct cg_cfi_row *r = cg_cfi_find(t, pc - m->lo);
    return r && r->cfa != CG_CFA_NONE ? r : NULL;
}

/* rbp is unknown (a thread seen blocked in a system call: only its sp and
 * pc are known) and a frame needs it: look up the stack for the frame
 * record a frame-pointer function keeps -- a saved rbp pointing further up
 * the stack, then a return address into code we can unwind. */
static int guess_bp(struct rdm *m, uintptr_t sp, uintptr_t *bp)
{
    for (uintptr_t p = sp; p < sp + 4096; p += 8) {
        uintptr_t saved, ra;
        if (!rd(m, p, &saved) || !rd(m, p + 8, &ra))
            return 0;
        if ((saved == 0 || (saved > p && saved - p < (1u << 20) && !(saved & 7))) && ra > 4096 &&
            row_of(ra - 1)) {
            *bp = p;
            return 1;
        }
    }
    return 0;
}

/* A saved rbp read: 1 and *V, or 0.  A word the copy does not hold leaves
 * rbp unknown without ending the walk (its frames may not need it; rbp
 * may hold any value in code that does not keep frame pointers): not a
 * cut unless the walk later ends for want of it (*LOST). */
static int rd_bp(struct rdm *w, uintptr_t a, uintptr_t *v, int *lost)
{
    int before = w->beyond;
    if (rd(w, a, v))
        return 1;
    if (w->beyond && !before) {
        w->beyond = 0;
        *lost = 1;
    }
    return 0;
}

static unsigned walk(const struct cg_regs *regs, struct rdm *m, uintptr_t *out, unsigned max,
                     int *cut)
{
    uintptr_t pc = regs->pc, sp = regs->sp, bp = regs->bp, lr = regs->lr;
    int bp_known = regs->bp_known, lr_known = regs->lr_known, exact = 1, bp_lost = 0;
    /* 0: sp was taken from a frame record, which on AArch64 lies at the
     * bottom of its frame: below the caller's sp, not it */
    int sp_exact = 1;
    unsigned n = 0;
    *cut = 0;
    if (max == 0 || pc == 0)
        return 0;
    out[n++] = pc;
    for (;;) {
        if ((n & 63) == 0 && m->m->deadline && now_ns() > m->m->deadline) {
            *cut = 1; /* out of time (a signal handler's walk) */
            return n;
        }
        uintptr_t look = exact ? pc : pc - 1;
        const struct cg_cfi_row *row = row_of(look);
        uintptr_t cfa, ra, nbp = bp;
        int nbp_known = bp_known, in_lr = row && row->ra == CG_RA_REG;
        int kind = row ? row->cfa : CG_CFA_NONE;
        /* a pc with no rules where the thread stopped (AArch64's PLT
         * stubs have no FDE) whose link register returns into code with
         * rules: a stub that has saved nothing, its caller in x30 */
        if (!row && exact && CG_RA_IN_REG && lr_known && lr > 4096 && row_of(cg_strip_ra(lr) - 1)) {
            kind = CG_CFA_RSP;
            in_lr = 1;
        }
        /* sp from a frame record: the CFA from the record itself, where
         * the rules say the frame pointer was saved (x29 points at its
         * own frame record); without that, frame records again */
        if (!sp_exact && kind == CG_CFA_RSP)
            kind = !in_lr && row->rbp == CG_RBP_CFA && bp_known ? CG_CFA_RBP : CG_CFA_NONE;
        switch (kind) {
        case CG_CFA_OUTERMOST:
            return n;
        case CG_CFA_SIGNAL: {
            /* a signal handler returned here: the interrupted context is the
             * ucontext at sp, and its pc is exact, not a return address */
            uintptr_t npc, nsp;
            if (!rd(m, sp + CG_SIGFRAME_PC, &npc) || !rd(m, sp + CG_SIGFRAME_SP, &nsp) ||
                !rd(m, sp + CG_SIGFRAME_FP, &nbp) || npc == 0)
                return n;
            if (n == max) {
                *cut = 1;
                return n;
            }
            lr_known = CG_RA_IN_REG && rd(m, sp + CG_SIGFRAME_LR, &lr);
            out[n++] = npc;
            pc = npc;
            sp = nsp;
            bp = nbp;
            bp_known = 1;
            exact = 1;
            sp_exact = 1;
            continue;
        }
        case CG_CFA_RSP:
            cfa = sp + (intptr_t)(row ? row->cfa_off : 0);
            break;
        case CG_CFA_PLT:
            cfa = sp + (intptr_t)row->cfa_off + ((pc & 15) >= (uintptr_t)row->rbp_off ? 8 : 0);
            break;
        case CG_CFA_RBP:
        case CG_CFA_DEREF_RBP:
            if (!bp_known && !guess_bp(m, sp, &bp)) {
                m->beyond |= bp_lost;
                return n;
            }
            bp_known = 1;
            if (kind == CG_CFA_RBP && row->cfa != CG_CFA_RBP)
                cfa = bp - (intptr_t)row->rbp_off; /* (!sp_exact, above) */
            else if (kind == CG_CFA_RBP)
                cfa = bp + (intptr_t)row->cfa_off;
            else if (!rd(m, bp + (intptr_t)row->cfa_off, &cfa))
                return n;
            break;
        default:
            /* no unwind information: a frame-pointer frame, if rbp looks
             * like one (above sp, aligned) */
            if (!bp_known || bp < sp || (bp & 7) || !rd(m, bp, &nbp)) {
                m->beyond |= bp_lost && !bp_known;
                return n;
            }
            nbp_known = 1;
            cfa = bp + 16;
            row = NULL;
            in_lr = 0;
            break;
        }
        /* the return address: in the link register (only where the
         * thread stopped: a caller's is saved before its call), or saved
         * at CFA + ra_off (CFA - 8 on x86-64, and in a frame record) */
        if (in_lr) {
            if (!exact || !lr_known || cfa < sp)
                return n;
            ra = lr;
        } else if (cfa <= sp || !rd(m, cfa + (row ? row->ra_off : -8), &ra)) {
            return n;
        }
        ra = cg_strip_ra(ra);
        if (ra < 4096)
            return n;
        if (row) {
            switch (row->rbp) {
            case CG_RBP_SAME:
                break;
            case CG_RBP_CFA:
                nbp_known = rd_bp(m, cfa + (intptr_t)row->rbp_off, &nbp, &bp_lost);
                break;
            case CG_RBP_DEREF:
                nbp_known = bp_known && rd_bp(m, bp + (intptr_t)row->rbp_off, &nbp, &bp_lost);
                break;
            default:
                nbp_known = 0;
                break;
            }
        }
        if (n == max) {
            *cut = 1;
            return n;
        }
        out[n++] = ra - 1;
        pc = ra;
        sp_exact = !CG_RA_IN_REG || row || cfa == sp;
        sp = cfa;
        bp = nbp;
        bp_known = nbp_known;
        lr_known = 0;
        if (bp_known)
            bp_lost = 0;
        exact = 0;
    }
}

unsigned cg_unwind(const struct cg_regs *regs, const struct cg_mem *m, uintptr_t *out, unsigned max,
                   int *cut)
{
    struct rdm w = {m, 0};
    unsigned n = walk(regs, &w, out, max, cut);
    if (w.beyond && n)
        *cut = 1; /* the copy ended before the stack did */
    return n;
}

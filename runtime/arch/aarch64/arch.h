/* AArch64: what the portable runtime needs of the machine (the names of
 * runtime/arch/x86_64/arch.h, which says what each is). */
#ifndef CG_ARCH_H
#define CG_ARCH_H
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#define CG_ARCH_NAME "AArch64"

static inline uintptr_t cg_uc_pc(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.pc;
}
static inline uintptr_t cg_uc_sp(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.sp;
}
/* x29, the frame record's pointer: [x29] the caller's x29, [x29 + 8] the
 * return address, the same layout as an x86-64 rbp chain */
static inline uintptr_t cg_uc_fp(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.regs[29];
}

/* x30, the link register: a BL leaves the return address there */
static inline uintptr_t cg_uc_lr(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.regs[30];
}

/* The kernel's rt_sigframe at the sp a handler returns to: a siginfo,
 * then the ucontext. */
#define CG_SIGFRAME_PC (sizeof(siginfo_t) + offsetof(ucontext_t, uc_mcontext.pc))
#define CG_SIGFRAME_SP (sizeof(siginfo_t) + offsetof(ucontext_t, uc_mcontext.sp))
#define CG_SIGFRAME_FP (sizeof(siginfo_t) + offsetof(ucontext_t, uc_mcontext.regs) + 29 * 8)
#define CG_SIGFRAME_LR (sizeof(siginfo_t) + offsetof(ucontext_t, uc_mcontext.regs) + 30 * 8)

/* PERF_REG_ARM64_X29, _LR, _SP, _PC, in that (ascending) order */
#define CG_PERF_REGS_USER ((1ull << 29) | (1ull << 30) | (1ull << 31) | (1ull << 32))
#define CG_PERF_NREGS     4
#define CG_PERF_FP        0
#define CG_PERF_LR        1
#define CG_PERF_SP        2
#define CG_PERF_PC        3

/* .eh_frame read with AArch64's DWARF numbers: x29, sp, x30 */
#define CG_ARCH_CFI  1
#define CG_DW_FP     29
#define CG_DW_SP     31
#define CG_DW_RA     30
#define CG_RA_IN_REG 1

/* A return address saved signed (pointer authentication, -mbranch-
 * protection): XPACLRI strips the code added above the address.  It is
 * in the hint space: a no-op on a processor without pointer
 * authentication, where no address is signed. */
static inline uintptr_t cg_strip_ra(uintptr_t ra)
{
    register uintptr_t x30 __asm__("x30") = ra;
    __asm__("hint 7" : "+r"(x30)); /* xpaclri */
    return x30;
}

/* No add-to-memory instruction: an exclusive load/store pair (or LSE's
 * stadd), which a signal taken between the two makes retry, so a handler
 * counting into the same place cannot lose a count. */
static inline void cg_count_add(uint64_t *c, uint64_t w)
{
    __atomic_fetch_add(c, w, __ATOMIC_RELAXED);
}
#endif

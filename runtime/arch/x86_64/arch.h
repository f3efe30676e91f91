/* x86-64: what the portable runtime needs of the machine (besides the
 * entry stubs in mcount.S and the library-call stubs in libcalls.S).
 * Each architecture has its own runtime/arch/NAME/arch.h with the same
 * names; rt.h includes the one the Makefile's ARCH picks. */
#ifndef CG_ARCH_H
#define CG_ARCH_H
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#define CG_ARCH_NAME "x86-64"

/* The interrupted pc, stack pointer and frame pointer of a signal's context. */
static inline uintptr_t cg_uc_pc(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
}
static inline uintptr_t cg_uc_sp(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
}
static inline uintptr_t cg_uc_fp(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
}

/* The link register, where a call leaves its return address; 0: none
 * (x86-64's call pushes it). */
static inline uintptr_t cg_uc_lr(const ucontext_t *uc)
{
    (void)uc;
    return 0;
}

/* Where a signal handler returns (the kernel's rt_sigreturn frame at sp):
 * the offsets from that sp of the interrupted pc, sp and frame pointer. */
#define CG_SIGFRAME_PC (offsetof(ucontext_t, uc_mcontext.gregs) + REG_RIP * 8)
#define CG_SIGFRAME_SP (offsetof(ucontext_t, uc_mcontext.gregs) + REG_RSP * 8)
#define CG_SIGFRAME_FP (offsetof(ucontext_t, uc_mcontext.gregs) + REG_RBP * 8)

/* (none: the return address is on the stack) */
#define CG_SIGFRAME_LR 0

/* perf_event_open's user registers: the frame pointer, the stack pointer
 * and the pc, whose bits come in that (ascending) order in a sample; how
 * many, and where each is among them (CG_PERF_LR -1: not asked for). */
#define CG_PERF_REGS_USER ((1ull << 6) | (1ull << 7) | (1ull << 8)) /* bp, sp, ip */
#define CG_PERF_NREGS     3
#define CG_PERF_FP        0
#define CG_PERF_LR        (-1)
#define CG_PERF_SP        1
#define CG_PERF_PC        2

/* cfi.c reads this architecture's .eh_frame; 0: stacks are walked by
 * frame pointers alone.  Its DWARF register numbers: the frame pointer
 * (rbp), the stack pointer (rsp) and the return-address column. */
#define CG_ARCH_CFI 1
#define CG_DW_FP    6
#define CG_DW_SP    7
#define CG_DW_RA    16
/* 1: a call leaves the return address in a register (cg_uc_lr), which a
 * function saves (or not: a leaf) as its unwind rules say; 0: the call
 * pushes it, at CFA - 8 */
#define CG_RA_IN_REG 0

/* A return address as saved, without what pointer authentication adds
 * (none here). */
static inline uintptr_t cg_strip_ra(uintptr_t ra)
{
    return ra;
}

/* Adds W to *C in one instruction: a signal handler on the same thread
 * that counts into the same place cannot interleave with it. */
static inline void cg_count_add(uint64_t *c, uint64_t w)
{
    __asm__ volatile("addq %1, %0" : "+m"(*c) : "r"(w));
}
#endif

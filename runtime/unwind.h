/* Call stacks: unwind tables made from each module's .eh_frame (cfi.c),
 * the walk that uses them (unwind.c), and the per-thread call-path trees
 * that keep the stacks (stacks.c).  See docs/stacks.md. */
#ifndef CGPROF_UNWIND_H
#define CGPROF_UNWIND_H

#include "rt.h"

/* How a row finds the caller's frame (the canonical frame address, CFA:
 * the stack pointer just before the call that made this frame). */
enum {
    CG_CFA_NONE,      /* no unwind information: fall back to frame pointers */
    CG_CFA_RSP,       /* CFA = rsp + off */
    CG_CFA_RBP,       /* CFA = rbp + off */
    CG_CFA_PLT,       /* PLT: CFA = rsp + off + ((rip & 15) >= rbp_off ? 8 : 0) */
    CG_CFA_DEREF_RBP, /* stack realignment: CFA = *(rbp + off) */
    CG_CFA_SIGNAL,    /* a signal trampoline: the interrupted context is at rsp */
    CG_CFA_OUTERMOST, /* the return address is undefined: the stack ends here */
};
/* Where the caller's rbp is. */
enum {
    CG_RBP_SAME,  /* still in rbp */
    CG_RBP_CFA,   /* saved at CFA + rbp_off */
    CG_RBP_DEREF, /* saved at *(rbp + rbp_off) (realigned frames) */
    CG_RBP_LOST,  /* clobbered and not recoverable */
};
/* Where the return address is (x86-64: always at CFA - 8). */
enum {
    CG_RA_CFA, /* saved at CFA + ra_off */
    CG_RA_REG, /* still in the link register (a leaf, a prologue: CG_RA_IN_REG) */
};

/* One row: from `start` (an offset from the module's lowest address) up to
 * the next row's start, the rules are these. */
struct cg_cfi_row {
    uint32_t start;
    int32_t cfa_off;
    int16_t rbp_off; /* (rbp: the frame pointer, x29 on AArch64) */
    uint8_t cfa;
    uint8_t rbp;
    int16_t ra_off;
    uint8_t ra;
    uint8_t unused;
};

/* Rows are found by a binary search narrowed by a page index: first[p]
 * is the last row starting at or before offset p << CG_CFI_PAGE_SHIFT, so
 * a lookup searches only the few rows of its own 512 bytes of code.  A
 * walk by the sampler thread, every 10 ms, finds the rows out of cache:
 * on Lua's 20-40 frame stacks the whole-table search (15 steps, each a
 * cache miss) was most of a sample's unwinding (docs/runtime.md). */
#define CG_CFI_PAGE_SHIFT 9
struct cg_cfi {
    size_t bytes;    /* mapped size of this block */
    uint32_t *first; /* the page index (NULL: none, search every row) */
    uint32_t npages; /* entries of first[] */
    uint32_t nrows;
    struct cg_cfi_row rows[];
};

/* Builds the unwind table of a module whose code lies in [LO, HI) and
 * whose .eh_frame_hdr is at EH_HDR, inside the mapped segment [SEG_LO,
 * SEG_HI) (all run-time addresses).  NULL when it has none usable.  Reads
 * the module's memory: not for signal handlers. */
struct cg_cfi *cg_cfi_build(uintptr_t lo, uintptr_t hi, uintptr_t eh_hdr, uintptr_t seg_lo,
                            uintptr_t seg_hi) CG_HIDDEN;
/* Calls FN with the code range [pc, pc + len) of each FDE listed in the
 * .eh_frame_hdr at HDR (inside [SEG_LO, SEG_HI)): each function, and each
 * of its split parts (f.cold), with unwind information.  -1 when the
 * header has no usable table. */
int cg_cfi_each_range(uintptr_t hdr, uintptr_t seg_lo, uintptr_t seg_hi,
                      void (*fn)(uintptr_t pc, uintptr_t len, void *ctx), void *ctx) CG_HIDDEN;
/* The row covering OFF, or NULL. */
const struct cg_cfi_row *cg_cfi_find(const struct cg_cfi *t, uintptr_t off) CG_HIDDEN;

/* Memory a walk reads: [lo, hi) readable directly (at `copy` if set, else
 * in place); anything else, unless `only`, through process_vm_readv, which
 * fails cleanly on unmapped memory.  With `only` (a copy of the stack taken
 * at the sample, walked later), nothing outside the copy is read: the
 * stack as it is by then is another moment's, and a walk that needs a
 * word past the copy ends there, marked cut. */
struct cg_mem {
    uintptr_t lo, hi;
    const unsigned char *copy;
    int only;
    /* CLOCK_MONOTONIC ns past which the walk stops, marked cut (0: none):
     * a walk in a thread's signal handler takes at most a quarter of the
     * sampling period, so that a deep stack sampled fast cannot keep the
     * thread in its handler (walk_budget_ns) */
    uint64_t deadline;
};

struct cg_regs {
    uintptr_t pc, sp, bp;
    int bp_known; /* 0: rbp unknown (a thread blocked in a system call) */
    uintptr_t lr; /* the link register (CG_RA_IN_REG) */
    int lr_known;
};

/* Set (from a walk, in a signal handler) when a pc lay in no known module
 * or in one whose table is not built yet: the sampler thread then takes a
 * module snapshot at its next tick instead of within 100 ms. */
extern int cg_modules_stale CG_HIDDEN;

/* Frames kept per stack at most; deeper stacks are cut (marked), as are
 * stacks walked from a copy that ends before the stack does. */
#define CG_STACK_MAX 2048
/* A frame value standing for "cut here": the outermost entry of a stack
 * that had more than CG_STACK_MAX frames, or more than its copy held. */
#define CG_FRAME_CUT ((uintptr_t)1)

/* Walks from REGS; writes frames leaf first into OUT (up to MAX): the pc,
 * then each caller's return address minus one.  Returns the number of
 * frames; *CUT = 1 if the walk stopped at MAX with frames left, or at the
 * end of M's copy (M->only).
 * Async-signal-safe: reads only M and the unwind tables. */
unsigned cg_unwind(const struct cg_regs *regs, const struct cg_mem *m, uintptr_t *out, unsigned max,
                   int *cut) CG_HIDDEN;

/* stacks.c */
extern int cg_stacks_on CG_HIDDEN; /* CGPROF_STACKS (default 1) */
/* CGPROF_STACK_SYNC (default 3): 0, perf events' stacks from their copies
 * only; 1, those deeper than their copy walked by their threads; 2, a time
 * event's user-mode samples taken by their threads (sampler.c, "handler
 * events"); 3, those of the threads whose stacks outgrew their copies
 * (sampler.c, go_deep) */
extern int cg_stacks_sync CG_HIDDEN;
extern int cg_kernel_frames CG_HIDDEN; /* CGPROF_KERNEL: kernel frames in the stacks (default 0) */
/* Records one sampled stack of this thread (signal handler) or of the
 * sampler (its own tree).  Returns 0, or -1 if it could not be kept. */
struct cg_stree;
struct cg_stree *cg_stree_acquire(void) CG_HIDDEN;
void cg_stree_release(struct cg_stree *t) CG_HIDDEN;
uintptr_t *cg_stree_scratch(struct cg_stree *t) CG_HIDDEN;
/* Adds a stack (frames leaf first) with WEIGHT samples; returns its leaf
 * node, or UINT32_MAX if it could not be kept (counted as lost). */
uint32_t cg_stree_add(struct cg_stree *t, const uintptr_t *frames, unsigned n, int cut,
                      uint64_t weight) CG_HIDDEN;
/* The node for a stack (frames leaf first, under a cut marker if CUT),
 * added if new, without counting a sample there: UINT32_MAX if it could
 * not be kept. */
uint32_t cg_stree_path(struct cg_stree *t, const uintptr_t *frames, unsigned n, int cut) CG_HIDDEN;
/* Adds WEIGHT more samples to the stack ending at node LEAF (and to the
 * cut samples if CUT). */
void cg_stree_take(struct cg_stree *t, uint32_t leaf, int cut, uint64_t weight) CG_HIDDEN;
void cg_stree_count(struct cg_stree *t, uint32_t leaf, uint64_t weight) CG_HIDDEN;
void cg_stacks_after_fork(void) CG_HIDDEN;
/* Samples a thread in its own signal handler, from its ucontext. */
void cg_stack_sample_uc(void *ucontext, uint64_t weight) CG_HIDDEN;
/* Walks this thread's stack from its UCONTEXT (in a signal handler) into
 * its own tree, without counting a sample: the leaf node (UINT32_MAX: not
 * kept), its tree, the frames walked (leaf first) and whether they were
 * cut.  The sampler counts the sample there (sampler.c). */
uint32_t cg_stack_path_uc(void *ucontext, struct cg_stree **tree, const uintptr_t **frames,
                          unsigned *n, int *cut) CG_HIDDEN;
/* The thread's stack bounds, for walks in its handler (0, 0: unknown). */
void cg_stack_bounds_init(void) CG_HIDDEN;

/* A node of a call-path tree: a frame under its caller's node. */
struct cg_snode {
    uintptr_t pc;    /* CG_FRAME_CUT for the node standing for cut frames */
    uint32_t parent; /* UINT32_MAX: an outermost frame */
    uint32_t unused;
    uint64_t count; /* samples whose stack ends here */
};
/* Merges every thread's tree into one, for the writer; 0 or -1.  The
 * merged tree (a parent before its children) is then read with
 * cg_stacks_merged until cg_stacks_merged_free. */
int cg_stacks_merge(void) CG_HIDDEN;
const struct cg_snode *cg_stacks_merged(uint64_t *n, uint64_t *cut, uint64_t *lost) CG_HIDDEN;
void cg_stacks_merged_free(void) CG_HIDDEN;
void cg_unwind_after_fork(void) CG_HIDDEN;

#endif

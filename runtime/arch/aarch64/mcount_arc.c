/* The count for AArch64's _mcount (mcount.S, which finds frompc in the
 * frame record and branches here with selfpc still the return address).
 *
 * The fast path is arch/x86_64/mcount.S's FAST in C: the same hash and
 * home slot as runtime/table.c, probing on with the generation's budget,
 * and the count added by cg_count_add (an exclusive pair, which a signal
 * handler on this thread counting meanwhile makes retry).  Anything else
 * -- a new arc, a new thread, the budget spent -- goes to cg_arc_slow.
 */
#include "rt.h"

void cg_mcount_arc(uintptr_t frompc) CG_HIDDEN;

void cg_mcount_arc(uintptr_t frompc)
{
    uintptr_t selfpc = (uintptr_t)__builtin_return_address(0);
    if (!__atomic_load_n(&cg_recording, __ATOMIC_RELAXED))
        return;
    struct cg_slot *slots = __atomic_load_n(&cg_tls.slots, __ATOMIC_RELAXED);
    struct cg_gen *g = (struct cg_gen *)((char *)slots - offsetof(struct cg_gen, slots));
    uint64_t bmask = g->bmask;
    uint64_t off = ((((uint64_t)frompc * CG_ARC_MUL) ^ selfpc) * CG_ARC_MUL >> 27) & bmask;
    for (;;) {
        struct cg_slot *s = (struct cg_slot *)((char *)slots + off);
        uintptr_t self = __atomic_load_n(&s->self, __ATOMIC_RELAXED);
        if (self == selfpc && __atomic_load_n(&s->from, __ATOMIC_RELAXED) == frompc) {
            cg_count_add(&s->count, 1);
            return;
        }
        if (self == 0 || __atomic_sub_fetch(&g->budget, 1, __ATOMIC_RELAXED) == 0)
            break;
        off = (off + sizeof *s) & bmask;
    }
    cg_arc_slow(frompc, selfpc);
}

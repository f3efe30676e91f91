/* Basic-block counts (gmon.out tag 2) attached to symbols, as gprof -l attaches them.
 *
 * gcc no longer emits these counts (its old -a option did), but gprof
 * still reads them: at line level each count is attached to the line
 * symbol holding its address, up to ten blocks per symbol, and they show
 * in -A (annotated source) and -C (execution counts).
 */
#include "bbcount.h"

#include <stdlib.h>

struct bb_slots *bb_attach(const struct symtab *st, const struct gmon_data *gd)
{
    struct bb_slots *s = calloc(st->n ? st->n : 1, sizeof *s);
    for (size_t k = 0; s && k < gd->nbbs; k++) {
        long j = symtab_lookup(st, gd->bbs[k].addr);
        if (j < 0)
            continue;
        for (int i = 0; i < BB_PER_SYM; i++)
            if (!s[j].addr[i] || s[j].addr[i] == gd->bbs[k].addr) {
                s[j].addr[i] = gd->bbs[k].addr;
                s[j].calls[i] += gd->bbs[k].count;
                break;
            }
    }
    return s;
}

/* Basic-block counts (gmon.out tag 2) attached to symbols, as gprof -l attaches them. */
#ifndef CGPROF_BBCOUNT_H
#define CGPROF_BBCOUNT_H

#include "gmon.h"
#include "symtab.h"

#define BB_PER_SYM 10 /* gprof keeps at most this many blocks per symbol */

/* The blocks of one symbol: addr[i] (0 ends the list) ran calls[i] times. */
struct bb_slots {
    uint64_t addr[BB_PER_SYM];
    uint64_t calls[BB_PER_SYM];
};

/* One bb_slots per symbol of ST: each count of GD goes to the symbol
 * holding its address, summed with an earlier count of the same block,
 * else into the symbol's next free slot (dropped when there is none).
 * NULL when out of memory. */
struct bb_slots *bb_attach(const struct symtab *st, const struct gmon_data *gd);

#endif

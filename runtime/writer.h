/* Internal interface between the profile writer (write.c) and the layouts
 * of the two file formats it can write. */
#ifndef CGPROF_WRITER_H
#define CGPROF_WRITER_H

#include "rt.h"

/* The keys of all threads' tables of one kind, summed: an open-addressing
 * table in mapped memory.  Each key is summed over every generation of
 * every thread's table. */
struct merged {
    struct cg_slot *arcs; /* self == 0: empty */
    uint64_t cap, n;
    uint64_t total; /* sum of all counts */
    size_t bytes;
};

/* An output buffer; with cap == 0 the layout only measures (len). */
struct out {
    char *buf;
    size_t len, cap;
};

void cg_put(struct out *o, const void *p, size_t n) CG_HIDDEN;
uint64_t cg_sample_rate(uint64_t samples) CG_HIDDEN;

/* How many modules and thread records the file holds: fixed before the
 * layout runs (twice: to measure, then to fill), since another thread may
 * add to either meanwhile. */
struct frozen {
    unsigned nmods, nthreads;
    uint64_t narcs_noted; /* cg_arcs_frozen's */
};

/* Arc counts noted when code they touch was unmapped (write.c): the part
 * of the count up to COUNT was made before generation GEN began. */
struct cg_frozen_arc {
    uintptr_t from, self;
    uint64_t count;
    unsigned gen;
};
const struct cg_frozen_arc *cg_arcs_frozen(uint64_t *n) CG_HIDDEN;

/* The cgprof profile format (docs/profile-format.md). */
void cg_layout_cgprof(struct out *o, const struct merged *arcs, const struct merged *samples,
                      uint64_t lost_calls, const struct frozen *fz) CG_HIDDEN;

#endif

/* Source lines of any address of a profile: one resolver for the
 * exports and --json, reading each module's DWARF once, when first asked. */
#ifndef CGPROF_LINEMAP_H
#define CGPROF_LINEMAP_H

#include "cgdata.h"
#include "dwinfo.h"

#include <stdint.h>

struct linemap {
    const struct cgdata *d; /* a cgprof profile, or NULL: gmon.out of PROG */
    const char *prog;
    struct dwi *dw;       /* per module (gmon.out: one), read when first asked */
    unsigned char *state; /* per module: 0 not read, 1 read, 2 none */
    unsigned flags;       /* dwi_load's flags (DWI_INLINE for linemap_inline); set before use */
    size_t n;
};

/* For D's modules, or (D NULL) for the executable PROG.  0, or -1. */
int linemap_init(struct linemap *lm, const struct cgdata *d, const char *prog);
void linemap_free(struct linemap *lm);

/* The source line of PC, an address in the report's symbol table (a
 * cgprof profile's modules as modmap lays them out; gmon.out's link-time
 * addresses): 1 with *FILE and *LINE set, or 0 when not known. */
int linemap_find(struct linemap *lm, uint64_t pc, const char **file, unsigned *line);

/* The inlined copies holding PC (as linemap_find's), innermost first, at
 * most MAX in OUT; their number, 0 without DWARF or outside inlined code.
 * Needs lm->flags with DWI_INLINE. */
size_t linemap_inline(struct linemap *lm, uint64_t pc, const struct dwi_inl **out, size_t max);

/* The line table of module K (the index in D's modules; 0 for gmon.out),
 * read now if it was not; NULL if it has none (or is the vDSO, an image
 * kept in the profile, or libcgprof itself). */
const struct dwi *linemap_module(struct linemap *lm, size_t k);

#endif

/* report --inline: a cgprof profile seen with the functions inlined into
 * its sampled code as functions of their own (see inlview.c). */
#ifndef CGPROF_INLVIEW_H
#define CGPROF_INLVIEW_H

#include "callgraph.h"
#include "cgdata.h"
#include "gmon.h"
#include "symtab.h"

#include <stddef.h>

#define INLVIEW_SUFFIX " [inlined]" /* after an inlined function's name */

struct inl_view {
    struct symtab st;         /* the profile's symbols, then one per inlined function */
    struct cg_pc_sample *pcs; /* each sample on its innermost inlined function */
    size_t npcs;
    struct gmon_data gd; /* the arcs, those called from inlined code moved there */
    struct cgdata d;     /* the profile with each stack frame expanded */
    size_t ninl;         /* inlined functions added (symbols st.n - ninl ...) */
    char **names;        /* their names (ninl) */
};

/* Builds V from profile D, its symbols ST (modmap's table), its arcs GD
 * and samples PCS.  A frame or sample at a pc inside code inlined into
 * its function becomes that function's frame with one frame under it per
 * inlined function, outermost first, as `export --inline` makes them; a
 * call made from inlined code is the innermost inlined function's that
 * the stacks or samples have.  Nothing changes where there is no DWARF.
 * V's parts point into D, ST and GD, which must outlive it.  0, or -1
 * (out of memory) with a message in ERR. */
int inlview_build(struct inl_view *v, const struct cgdata *d, const struct symtab *st,
                  const struct gmon_data *gd, const struct cg_pc_sample *pcs, size_t npcs,
                  char *err, size_t errsz);
void inlview_free(struct inl_view *v);

#endif

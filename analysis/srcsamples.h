/* Samples of a cgprof profile by source line, in every module with debugging information. */
#ifndef CGPROF_SRCSAMPLES_H
#define CGPROF_SRCSAMPLES_H

#include "cgdata.h"

#include <stddef.h>
#include <stdint.h>

/* The samples that fell on one source line of one module. */
struct src_line {
    const char *module; /* base name of the module's file */
    const char *file;   /* full path of the source file */
    unsigned line;
    uint64_t samples;
};

struct src_lines {
    struct src_line *v; /* most samples first, then by module, file and line */
    size_t n;
};

/* Looks up the line of every sample of D in its module's DWARF (the
 * file's own or its separate debug file); modules without any, the vDSO
 * and libcgprof itself are left out.  0, or -1 when out of memory. */
int src_lines_build(struct src_lines *out, const struct cgdata *d);
void src_lines_free(struct src_lines *l);

/* The calls counted from one source line of a caller to a callee: the
 * line of the call instruction (the arc's return address - 1). */
struct src_site {
    int caller, callee; /* symbol indices (= call graph nodes) */
    const char *file;   /* owned by the linemap it was built with */
    unsigned line;
    uint64_t count;
};

struct src_sites {
    struct src_site *v; /* by caller, callee, then most calls first */
    size_t n;
};

struct symtab;
struct linemap;
/* The call sites of D's counted arcs, symbolized with ST (modmap's
 * table), their lines from LM.  Arcs whose caller has no line are left
 * out.  0, or -1 out of memory. */
int src_sites_build(struct src_sites *out, const struct cgdata *d, const struct symtab *st,
                    struct linemap *lm);
void src_sites_free(struct src_sites *s);
/* The first site of CALLER -> CALLEE in S and how many there are. */
const struct src_site *src_sites_of(const struct src_sites *s, int caller, int callee, size_t *n);

#endif

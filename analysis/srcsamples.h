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

#endif

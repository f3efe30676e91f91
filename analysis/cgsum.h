/* Summing cgprof profiles and writing one back out (analysis/cgsum.c). */
#ifndef CGPROF_CGSUM_H
#define CGPROF_CGSUM_H

#include "cgdata.h"

#include <stdio.h>

/* Adds ADD's counts to SUM, module by module (path and build-id).  ADD is
 * left only fit for cgdata_free.  0, or -1 with the reason in ERR
 * (profiles of different programs, or of different events). */
int cgdata_add(struct cgdata *sum, const char *sum_name, struct cgdata *add, const char *add_name,
               char *err, size_t errsz);

/* Writes D as a cgprof profile (docs/profile-format.md) to F. */
int cgdata_write(const struct cgdata *d, FILE *f);

#endif

/* Printer of the analyzed profile as JSON (schema: docs/json-schema.md). */
#ifndef CGPROF_JSON_H
#define CGPROF_JSON_H

#include "callgraph.h"
#include "cgdata.h"
#include "stacks.h"
#include "srcsamples.h"

#include <stdio.h>

#define JSON_SCHEMA_VERSION 2

/* Prints G as one JSON document.  LOST_CALLS is the runtime's count of
 * calls it could not record; PROG names the executable; THREADS (N of
 * them, or none) are a cgprof profile's per-thread totals; STACKS, its
 * sampled stacks (or NULL); LINES (or NULL) its samples by source line;
 * LM (or NULL), a linemap of CD with DWI_INLINE, gives each stack frame
 * its inline chain. */
struct linemap;
void json_print(FILE *out, const struct callgraph *g, const char *prog, uint64_t lost_calls,
                const struct cgdata_thread *threads, size_t nthreads, const struct stacks *stacks,
                const struct src_lines *lines, const struct src_sites *sites,
                const struct cgdata *cd, struct linemap *lm);

#endif

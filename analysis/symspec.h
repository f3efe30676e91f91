/* gprof's symbol specifications with a file or a line (FILE:FUNC, FILE:LINE, FILE, LINE). */
#ifndef CGPROF_SYMSPEC_H
#define CGPROF_SYMSPEC_H

#include "callgraph.h"
#include "symtab.h"

/* Whether SPEC names a file or a line (a ':' or a '.' in it, or a
 * leading digit), and so needs source positions; else it is a name. */
int symspec_positional(const char *spec);

/* Sets bit 1 << table in BITS[i] for each symbol i of POS (source
 * positions: full path in `file`, `line`; in address order) that the N
 * SPECS put in that table, the way gprof does: runs of matching symbols
 * mark address ranges, and a symbol is in when its start lies in the
 * range starting nearest below it (so at line level a function's own
 * range can take in its lines). */
void symspec_apply(const struct symtab *pos, const struct cg_spec *specs, size_t n, unsigned *bits);

#endif

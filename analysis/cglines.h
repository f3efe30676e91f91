/* gprof -l and -A for a cgprof profile: source positions of the symbols of
 * modmap's table, module by module. */
#ifndef CGPROF_CGLINES_H
#define CGPROF_CGLINES_H

#include "cgdata.h"
#include "symtab.h"

/* The mask that turns an address of modmap's table into the address in
 * its module (what gprof -l shows after "@"). */
uint64_t cglines_addr_mask(void);

/* Builds in OUT the line-level table of gprof -l for D, whose modules
 * MST (modmap's table) lays out: each module with line information is
 * replaced by lines_symtab's symbols for it (its function symbols plus one
 * per run of code from one line; those of a library named "name
 * [libfoo.so]" as its functions are), shifted into its slice; the other
 * modules' symbols, the vDSO's and libcgprof's are kept as they are,
 * without positions.  Modules whose line information cannot be read are
 * said in MSG (return 2).  0, 2, or -1 out of memory. */
int cglines_symtab(struct symtab *out, const struct symtab *mst, const struct cgdata *d, char *msg,
                   size_t msgsz);

/* MST's symbols one for one, each function with the full path of its
 * source file and its line where its module's DWARF has them (gprof -A
 * without -l).  0, or -1 out of memory. */
int cglines_positions(struct symtab *out, const struct symtab *mst, const struct cgdata *d);

#endif

/* The line-level symbol table of gprof -l: one symbol per run of code from one source line. */
#ifndef CGPROF_LINES_H
#define CGPROF_LINES_H

#include "symtab.h"

/* Builds in OUT the symbols gprof -l analyzes for the executable PATH:
 * FUNCS (its function symbols, from symtab_load) plus one symbol for each
 * run of .text whose line, file and function (inlined ones included)
 * stay the same, named for that function.  Every symbol with line
 * information has its full source path in `file` and its line in `line`.
 * Returns 0; 1 when PATH has no line information, 2 when some or all of
 * it could not be read, with the reason in MSG (OUT then holds what could
 * be read, at least FUNCS' symbols); -1 with a message in MSG. */
int lines_symtab(struct symtab *out, const struct symtab *funcs, const char *path, char *msg,
                 size_t msgsz);

/* FUNCS' symbols, one for one, each with the full path of its source
 * file and its line (gprof -A without -l).  0, or -1 with a message. */
int lines_positions(struct symtab *out, const struct symtab *funcs, const char *path, char *msg,
                    size_t msgsz);

#endif

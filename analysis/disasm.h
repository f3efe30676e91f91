/* The static call graph: direct calls found by disassembling the text with capstone (gprof -c). */
#ifndef CGPROF_DISASM_H
#define CGPROF_DISASM_H

#include "callgraph.h"
#include "gmon.h"
#include "symtab.h"

#include <stddef.h>

/* Finds the direct calls of each function of ST in the .text of the ELF
 * file PATH, keeping those gprof -c keeps (see disasm.c), in address
 * order of the caller, then of the call.  Sets *OUT (malloc'd, the
 * caller frees it) and *N.  Returns 0; -1 with a message in ERR when the
 * file cannot be read or capstone is unavailable; 1 with a warning in ERR
 * (and no calls) when the architecture is not x86. */
int disasm_static_calls(const char *path, const struct symtab *st, const struct gmon_data *gd,
                        struct cg_static_call **out, size_t *n, char *err, size_t errsz);

#endif

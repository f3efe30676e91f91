/* Module map: a cgprof profile's modules laid out in one address space
 * for the analysis (see modmap.c). */
#ifndef CGPROF_MODMAP_H
#define CGPROF_MODMAP_H

#include "callgraph.h"
#include "cgdata.h"
#include "gmon.h"
#include "symtab.h"

#include <stdio.h>

struct modmap {
    struct symtab st;             /* every module's functions, in slices */
    struct gmon_data gd;          /* the arcs, in the same addresses */
    struct cg_pc_sample *samples; /* the samples, likewise */
    size_t nsamples;
    char **names;
    size_t nnames;
};

/* With MODMAP_LIB_NO_LINES among the flags, the DWARF of shared
 * libraries is not read: their functions get no source file.  The text
 * report passes it: reading libc6-dbg's line tables took about 190 of
 * the 365 ms of a report of SQLite's speedtest1 profile, for files it
 * named nowhere. */
#define MODMAP_LIB_NO_LINES 64u
/* Builds MM from D, reading each module's symbols (SYMTAB_* flags);
 * warnings (missing symbols, changed files) go to WARN.  0, or -1 with a
 * message in ERR. */
int modmap_build(struct modmap *mm, const struct cgdata *d, unsigned sym_flags, FILE *warn,
                 char *err, size_t errsz);
void modmap_free(struct modmap *mm);
/* The GNU build-id of an ELF file, or 0 bytes. */
size_t modmap_file_build_id(const char *path, unsigned char *out, size_t cap);

/* The address in MM's symbol table of ADDR in D's module MODULE (samples,
 * arcs and stack frames alike); 0, "[unknown]", for no known module. */
uint64_t modmap_pc(const struct cgdata *d, uint32_t module, uint64_t addr);
/* The pc standing for PC in ST (modmap's table): PC itself when a symbol
 * holds it, else its module's own entry "[libfoo.so]" (slice 0's being
 * "[unknown]").  Samples, arcs and stack frames all go through it, so no
 * pc is left without a function and none is named after a neighbour. */
uint64_t modmap_owned(const struct symtab *st, uint64_t pc);
/* The same for an arc's caller pc, a return address: after a call that is
 * the last instruction of its function (a noreturn callee) it lies just
 * past the function's end, so the call's last byte (PC - 1) names it. */
uint64_t modmap_owned_return(const struct symtab *st, uint64_t pc);
/* The module name PC's functions carry after theirs, "NAME [TAG]"
 * ("libc.so.6", "vdso"): NULL for the executable's pcs and for no module. */
const char *modmap_tag(const struct cgdata *d, uint64_t pc);
/* The other way: the module and address there of PC in MM's symbol
 * table.  0, or -1 for a pc in no module ("[unknown]"). */
int modmap_addr(const struct cgdata *d, uint64_t pc, uint32_t *module, uint64_t *addr);
/* -c: the direct calls of D's main executable (as disasm_static_calls
 * finds them in its file), as symbol indices of MM.  Returns as
 * disasm_static_calls does. */
int modmap_static_calls(const struct modmap *mm, const struct cgdata *d, unsigned sym_flags,
                        struct cg_static_call **out, size_t *n, char *err, size_t errsz);

#endif

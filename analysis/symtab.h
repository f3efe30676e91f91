/* Function symbols of an executable, read with libelf, sorted for pc lookup. */
#ifndef CGPROF_SYMTAB_H
#define CGPROF_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

/* One function.  It owns the addresses [addr, end_addr]: end_addr is the
 * next symbol's address minus one (the last symbol ends with .text). */
struct symtab_sym {
    uint64_t addr;
    uint64_t end_addr;
    const char *name;
    const char *file; /* source file (base name) of a static function, or NULL */
    int is_static;    /* a local symbol ('t' in nm terms) */
    int is_func;      /* STT_FUNC or STT_GNU_IFUNC */
    int is_runtime;   /* libcgprof's own code (cgprof profiles): left out like mcount */
    unsigned line;    /* line-level tables (lines.c): the source line, file its full path */
    size_t order;     /* position in the ELF symbol table (lines.c: after all of them) */
};

/* Symbols sorted by address, one per address (aliases collapsed). */
struct symtab {
    struct symtab_sym *syms;
    size_t n;
    char *strings; /* storage for all names */
    int debug;     /* line information: 0 none, 1 read, 2 read in part (see note) */
    char *note;    /* what of the debugging information could not be read, or NULL */
};

/* Loads the function symbols of PATH (.symtab, else .dynsym).  Returns 0,
 * or -1 with a message naming the file in ERR. */
int symtab_load(struct symtab *t, const char *path, char *err, size_t errsz);

/* The same, leaving out some symbols (their addresses then belong to the
 * symbol before them): */
#define SYMTAB_NO_STATIC 1u /* local symbols (gprof -a) */
/* Every local function name, not only those gprof takes (it refuses
 * names like "msort_with_tmp.part.0"): for libraries in a cgprof
 * profile, where nothing has to match gprof. */
#define SYMTAB_ANY_NAME 2u
/* A symbol with a size owns only its own bytes, not those up to the next
 * symbol (which then belong to no symbol): for libraries in a cgprof
 * profile, whose stripped .dynsym leaves local functions unnamed. */
#define SYMTAB_SIZES 16u
/* No DWARF read (static functions get no file): for gprof -l, whose
 * line-level table (lines.c) reads it itself. */
#define SYMTAB_NO_LINES 4u
/* PLT stubs named "malloc@plt" (plt.c), as perf names them: for cgprof
 * profiles; gprof gives their time to _init. */
#define SYMTAB_PLT 8u
int symtab_load_flags(struct symtab *t, const char *path, unsigned flags, char *err, size_t errsz);
void symtab_free(struct symtab *t);

/* The index of the symbol whose range holds PC, or -1. */
long symtab_lookup(const struct symtab *t, uint64_t pc);

#endif

/* Source lines and function ranges of one module from its DWARF (elfutils libdw), sorted once. */
#ifndef CGPROF_DWINFO_H
#define CGPROF_DWINFO_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#define DWI_NO_FILE UINT32_MAX

/* From addr up to the next row's addr, the code is from line `line` of
 * file `file` (an index into files), or has no line information when
 * file is DWI_NO_FILE. */
struct dwi_row {
    uint64_t addr;
    uint32_t file;
    uint32_t line;
};

/* One address range of a function, or of a function inlined into
 * another, from its DW_TAG_subprogram, _inlined_subroutine or
 * _entry_point entry.  order is the entry's position in the DWARF. */
struct dwi_func {
    uint64_t lo, hi;
    const char *name;
    uint32_t order;
    int is_linkage; /* name is the linkage name (binutils' sense: C names are) */
};

/* One address range of an inlined copy (DW_TAG_inlined_subroutine, with
 * DWI_INLINE): the function inlined, where it was inlined (the line of
 * the call in the code it was inlined into) and its nesting depth among
 * the unit's entries (deeper is further in). */
struct dwi_inl {
    uint64_t lo, hi;
    const char *name;
    const char *call_file; /* NULL when not known */
    uint32_t call_line;
    uint32_t depth;
};

struct dwi {
    struct dwi_row *rows; /* sorted by addr, one row per addr */
    size_t nrows;
    char **files; /* full path names, as the line tables give them */
    size_t nfiles;
    struct dwi_func *funcs; /* sorted by lo (only with DWI_FUNCS) */
    size_t nfuncs;
    struct dwi_inl *inl; /* sorted by lo (only with DWI_INLINE) */
    uint64_t *inl_reach; /* per inl entry: the highest hi of it and those before */
    size_t ninl;
    char *names;      /* storage for the function names */
    char *debug_path; /* the separate debug file read, or NULL */
};

#define DWI_FUNCS  1u /* also the function ranges (for line-level reports) */
#define DWI_INLINE 2u /* also the inlined copies' ranges and call sites */

/* Reads the DWARF of ELF (the file at PATH) or, when it has none, of its
 * separate debug file (build-id under /usr/lib/debug/.build-id, else
 * .gnu_debuglink next to PATH, in its .debug/ or under /usr/lib/debug).
 * Returns 0 when every unit was read, 1 when there is no debug
 * information, 2 when some or all of it could not be read (MSG says what,
 * naming the file; D holds what could be read), -1 when out of memory. */
int dwi_load(struct dwi *d, Elf *elf, const char *path, unsigned flags, char *msg, size_t msgsz);
void dwi_free(struct dwi *d);

/* The row whose range holds ADDR, or NULL when ADDR has no line information. */
const struct dwi_row *dwi_line(const struct dwi *d, uint64_t addr);

/* The inlined copies holding ADDR, innermost first, at most MAX of them
 * in OUT; their number (0 when ADDR is in no inlined code). */
size_t dwi_inline_chain(const struct dwi *d, uint64_t addr, const struct dwi_inl **out, size_t max);

#endif

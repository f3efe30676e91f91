/* Opening an ELF file with libelf, shared by every reader of executables. */
#ifndef CGPROF_ELFFILE_H
#define CGPROF_ELFFILE_H

#include <libelf.h>
#include <stddef.h>

/* Opens PATH as ELF and calls FN(elf, CTX); returns FN's result, or -1
 * with "PATH: what is wrong" in ERR when the file cannot be read as ELF. */
int elffile_with(const char *path, int (*fn)(Elf *elf, void *ctx), void *ctx, char *err,
                 size_t errsz);

#endif

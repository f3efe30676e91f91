/* Names for the PLT stubs of an executable or library, "malloc@plt", as perf and objdump give them.
 */
#ifndef CGPROF_PLT_H
#define CGPROF_PLT_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

struct plt_name {
    uint64_t addr; /* the stub's first byte */
    char *name;    /* "FUNC@plt", malloc'd */
};

/* The named stubs of ELF (.plt or .plt.sec by .rela.plt, .plt.got by the
 * GOT slot each jumps through), in *OUT (malloc'd; free each name and
 * the array).  Returns their number; 0 when there are none or on any
 * inconsistency (a stub is then simply not named). */
size_t plt_names(Elf *elf, struct plt_name **out);

#endif

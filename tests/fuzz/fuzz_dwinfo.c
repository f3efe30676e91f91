/* libFuzzer target for the DWARF reader (analysis/dwinfo.c).
 *
 * Build: make fuzz, then build/fuzz_dwinfo tests/fuzz/corpus-dwarf
 *
 * The input is an ELF file.  Whatever its debugging information holds,
 * reading it either succeeds or says what it could not read, and what was
 * read is well formed: line rows strictly ascending with known files,
 * function ranges sorted and non-empty.  Anything else aborts.
 */
#include "dwinfo.h"

#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* no separate debug files from the machine's /usr/lib/debug */
    setenv("CGPROF_DEBUG_DIR", "/nonexistent-cgprof-fuzz", 1);
    if (elf_version(EV_CURRENT) == EV_NONE)
        abort();
    char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    Elf *elf = elf_memory(copy, size);
    if (elf && elf_kind(elf) == ELF_K_ELF) {
        struct dwi d;
        char msg[512] = "";
        int rc = dwi_load(&d, elf, "/nonexistent-cgprof-fuzz/f", DWI_FUNCS, msg, sizeof msg);
        if (rc < -1 || rc > 2 || (rc != 0 && !strstr(msg, "f")))
            abort();
        for (size_t i = 0; i < d.nrows; i++) {
            if (i > 0 && d.rows[i].addr <= d.rows[i - 1].addr)
                abort();
            if (d.rows[i].file != DWI_NO_FILE && d.rows[i].file >= d.nfiles)
                abort();
            const struct dwi_row *r = dwi_line(&d, d.rows[i].addr);
            if (r != (d.rows[i].file == DWI_NO_FILE ? NULL : &d.rows[i]))
                abort();
        }
        for (size_t i = 0; i < d.nfuncs; i++)
            if (d.funcs[i].lo >= d.funcs[i].hi || !d.funcs[i].name ||
                (i > 0 && d.funcs[i].lo < d.funcs[i - 1].lo))
                abort();
        dwi_free(&d);
    }
    if (elf)
        elf_end(elf);
    free(copy);
    return 0;
}

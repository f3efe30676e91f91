/* plt_dump: prints the PLT stubs analysis/plt.c names in an ELF file, one
 * "ADDRESS NAME" line each (hex), for tests to compare with objdump's
 * labels (t0700).  Not a unit test of its own (no test_ prefix). */
#include "plt.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: plt_dump ELF\n");
        return 2;
    }
    elf_version(EV_CURRENT);
    int fd = open(argv[1], O_RDONLY);
    Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
    if (!elf) {
        fprintf(stderr, "plt_dump: %s: cannot read\n", argv[1]);
        return 1;
    }
    struct plt_name *v;
    size_t n = plt_names(elf, &v);
    for (size_t i = 0; i < n; i++) {
        printf("%" PRIx64 " %s\n", v[i].addr, v[i].name);
        free(v[i].name);
    }
    if (n)
        free(v);
    elf_end(elf);
    close(fd);
    return 0;
}

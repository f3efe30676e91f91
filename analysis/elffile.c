/* Opening an ELF file with libelf, shared by every reader of executables. */
#include "elffile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int elffile_with(const char *path, int (*fn)(Elf *elf, void *ctx), void *ctx, char *err,
                 size_t errsz)
{
    if (elf_version(EV_CURRENT) == EV_NONE) {
        snprintf(err, errsz, "%s: libelf: %s", path, elf_errmsg(-1));
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int have = fstat(fd, &st) == 0;
    if (have && (S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && st.st_size == 0))) {
        /* say what it is: "not an ELF file" would send one looking at bytes */
        snprintf(err, errsz, "%s: %s", path, S_ISDIR(st.st_mode) ? "is a directory" : "empty file");
        close(fd);
        return -1;
    }
    /* a regular file is mapped, not read: libelf then copies no section
     * (the DWARF of a large program is most of the report's time) */
    Elf *elf = elf_begin(fd, have && S_ISREG(st.st_mode) ? ELF_C_READ_MMAP : ELF_C_READ, NULL);
    int rc = -1;
    if (!elf || elf_kind(elf) != ELF_K_ELF)
        snprintf(err, errsz, "%s: not an ELF file", path);
    else
        rc = fn(elf, ctx);
    if (elf)
        elf_end(elf);
    close(fd);
    return rc;
}

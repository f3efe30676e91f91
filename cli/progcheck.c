/* What cgprof record can tell about the program before it becomes it, so
 * that a run which cannot work, or would record nothing, is refused with
 * the reason instead of going ahead in silence:
 *  - an ELF file for another machine: execvp would hand it to /bin/sh as
 *    a script ("Syntax error"); the shell's answer is "exec format error",
 *    status 126 (but an AArch64 program on x86-64 runs under qemu-aarch64:
 *    record.c);
 *  - a set-user-ID or set-group-ID program the user does not own: the
 *    dynamic loader runs it in secure mode and ignores LD_PRELOAD;
 *  - a static program without libcgprof.a linked in: there is no dynamic
 *    loader to preload the runtime;
 *  - --format gmon for a program not built with -pg: a gmon.out holds a
 *    -pg program's profile, and there would be none;
 *  - a directory, an object file (.o) or a core dump: execvp's "Permission
 *    denied" or "exec format error" would not say why.
 * Anything that is not an ELF file (a script) is left to execvp.
 */
#include "cmds.h"
#include "elffile.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#define HOST_CLASS   ELFCLASS64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#define HOST_CLASS   ELFCLASS64
#endif

int record_resolve(const char *prog, char *out, size_t cap)
{
    if (strchr(prog, '/')) {
        snprintf(out, cap, "%s", prog);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/bin:/usr/bin";
    for (const char *p = path;; p++) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        struct stat st;
        snprintf(out, cap, "%.*s%s%s", (int)n, n ? p : ".", "/", prog);
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        if (!colon)
            return -1;
        p = colon;
    }
}

struct facts {
    int interp;  /* has PT_INTERP: dynamically linked */
    int pg;      /* refers to mcount or __fentry__: built with -pg */
    int runtime; /* defines libcgprof's cgprof_dump: libcgprof.a linked in */
};

static int is_pg_hook(const char *name)
{
    return strcmp(name, "mcount") == 0 || strcmp(name, "_mcount") == 0 ||
           strcmp(name, "__fentry__") == 0 || strcmp(name, "__gnu_mcount_nc") == 0;
}

static int read_facts(Elf *e, void *ctx)
{
    struct facts *f = ctx;
    size_t nph = 0;
    elf_getphdrnum(e, &nph);
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
            f->interp = 1;
    }
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn)) != NULL;) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
            sh.sh_entsize == 0)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            const char *name;
            if (!gelf_getsym(d, (int)i, &sym) || !(name = elf_strptr(e, sh.sh_link, sym.st_name)))
                continue;
            f->pg |= is_pg_hook(name);
            f->runtime |= sym.st_shndx != SHN_UNDEF && strcmp(name, "cgprof_dump") == 0;
        }
    }
    return 0;
}

/* A stripped static program keeps the runtime's strings: the name of the
 * variable that says where to write the profile. */
static int holds_runtime_strings(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return 0;
    static const char key[] = "CGPROF_OUTPUT";
    int found = memmem(p, (size_t)st.st_size, key, sizeof key) != NULL;
    munmap(p, (size_t)st.st_size);
    return found;
}

/* The ELF machine of PROG (EM_NONE when it is not a 64-bit
 * little-endian ELF file, or cannot be read). */
static unsigned prog_machine(const char *prog)
{
    char path[PATH_MAX];
    unsigned char id[EI_NIDENT + 4];
    if (record_resolve(prog, path, sizeof path) != 0)
        return EM_NONE;
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(id, 1, sizeof id, f) : 0;
    if (f)
        fclose(f);
    if (got < sizeof id || memcmp(id, ELFMAG, SELFMAG) != 0 || id[EI_CLASS] != ELFCLASS64 ||
        id[EI_DATA] != ELFDATA2LSB)
        return EM_NONE;
    return (unsigned)(id[19] << 8 | id[18]);
}

int record_prog_aarch64(const char *prog)
{
#if defined(__x86_64__)
    return prog_machine(prog) == EM_AARCH64;
#else
    (void)prog;
    return 0;
#endif
}

int record_check_prog(const char *prog, int gmon_format, int emulated)
{
    char path[PATH_MAX];
    unsigned char id[EI_NIDENT + 4];
    if (record_resolve(prog, path, sizeof path) != 0)
        return 0; /* execvp says what is missing */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "cgprof record: cannot run %s: it is a directory\n", prog);
        return 126; /* the shell's status for what cannot be run */
    }
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(id, 1, sizeof id, f) : 0;
    if (f)
        fclose(f);
    if (got < sizeof id || memcmp(id, ELFMAG, SELFMAG) != 0)
        return 0; /* a script, or unreadable: execvp decides */
#ifdef HOST_MACHINE
    uint16_t machine =
        (uint16_t)(id[EI_DATA] == ELFDATA2MSB ? id[18] << 8 | id[19] : id[19] << 8 | id[18]);
    if (!emulated && (id[EI_CLASS] != HOST_CLASS || machine != HOST_MACHINE)) {
        fprintf(stderr,
                "cgprof record: cannot run %s: exec format error (an ELF file for another "
                "machine)\n",
                prog);
        return 126;
    }
#endif
    uint16_t type =
        (uint16_t)(id[EI_DATA] == ELFDATA2MSB ? id[16] << 8 | id[17] : id[17] << 8 | id[16]);
    if (type == ET_REL || type == ET_CORE) {
        fprintf(stderr, "cgprof record: cannot run %s: it is %s, not a program%s\n", prog,
                type == ET_REL ? "an object file (ELF relocatable)" : "a core dump",
                type == ET_REL ? " (link it first)" : "");
        return 126;
    }
    if (stat(path, &st) == 0 && (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
                                 ((st.st_mode & S_ISGID) && st.st_gid != getegid()))) {
        fprintf(stderr,
                "cgprof record: %s is set-%s-ID: the dynamic loader ignores LD_PRELOAD for it, so "
                "nothing would be recorded\n",
                prog, st.st_mode & S_ISUID ? "user" : "group");
        return 1;
    }
    struct facts fa = {0, 0, 0};
    char err[512];
    if (elffile_with(path, read_facts, &fa, err, sizeof err) != 0)
        return 0;
    if (!fa.interp && !fa.runtime && !holds_runtime_strings(path)) {
        fprintf(stderr,
                "cgprof record: %s is statically linked: libcgprof cannot be preloaded into it, "
                "so nothing would be recorded (link it with libcgprof.a%s)\n",
                prog, fa.pg ? ", or run it as it is: glibc's -pg runtime writes gmon.out" : "");
        return 1;
    }
    if (gmon_format && !fa.pg) {
        fprintf(stderr,
                "cgprof record: %s was not built with -pg: --format gmon would record nothing "
                "(rebuild with -pg, or use the cgprof format)\n",
                prog);
        return 1;
    }
    return 0;
}

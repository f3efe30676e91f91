/* Modules: the executable, every shared library and the vDSO, as they are
 * and were mapped, so that a sampled pc can be named by (module, offset).
 *
 * The list is a snapshot taken from dl_iterate_phdr at start-up, every
 * 100 ms by the sampler thread, around every dlclose (interposed), and at a
 * final write -- never from a signal handler: dl_iterate_phdr takes the
 * loader's lock and is not async-signal-safe.  A module that disappears
 * stays in the list, marked unloaded, so samples taken while it was mapped
 * can still be named.  dlopen is not interposed here: glibc looks at
 * dlopen's caller to find the RUNPATH and namespace to search, and a C
 * wrapper would change what the program loads (the library-call hooks'
 * interposer, arch/x86_64/dlopen.S, leaves the caller as it was).
 *
 * Snapshots are serialized by `lock`; the writer reads the published
 * count, and entries are complete before the count covers them.
 */
#include "rt.h"
#include "unwind.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define MAX_MODULES 4096

static struct cg_module *mods; /* MAX_MODULES entries, mapped once */
static unsigned nmods;         /* atomic: published count */
static int lock;               /* atomic spin lock for snapshots */
static unsigned snapshot_seq;
unsigned cg_mod_gen; /* atomic: bumped when a module is found unmapped */

static void take_lock(void)
{
    while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
        ;
}

static void drop_lock(void)
{
    __atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

/* In a forked child: a snapshot another thread of the parent was making
 * (the sampler's, every 100 ms) holds the lock for ever, and the child's
 * next snapshot (its write at exec or exit) would spin on it -- seen as a
 * hung bash under record --lib-calls=all, whose children write a profile
 * at exec.  The child has no other thread: the lock is free. */
void cg_modules_after_fork(void)
{
    drop_lock();
}

/* The GNU build-id note of a loaded object, read from memory. */
static void read_build_id(const struct dl_phdr_info *info, struct cg_module *m)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const unsigned char *name = p + sizeof *nh;
            const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
            if (desc + nh->n_descsz > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                nh->n_descsz <= sizeof m->build_id) {
                memcpy(m->build_id, desc, nh->n_descsz);
                m->build_id_len = nh->n_descsz;
                return;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
}

/* Where the module's .eh_frame_hdr is, and the segment that holds it. */
static void find_eh_frame(const struct dl_phdr_info *info, struct cg_module *m)
{
    uintptr_t hdr = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
            hdr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
    if (!hdr)
        return;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && lo <= hdr && hdr < lo + ph->p_filesz) {
            m->eh_hdr = hdr;
            m->eh_lo = lo;
            m->eh_hi = lo + ph->p_filesz;
        }
    }
}

/* The hexadecimal number at *I in BUF (LEN bytes) up to END; *I is left
 * after END. */
static uintptr_t hex_field(const char *buf, size_t len, size_t *i, char end)
{
    uintptr_t v = 0;
    for (; *i < len && buf[*i] != end; ++*i) {
        char c = buf[*i];
        v = v * 16 + (uintptr_t)(c <= '9' ? c - '0' : (c | 32) - 'a' + 10);
    }
    ++*i;
    return v;
}

/* The absolute path of the file mapped at ADDR, from /proc/self/maps,
 * into OUT; 0, or -1 when no file mapping holds ADDR.  The loader names a
 * library by the path it opened it with, which is relative for
 * dlopen("./plug.so") or an rpath of "." -- and relative to a directory
 * the program may have left by the time anyone reads the profile.  The
 * kernel's name is the file actually mapped, whatever the directory.
 * Read with open/read into a stack buffer: no stdio, no malloc. */
static int mapped_path(uintptr_t addr, char *out, size_t cap)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[8192];
    size_t have = 0;
    int found = -1, eof = 0;
    while (found < 0 && !(eof && have == 0)) {
        if (!eof && have < sizeof buf) {
            ssize_t n = read(fd, buf + have, sizeof buf - have);
            if (n <= 0)
                eof = 1;
            else
                have += (size_t)n;
        }
        char *nl = memchr(buf, '\n', have);
        size_t len = nl ? (size_t)(nl - buf) : have;
        if (!nl && !eof && have < sizeof buf)
            continue; /* the line is not all here yet */
        /* "lo-hi perms offset dev inode   path" */
        size_t i = 0;
        uintptr_t lo = hex_field(buf, len, &i, '-');
        uintptr_t hi = hex_field(buf, len, &i, ' ');
        if (lo <= addr && addr < hi) {
            char *slash = memchr(buf, '/', len);
            if (slash) {
                size_t n = len - (size_t)(slash - buf);
                if (n >= cap)
                    n = cap - 1;
                memcpy(out, slash, n);
                out[n] = '\0';
                found = 0;
            } else {
                break; /* anonymous: no file to name */
            }
        }
        size_t used = nl ? len + 1 : have; /* an over-long line is skipped */
        memmove(buf, buf + used, have - used);
        have -= used;
    }
    close(fd);
    return found;
}

static int same(const struct cg_module *m, const char *path, uintptr_t bias, uintptr_t lo)
{
    return m->bias == bias && m->lo == lo && strcmp(m->path, path) == 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            if (info->dlpi_addr + ph->p_vaddr < lo)
                lo = info->dlpi_addr + ph->p_vaddr;
            if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
                hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        }
    }
    if (hi <= lo)
        return 0;
    const char *path = info->dlpi_name;
    unsigned flags = 0;
    char exe[CG_PATH_MAX];
    uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (vdso && lo <= vdso && vdso < hi) {
        flags |= CG_MOD_VDSO;
        path = "[vdso]";
    } else if (!path || !*path) {
        /* the first object is the executable; its name comes from /proc,
         * read once (a profiled program should not see us readlink) */
        unsigned k = __atomic_load_n(&nmods, __ATOMIC_RELAXED);
        for (unsigned i = 0; i < k; i++)
            if ((mods[i].flags & CG_MOD_MAIN) && mods[i].bias == info->dlpi_addr &&
                mods[i].lo == lo) {
                mods[i].seen = snapshot_seq;
                return 0;
            }
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        path = exe;
        flags |= CG_MOD_MAIN;
    }
    char abs[CG_PATH_MAX];
    if (path[0] != '/' && path[0] != '[' && mapped_path(lo, abs, sizeof abs) == 0)
        path = abs; /* a relative name: the file the kernel has mapped */
    unsigned n = __atomic_load_n(&nmods, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < n; i++)
        if (same(&mods[i], path, info->dlpi_addr, lo)) {
            mods[i].seen = snapshot_seq;
            /* loaded again where it was (dlopen after dlclose): the same
             * code, so the same module, mapped again from now on */
            if (__atomic_fetch_and(&mods[i].flags, ~CG_MOD_UNLOADED, __ATOMIC_RELAXED) &
                CG_MOD_UNLOADED)
                __atomic_store_n(&mods[i].unload_gen, UINT_MAX, __ATOMIC_RELAXED);
            return 0;
        }
    if (n == MAX_MODULES)
        return 0;
    struct cg_module *m = &mods[n];
    memset(m, 0, sizeof *m);
    size_t len = strlen(path);
    if (len >= sizeof m->path)
        len = sizeof m->path - 1;
    memcpy(m->path, path, len);
    m->bias = info->dlpi_addr;
    m->lo = lo;
    m->hi = hi;
    m->flags = flags;
    m->seen = snapshot_seq;
    m->load_gen = __atomic_load_n(&cg_mod_gen, __ATOMIC_RELAXED);
    m->unload_gen = UINT_MAX;
    read_build_id(info, m);
    find_eh_frame(info, m);
    __atomic_store_n(&nmods, n + 1, __ATOMIC_RELEASE);
    return 0;
}

/* Brings the list up to date with what is mapped now. */
void cg_modules_snapshot(void)
{
    take_lock();
    if (!mods) {
        void *p = cg_map(MAX_MODULES * sizeof *mods);
        if (!p) {
            drop_lock();
            return;
        }
        mods = p;
    }
    snapshot_seq++;
    dl_iterate_phdr(visit, NULL);
    unsigned n = __atomic_load_n(&nmods, __ATOMIC_RELAXED);
    int gone = 0;
    for (unsigned i = 0; i < n; i++)
        gone |= mods[i].seen != snapshot_seq && !(mods[i].flags & CG_MOD_UNLOADED);
    if (gone) { /* pcs from now on are of the modules mapped from now on */
        uintptr_t lo[16], hi[16];
        unsigned nr = 0;
        unsigned g = __atomic_add_fetch(&cg_mod_gen, 1, __ATOMIC_RELAXED);
        for (unsigned i = 0; i < n; i++)
            if (mods[i].seen != snapshot_seq && !(mods[i].flags & CG_MOD_UNLOADED)) {
                __atomic_store_n(&mods[i].unload_gen, g, __ATOMIC_RELAXED);
                __atomic_or_fetch(&mods[i].flags, CG_MOD_UNLOADED, __ATOMIC_RELAXED);
                if (nr < 16) {
                    lo[nr] = mods[i].lo;
                    hi[nr++] = mods[i].hi;
                }
            }
        cg_arcs_freeze(lo, hi, nr, g);
    }
    /* unwind tables for new modules: still mapped, since dlclose (the only
     * way one goes) takes this lock first */
    for (unsigned i = 0; i < n; i++) {
        struct cg_module *m = &mods[i];
        if (cg_stacks_on && m->eh_hdr && !m->cfi && !(m->flags & CG_MOD_UNLOADED)) {
            struct cg_cfi *t = cg_cfi_build(m->lo, m->hi, m->eh_hdr, m->eh_lo, m->eh_hi);
            __atomic_store_n(&m->cfi, t, __ATOMIC_RELEASE);
            if (!t)
                m->eh_hdr = 0; /* none usable: not tried again */
        }
    }
    drop_lock();
}

const struct cg_module *cg_modules(unsigned *n)
{
    *n = __atomic_load_n(&nmods, __ATOMIC_ACQUIRE);
    return mods;
}

/* The module a pc belongs to: a loaded one first, then the unloaded ones
 * (newest first), or -1. */
int cg_module_of(uintptr_t pc)
{
    unsigned n;
    const struct cg_module *m = cg_modules(&n);
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = n; i-- > 0;)
            if (!(m[i].flags & CG_MOD_UNLOADED) == !pass && m[i].lo <= pc && pc < m[i].hi)
                return (int)i;
    return -1;
}

/* The module a pc kept with its generation (cg_pc_tag) belongs to: of
 * those mapped at that pc in that generation, the one loaded last; a pc
 * no generation explains is named as cg_module_of names it.  -1: none. */
int cg_module_at(uintptr_t key)
{
    uintptr_t pc = key;
    unsigned g = 0;
    if (key >> CG_GEN_SHIFT != 0xFFFF) {
        g = (unsigned)(key >> CG_GEN_SHIFT);
        pc = key & CG_PC_MASK;
    }
    unsigned n;
    const struct cg_module *m = cg_modules(&n);
    int best = -1;
    for (unsigned i = 0; i < n; i++) {
        unsigned lg = __atomic_load_n(&m[i].load_gen, __ATOMIC_RELAXED);
        unsigned ug = __atomic_load_n(&m[i].unload_gen, __ATOMIC_RELAXED);
        if (m[i].lo <= pc && pc < m[i].hi && lg <= g && g < ug &&
            (best < 0 || lg >= m[best].load_gen))
            best = (int)i;
    }
    return best >= 0 ? best : cg_module_of(pc);
}

/* ---- dlclose: name what is about to go ------------------------------- */

typedef int (*dlclose_fn)(void *);

__attribute__((visibility("default"))) int dlclose(void *handle)
{
    static dlclose_fn real;
    if (!real)
        real = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
    if (!real)
        return -1;
    if (cg_inert)
        return real(handle);
    cg_modules_snapshot(); /* what was there, before it goes */
    cg_arcs_freeze_reserve();
    int rc = real(handle);
    /* samples still in the perf rings were taken before the unmapping:
     * counted now, in the generation that names them rightly */
    cg_sampler_flush();
    cg_modules_snapshot(); /* marks what went as unloaded, a new generation */
    cg_libcalls_rescan();  /* and the library-call hooks forget it */
    return rc;
}

/* Library calls: counts the calls a profiled module makes through its PLT
 * into other shared objects, by pointing their GOT entries at trampolines,
 * and those it makes through the GOT (-fno-plt, .plt.got), by rewriting
 * the call sites (patch_sites, below).
 *
 * At start-up (cg_init, cgprof format only) every module present that was
 * built with -pg -- one whose relocations name mcount, _mcount or
 * __fentry__ -- has each R_X86_64_JUMP_SLOT entry of its GOT replaced by
 * the address of a stub (arch/x86_64/libcalls.S) that counts the arc
 * (return address, target) in the thread's arc table and jumps on to the
 * target.  docs/libcalls.md has the design, its limits and its cost.
 *
 * Invariants:
 *   1. Only JUMP_SLOT entries are touched: R_X86_64_GLOB_DAT entries,
 *      which `&f` and -fno-plt calls load, keep the function's own address,
 *      so function-pointer identity never changes (a -fno-plt call is
 *      redirected at its call site instead, invariants 7 and 8).
 *   2. A stub jumps to exactly the function the entry would have reached:
 *      the entry's own value when it is already bound (bind-now, or a lazy
 *      entry a constructor already used), else the definition the loader's
 *      global-scope lookup gives for the entry's name and version (what
 *      lazy binding would have bound).  An entry whose target cannot be
 *      found, lies in its own module, or lies in libcgprof is left alone.
 *   3. A call into a -pg module is not hooked: the callee's mcount counts it.
 *   4. libcgprof's own module is never hooked, so the runtime's own library
 *      calls are not counted and cannot recurse into a stub.
 *   5. cg_lc_target[i] is written once, before its stub is published in a
 *      GOT entry, and never changes: a stub stands for one target address
 *      for the life of the process, and entries calling the same address
 *      share it (the arc's return address tells the callers apart).  A
 *      module unloaded and another mapped where it was can thus never
 *      reach a stale target through a stub.
 *   6. Modules loaded later (dlopen) are hooked by the dlopen interposer
 *      (arch/x86_64/dlopen.S) once the real dlopen has returned, before the
 *      program can reach the new module's code from another thread; a pass
 *      over the modules (lc_scan) runs under lc_lock, never in a signal
 *      handler.  A module seen only after the fact (a dlopen that had to go
 *      straight to glibc, see cg_dlopen_route) may already be running in
 *      other threads: only its entries that are bound already are hooked
 *      then, and a lazy resolution racing the hook at worst leaves the
 *      entry pointing at the same function, uncounted.
 */
#include "rt.h"
#include "unwind.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#define CG_LC_STUBS   8192 /* arch/x86_64/libcalls.S has the same number */
#define CG_LC_MODULES 256

extern const char cg_lc_stubs[] CG_HIDDEN;
uintptr_t cg_lc_target[CG_LC_STUBS] CG_HIDDEN;
static unsigned lc_used;

struct lc_module {
    uintptr_t bias, lo, hi;
    const ElfW(Phdr) * phdr;
    int phnum;
    const char *name;
    int profiled;   /* built with -pg: its own mcount counts calls into it */
    int fresh;      /* new in this pass of lc_scan */
    void *pin;      /* while it is read and hooked: a reference that keeps it mapped */
    char path[256]; /* its name, copied while the loader's list held it */
};

static struct lc_module lc_mods[CG_LC_MODULES], lc_seen[CG_LC_MODULES];
static unsigned lc_nmods, lc_nseen;
static uintptr_t self_lo, self_hi; /* libcgprof's own mapped range */
static int lc_on;                  /* counting library calls: set once by cg_libcalls_init */
static int lc_lock;                /* serializes lc_scan (dlopen, dlclose of several threads) */

/* CGPROF_LIBCALLS=all (record --lib-calls=all): every module's calls into
 * another are counted, not only those of -pg modules -- except the
 * dynamic loader's: it is never hooked, and no call into it is (libc's
 * calls of _dl_* and __tls_get_addr are the loader's internals, some made
 * while it holds its lock).  docs/libcalls.md, "Every module". */
static int lc_every;
static uintptr_t ld_lo, ld_hi; /* the dynamic loader's mapped range */

/* Whether M's calls into other modules are hooked. */
static int hooked(const struct lc_module *m)
{
    return m->profiled || (lc_every && !(m->lo == ld_lo && m->hi == ld_hi));
}

/* Stub per target (invariant 5): open addressing, index + 1, 0 = empty. */
static uint32_t lc_stub_of[2 * CG_LC_STUBS];

static void module_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < *lo)
            *lo = a;
        if (a + ph->p_memsz > *hi)
            *hi = a + ph->p_memsz;
    }
}

/* Collects the modules; the work is done outside dl_iterate_phdr, whose
 * lock dlsym must not be called under. */
static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    uintptr_t lo, hi;
    module_range(info, &lo, &hi);
    uintptr_t me = (uintptr_t)cg_lc_stubs;
    if (me >= lo && me < hi) { /* ours (with libcgprof.a, the executable) */
        self_lo = lo;
        self_hi = hi;
        return 0;
    }
    if (info->dlpi_addr && info->dlpi_addr == (uintptr_t)getauxval(AT_BASE)) {
        ld_lo = lo;
        ld_hi = hi;
    }
    if (lc_nseen < CG_LC_MODULES) {
        struct lc_module *m = &lc_seen[lc_nseen++];
        *m = (struct lc_module){.bias = info->dlpi_addr,
                                .lo = lo,
                                .hi = hi,
                                .phdr = info->dlpi_phdr,
                                .phnum = info->dlpi_phnum};
        /* the loader frees its name at dlclose: a copy, "" if too long */
        const char *n = info->dlpi_name ? info->dlpi_name : "";
        size_t len = strlen(n);
        if (len < sizeof m->path)
            memcpy(m->path, n, len + 1);
        else
            m->path[0] = '\0', m->phnum = -1; /* cannot be pinned: left alone */
        m->name = m->path;
    }
    return 0;
}

/* What a module's dynamic section says about its PLT relocations. */
struct lc_dyn {
    const ElfW(Rela) * jmprel, *rela;
    size_t njmprel, nrela;
    const ElfW(Sym) * symtab;
    const char *strtab;
    const ElfW(Half) * versym;
    const ElfW(Verneed) * verneed;
    size_t nverneed;
};

/* glibc relocates most d_ptr values of a writable .dynamic in place, not
 * all (DT_VERNEED stays as linked): an address below the bias is unrelocated. */
static uintptr_t dyn_ptr(uintptr_t v, uintptr_t bias)
{
    return v < bias ? v + bias : v;
}

static int read_dynamic(const struct lc_module *m, struct lc_dyn *d)
{
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < m->phnum; i++)
        if (m->phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(m->bias + m->phdr[i].p_vaddr);
    if (!dyn)
        return -1;
    memset(d, 0, sizeof *d);
    size_t pltrelsz = 0, relasz = 0;
    long pltrel = DT_RELA;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t p = dyn_ptr(dyn->d_un.d_ptr, m->bias);
        switch (dyn->d_tag) {
        case DT_JMPREL:
            d->jmprel = (const ElfW(Rela) *)p;
            break;
        case DT_PLTRELSZ:
            pltrelsz = dyn->d_un.d_val;
            break;
        case DT_PLTREL:
            pltrel = (long)dyn->d_un.d_val;
            break;
        case DT_RELA:
            d->rela = (const ElfW(Rela) *)p;
            break;
        case DT_RELASZ:
            relasz = dyn->d_un.d_val;
            break;
        case DT_SYMTAB:
            d->symtab = (const ElfW(Sym) *)p;
            break;
        case DT_STRTAB:
            d->strtab = (const char *)p;
            break;
        case DT_VERSYM:
            d->versym = (const ElfW(Half) *)p;
            break;
        case DT_VERNEED:
            d->verneed = (const ElfW(Verneed) *)p;
            break;
        case DT_VERNEEDNUM:
            d->nverneed = dyn->d_un.d_val;
            break;
        default:
            break;
        }
    }
    if (pltrel != DT_RELA || !d->symtab || !d->strtab)
        return -1;
    d->njmprel = d->jmprel ? pltrelsz / sizeof(ElfW(Rela)) : 0;
    d->nrela = d->rela ? relasz / sizeof(ElfW(Rela)) : 0;
    return 0;
}

static int is_mcount(const char *s)
{
    return strcmp(s, "mcount") == 0 || strcmp(s, "_mcount") == 0 || strcmp(s, "__fentry__") == 0;
}

/* Built with -pg: some relocation (a PLT call, or a GOT load under
 * -fno-plt) names an entry stub. */
static int profiled(const struct lc_dyn *d)
{
    for (size_t i = 0; i < d->njmprel; i++)
        if (is_mcount(d->strtab + d->symtab[ELF64_R_SYM(d->jmprel[i].r_info)].st_name))
            return 1;
    for (size_t i = 0; i < d->nrela; i++) {
        unsigned long sym = ELF64_R_SYM(d->rela[i].r_info);
        if (sym && is_mcount(d->strtab + d->symtab[sym].st_name))
            return 1;
    }
    return 0;
}

/* The version a symbol reference asks for (e.g. GLIBC_2.14), or NULL. */
static const char *version_of(const struct lc_dyn *d, unsigned long sym)
{
    if (!d->versym || !d->verneed)
        return NULL;
    unsigned v = d->versym[sym] & 0x7fff;
    if (v < 2)
        return NULL;
    const ElfW(Verneed) *vn = d->verneed;
    for (size_t i = 0; i < d->nverneed; i++) {
        const ElfW(Vernaux) *va = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);
        for (unsigned j = 0; j < vn->vn_cnt; j++) {
            if (va->vna_other == v)
                return d->strtab + va->vna_name;
            va = (const ElfW(Vernaux) *)((const char *)va + va->vna_next);
        }
        if (!vn->vn_next)
            break;
        vn = (const ElfW(Verneed) *)((const char *)vn + vn->vn_next);
    }
    return NULL;
}

/* The position of a module in the loader's list: the global scope's order
 * for the modules loaded at start-up. */
static unsigned scope_pos(const struct link_map *lm)
{
    unsigned n = 0;
    for (; lm && lm->l_prev; lm = lm->l_prev)
        n++;
    return n;
}

/* Whether the definition at p has no version (none at all, or the base
 * one), as an interposer's usually has: the loader binds a versioned
 * reference to it, dlvsym does not.  *pos: its module's place in the scope. */
static int unversioned_def(void *p, unsigned *pos)
{
    Dl_info info;
    struct link_map *lm = NULL;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1(p, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
        !dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
        return 0;
    *pos = scope_pos(lm);
    const ElfW(Sym) *symtab = NULL;
    const ElfW(Half) *versym = NULL;
    for (const ElfW(Dyn) *dyn = lm->l_ld; dyn && dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB)
            symtab = (const ElfW(Sym) *)dyn_ptr(dyn->d_un.d_ptr, lm->l_addr);
        else if (dyn->d_tag == DT_VERSYM)
            versym = (const ElfW(Half) *)dyn_ptr(dyn->d_un.d_ptr, lm->l_addr);
    }
    return !versym || (symtab && sym > symtab && (versym[sym - symtab] & 0x7fff) <= 1);
}

/* What lazy binding would bind NAME (version VER) to: the first definition
 * in the global scope that the loader accepts.  dlvsym finds the versioned
 * one but, unlike the loader, refuses an unversioned definition (an
 * LD_PRELOADed malloc, libcgprof's own pthread_create); dlsym finds that
 * one but takes the default version, not the one asked for.  So: the
 * versioned one, unless an unversioned definition comes before it. */
static uintptr_t lookup(const char *name, const char *ver)
{
    void *p = ver ? dlvsym(RTLD_DEFAULT, name, ver) : dlsym(RTLD_DEFAULT, name);
    void *q = ver ? dlsym(RTLD_DEFAULT, name) : p;
    if (q && q != p) { /* rare: dladdr searches whole symbol tables */
        Dl_info info;
        struct link_map *lm = NULL;
        unsigned qpos, ppos = UINT32_MAX;
        if (p && dladdr1(p, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm)
            ppos = scope_pos(lm);
        if (unversioned_def(q, &qpos) && qpos < ppos)
            p = q;
    }
    dlerror(); /* the program's next dlerror() must not see ours */
    return (uintptr_t)p;
}

/* Where the entry's call goes (invariant 2), or 0 to leave it alone. */
static uintptr_t target_of(const struct lc_module *m, const struct lc_dyn *d, const ElfW(Rela) * r,
                           int lazy)
{
    unsigned long sym = ELF64_R_SYM(r->r_info);
    const char *name = d->strtab + d->symtab[sym].st_name;
    if (!sym || !*name || is_mcount(name))
        return 0;
    uintptr_t t = *(const uintptr_t *)(m->bias + r->r_offset);
    if (t >= m->lo && t < m->hi) /* lazy: still the PLT's own stub */
        t = lazy ? lookup(name, version_of(d, sym)) : 0;
    if (!t || (t >= m->lo && t < m->hi) || (t >= self_lo && t < self_hi))
        return 0;
    if (lc_every && !m->profiled && t >= ld_lo && t < ld_hi)
        return 0; /* the loader's internals (lc_every) */
    for (unsigned i = 0; i < lc_nmods; i++)
        if (lc_mods[i].profiled && t >= lc_mods[i].lo && t < lc_mods[i].hi)
            return 0; /* counted by the callee's mcount already */
    return t;
}

/* The page range the loader made read-only after relocation (-z relro),
 * rounded as it rounds it: whole pages only. */
static void relro_range(const struct lc_module *m, uintptr_t *lo, uintptr_t *hi)
{
    *lo = *hi = 0;
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < m->phnum; i++)
        if (m->phdr[i].p_type == PT_GNU_RELRO) {
            uintptr_t a = m->bias + m->phdr[i].p_vaddr;
            *lo = a & ~(pg - 1);
            *hi = (a + m->phdr[i].p_memsz) & ~(pg - 1);
        }
}

static int full_said;

/* The stub that jumps to T, made if there is none: its index, or -1 when
 * all are taken. */
static long stub_for(uintptr_t t)
{
    uint32_t h = (uint32_t)(((uint64_t)t * 0x9E3779B97F4A7C15ull) >> 40) & (2 * CG_LC_STUBS - 1);
    for (;; h = (h + 1) & (2 * CG_LC_STUBS - 1)) {
        uint32_t k = lc_stub_of[h];
        if (!k)
            break;
        if (cg_lc_target[k - 1] == t)
            return (long)k - 1;
    }
    if (lc_used == CG_LC_STUBS)
        return -1;
    unsigned k = lc_used++;
    cg_lc_target[k] = t;
    lc_stub_of[h] = k + 1;
    return (long)k;
}

/* Hooks M's JUMP_SLOT entries; LAZY: also those not bound yet, whose
 * target is then looked up (else they are left as they are). */
static const char *mod_name(const struct lc_module *m)
{
    return m->name && *m->name ? m->name : "the executable";
}

/* Functions a module calls through GOT entries that also hold their
 * address (R_X86_64_GLOB_DAT of an undefined function with no PLT entry:
 * -fno-plt calls, an executable's .plt.got): those calls are left alone
 * (invariant 1), and a note says so once per module.  The C library's
 * and gcrt1.o's start-up references (__libc_start_main, __cxa_finalize,
 * __monstartup, _mcleanup: the address atexit is given) are no loss. */
static void note_got_calls(const struct lc_module *m, const struct lc_dyn *d)
{
    size_t n = 0;
    const char *first = NULL;
    for (size_t i = 0; i < d->nrela; i++) {
        const ElfW(Rela) *r = &d->rela[i];
        unsigned long sym = ELF64_R_SYM(r->r_info);
        if (ELF64_R_TYPE(r->r_info) != R_X86_64_GLOB_DAT || !sym)
            continue;
        const ElfW(Sym) *s = &d->symtab[sym];
        const char *name = d->strtab + s->st_name;
        if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx != SHN_UNDEF || is_mcount(name) ||
            strcmp(name, "__libc_start_main") == 0 || strcmp(name, "__cxa_finalize") == 0 ||
            strcmp(name, "_mcleanup") == 0 || strcmp(name, "__monstartup") == 0)
            continue;
        int plt = 0;
        for (size_t j = 0; j < d->njmprel && !plt; j++)
            plt = ELF64_R_SYM(d->jmprel[j].r_info) == sym;
        if (!plt && !n++)
            first = name;
    }
    if (!n)
        return;
    char num[24], line[400];
    int k = (int)sizeof num - 1;
    num[k] = '\0';
    do
        num[--k] = (char)('0' + n % 10);
    while ((n /= 10) && k > 0);
    size_t len = 0;
    const char *parts[] = {"library calls of ",
                           mod_name(m),
                           " through the GOT (-fno-plt, or to a function whose address is taken) "
                           "are not counted (",
                           num + k,
                           " functions, e.g. ",
                           first,
                           ")"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        for (const char *c = parts[i]; *c && len < sizeof line - 1; c++)
            line[len++] = *c;
    line[len] = '\0';
    cg_note(line, NULL, NULL);
}

/* ---- call sites through the GOT (-fno-plt, .plt.got) ----------------
 *
 * `call *f@GOTPCREL(%rip)` (ff 15 disp32) and `jmp *f@GOTPCREL(%rip)`
 * (ff 25 disp32: -fno-plt tail calls, and the executable's .plt.got
 * entries) read a GLOB_DAT slot, which also gives `&f`: the slot cannot
 * change (invariant 1).  The instruction can: in a safe window only (the
 * module's code cannot be running: cg_init, or a dlopen the runtime made
 * itself, once it has returned), each such site of a -pg module, found
 * at a real instruction boundary by decoding every FDE range of its code
 * (insnlen.c), becomes `nop; call rel32` (90 e8) or `nop; jmp rel32` (90
 * e9) -- the same 6 bytes, so the return address is the same -- to a
 * near trampoline `jmp *0(%rip); .quad stub` in a page mapped within
 * +-2 GB of the module, leading to the stub of the slot's target.
 *
 * Invariants:
 *   7. A site is patched only if its whole function decoded, its disp32
 *      names a GLOB_DAT slot of an undefined function symbol whose value
 *      (bound by the loader before any code ran) passes target_of's
 *      rules, and its text page can be made writable; otherwise the site
 *      is left exactly as it was.
 *   8. The trampolines are written and made executable before any site
 *      points at them; a site's 6 bytes are one aligned 8-byte store when
 *      they lie within one aligned 8-byte word, else two stores (no thread
 *      can be executing them in the safe window either way).  The text
 *      pages from a site to the last site of its segment are made
 *      writable (and executable, if the kernel allows) at once, then given
 *      back the protection of their segment; pages a segment of other
 *      flags shares are not opened.
 */
struct lc_slot {
    uintptr_t at;     /* the GLOB_DAT slot */
    uintptr_t target; /* where its calls go (target_of), 0: left alone */
};

struct lc_site {
    uintptr_t at; /* the ff 15 / ff 25 instruction */
    uint32_t stub;
};

struct lc_sweep {
    const struct lc_module *m;
    struct lc_slot *slots;
    size_t nslots;
    struct lc_site *sites;
    size_t nsites, cap;
    uintptr_t xlo, xhi; /* the executable segments' span */
    size_t undecoded;   /* functions not decoded that look as if they held sites */
    size_t full;        /* functions whose sites could not be listed (no memory) */
};

static int by_slot(const void *a, const void *b)
{
    uintptr_t x = ((const struct lc_slot *)a)->at, y = ((const struct lc_slot *)b)->at;
    return x < y ? -1 : x > y;
}

/* Whether [pc, pc + len) lies in one executable segment of M. */
static int in_text(const struct lc_module *m, uintptr_t pc, uintptr_t len)
{
    for (int i = 0; i < m->phnum; i++) {
        const ElfW(Phdr) *ph = &m->phdr[i];
        uintptr_t a = m->bias + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && pc >= a &&
            len <= a + ph->p_filesz - pc && pc < a + ph->p_filesz)
            return 1;
    }
    return 0;
}

static const struct lc_slot *find_slot(const struct lc_sweep *w, uintptr_t at)
{
    size_t a = 0, z = w->nslots;
    while (a < z) {
        size_t h = a + (z - a) / 2;
        if (w->slots[h].at < at)
            a = h + 1;
        else
            z = h;
    }
    return a < w->nslots && w->slots[a].at == at ? &w->slots[a] : NULL;
}

/* The slot an ff 15 / ff 25 at P reads if it is a GOT call site to be
 * counted, else NULL. */
static const struct lc_slot *site_slot(const struct lc_sweep *w, const unsigned char *p)
{
    if (p[0] != 0xff || (p[1] != 0x15 && p[1] != 0x25))
        return NULL;
    int32_t d;
    memcpy(&d, p + 2, 4);
    const struct lc_slot *s = find_slot(w, (uintptr_t)(p + 6) + (uintptr_t)(intptr_t)d);
    return s && s->target ? s : NULL;
}

/* Whether the bytes of a function that did not decode hold what looks like
 * a call site to be counted (then it is said in a note). */
static int might_call(const struct lc_sweep *w, const unsigned char *p, const unsigned char *end)
{
    for (; end - p >= 6; p++)
        if (site_slot(w, p))
            return 1;
    return 0;
}

/* One function (an FDE's range): its GOT call sites, kept only if every
 * instruction of it decoded. */
static void sweep_range(uintptr_t pc, uintptr_t len, void *ctx)
{
    struct lc_sweep *w = ctx;
    if (!in_text(w->m, pc, len))
        return;
    size_t first = w->nsites;
    const unsigned char *p = (const unsigned char *)pc, *end = p + len;
    while (p < end) {
        size_t n = cg_insn_len(p, (size_t)(end - p));
        if (!n) {
            w->nsites = first; /* not sure where its instructions are */
            w->undecoded += might_call(w, (const unsigned char *)pc, end);
            return;
        }
        const struct lc_slot *s = n == 6 ? site_slot(w, p) : NULL;
        if (s) {
            long k = stub_for(s->target);
            if (k < 0 && !full_said++)
                cg_note("library calls: more call targets than stubs (8192): the calls of ",
                        mod_name(w->m), " and later modules are partly not counted");
            if (k >= 0) {
                if (w->nsites == w->cap) {
                    size_t cap = w->cap ? 2 * w->cap : 512;
                    void *q = mmap(NULL, cap * sizeof *w->sites, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                    if (q == MAP_FAILED) {
                        w->nsites = first;
                        w->full++;
                        return;
                    }
                    if (w->sites) {
                        memcpy(q, w->sites, w->nsites * sizeof *w->sites);
                        munmap(w->sites, w->cap * sizeof *w->sites);
                    }
                    w->sites = q;
                    w->cap = cap;
                }
                w->sites[w->nsites++] = (struct lc_site){(uintptr_t)p, (uint32_t)k};
            }
        }
        p += n;
    }
}

/* A page for trampolines within reach of every site of [LO, HI): below
 * the module (above the executable lies its heap, which must stay free to
 * grow), else above it.  MAP_FAILED if none is found. */
static void *tramp_page(uintptr_t lo, uintptr_t hi, size_t bytes)
{
    const uintptr_t reach = 0x7fff0000u;
    for (int side = 0; side < 2; side++)
        for (uintptr_t step = 1; step <= 1024; step *= 2)
            for (uintptr_t k = 1; k <= 4; k++) {
                uintptr_t off = step * k * 0x100000u, a;
                if (side == 0) {
                    if (lo < off + bytes)
                        continue;
                    a = (lo - off - bytes) & ~(uintptr_t)0xfff;
                } else {
                    a = (hi + off + 0xfff) & ~(uintptr_t)0xfff;
                }
                if (a + bytes > lo + reach || a < hi - reach)
                    continue;
                void *p = mmap((void *)a, bytes, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
                if (p == MAP_FAILED)
                    continue;
                uintptr_t q = (uintptr_t)p;
                if (q + bytes <= lo + reach && q >= hi - reach)
                    return p;
                munmap(p, bytes); /* an old kernel took it as a mere hint */
            }
    return MAP_FAILED;
}

/* The protection M's loader gave the page at PG (its segment's flags), or
 * -1 when segments of other flags share the page. */
static int page_prot(const struct lc_module *m, uintptr_t pg, uintptr_t psz)
{
    int prot = -1;
    for (int i = 0; i < m->phnum; i++) {
        const ElfW(Phdr) *ph = &m->phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = (m->bias + ph->p_vaddr) & ~(psz - 1);
        uintptr_t z = (m->bias + ph->p_vaddr + ph->p_memsz + psz - 1) & ~(psz - 1);
        if (pg + psz <= a || pg >= z)
            continue;
        int p = ((ph->p_flags & PF_R) ? PROT_READ : 0) | ((ph->p_flags & PF_W) ? PROT_WRITE : 0) |
                ((ph->p_flags & PF_X) ? PROT_EXEC : 0);
        if (prot != -1 && prot != p)
            return -1;
        prot = p;
    }
    return prot;
}

/* The end of the file-backed part of M's executable segment holding AT. */
static uintptr_t seg_end(const struct lc_module *m, uintptr_t at)
{
    for (int i = 0; i < m->phnum; i++) {
        const ElfW(Phdr) *ph = &m->phdr[i];
        uintptr_t a = m->bias + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && at >= a && at < a + ph->p_filesz)
            return a + ph->p_filesz;
    }
    return at + 6;
}

/* Makes [lo, hi) writable, keeping it executable if the kernel allows. */
static int open_text(uintptr_t lo, uintptr_t hi)
{
    if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) == 0)
        return 0;
    return mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE);
}

/* Rewrites the site at AT into `nop; call/jmp rel32` to TO (invariant 8). */
static void patch_site(uintptr_t at, uintptr_t to)
{
    unsigned char b[6];
    int32_t rel = (int32_t)(intptr_t)(to - (at + 6));
    b[0] = 0x90;
    b[1] = *(const unsigned char *)(at + 1) == 0x15 ? 0xe8 : 0xe9;
    memcpy(b + 2, &rel, 4);
    if ((at & 7) <= 2) {
        uint64_t *word = (uint64_t *)(at & ~(uintptr_t)7), v = *word;
        memcpy((unsigned char *)&v + (at & 7), b, 6);
        __atomic_store_n(word, v, __ATOMIC_RELEASE);
    } else {
        memcpy((void *)at, b, 6);
    }
}

static int lc_sites_off; /* CGPROF_LIBCALLS=plt: the PLT only */

static void note_count(const char *what, size_t n, const char *tail, const struct lc_module *m)
{
    char num[24];
    int k = (int)sizeof num - 1;
    num[k] = '\0';
    do
        num[--k] = (char)('0' + n % 10);
    while ((n /= 10) && k > 0);
    char line[300];
    size_t len = 0;
    const char *parts[] = {"library calls of ", mod_name(m), ": ", num + k, what};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        for (const char *c = parts[i]; *c && len < sizeof line - 1; c++)
            line[len++] = *c;
    line[len] = '\0';
    cg_note(line, tail, NULL);
}

/* Patches M's GOT call sites (safe window only).  0, or -1 when nothing
 * could be done at all (then the old note says what is not counted). */
static int patch_sites(const struct lc_module *m, const struct lc_dyn *d)
{
    uintptr_t psz = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct lc_sweep w = {.m = m};
    uintptr_t eh = 0, eh_lo = 0, eh_hi = 0;
    for (int i = 0; i < m->phnum; i++)
        if (m->phdr[i].p_type == PT_GNU_EH_FRAME)
            eh = m->bias + m->phdr[i].p_vaddr;
    for (int i = 0; eh && i < m->phnum; i++) {
        const ElfW(Phdr) *ph = &m->phdr[i];
        uintptr_t a = m->bias + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && a <= eh && eh < a + ph->p_filesz)
            eh_lo = a, eh_hi = a + ph->p_filesz;
    }
    size_t nslots = 0;
    for (size_t i = 0; i < d->nrela; i++)
        nslots += ELF64_R_TYPE(d->rela[i].r_info) == R_X86_64_GLOB_DAT;
    if (!eh_hi || !nslots)
        return eh_hi ? 0 : -1;
    size_t sbytes = (nslots * sizeof *w.slots + psz - 1) & ~(psz - 1);
    w.slots = mmap(NULL, sbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (w.slots == MAP_FAILED)
        return -1;
    for (size_t i = 0; i < d->nrela; i++) {
        const ElfW(Rela) *r = &d->rela[i];
        unsigned long sym = ELF64_R_SYM(r->r_info);
        if (ELF64_R_TYPE(r->r_info) != R_X86_64_GLOB_DAT || !sym)
            continue;
        const ElfW(Sym) *s = &d->symtab[sym];
        const char *name = d->strtab + s->st_name;
        int type = ELF64_ST_TYPE(s->st_info);
        struct lc_slot *e = &w.slots[w.nslots++];
        e->at = m->bias + r->r_offset;
        e->target = 0;
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx != SHN_UNDEF ||
            strcmp(name, "__libc_start_main") == 0 || strcmp(name, "__cxa_finalize") == 0 ||
            strcmp(name, "_mcleanup") == 0 || strcmp(name, "__monstartup") == 0)
            continue;
        e->target = target_of(m, d, r, 0);
    }
    qsort(w.slots, w.nslots, sizeof *w.slots, by_slot);
    cg_cfi_each_range(eh, eh_lo, eh_hi, sweep_range, &w);

    /* trampolines: one per distinct stub, 16 bytes each */
    static uint32_t tramp_of[CG_LC_STUBS]; /* stub -> trampoline index + 1 (under lc_lock) */
    size_t ntramp = 0;
    for (size_t i = 0; i < w.nsites; i++)
        if (!tramp_of[w.sites[i].stub])
            tramp_of[w.sites[i].stub] = (uint32_t)++ntramp;
    size_t tbytes = (ntramp * 16 + psz - 1) & ~(psz - 1);
    unsigned char *tr = ntramp ? tramp_page(m->lo, m->hi, tbytes) : MAP_FAILED;
    size_t refused = 0;
    if (tr != MAP_FAILED) {
        for (size_t i = 0; i < w.nsites; i++) {
            unsigned char *t = tr + 16 * (tramp_of[w.sites[i].stub] - 1);
            uintptr_t stub = (uintptr_t)(cg_lc_stubs + 16 * (uintptr_t)w.sites[i].stub);
            static const unsigned char jmp[8] = {0xff, 0x25, 0, 0, 0, 0, 0xcc, 0xcc};
            memcpy(t, jmp, 6);
            memcpy(t + 6, &stub, 8);
            memcpy(t + 14, jmp + 6, 2);
        }
        if (mprotect(tr, tbytes, PROT_READ | PROT_EXEC) != 0) {
            munmap(tr, tbytes);
            tr = MAP_FAILED;
        }
    }
    uintptr_t olo = 0, ohi = 0; /* the text pages open now */
    int oprot = -1;
    for (size_t i = 0; i < w.nsites && tr != MAP_FAILED; i++) {
        uintptr_t at = w.sites[i].at;
        if (at < olo || at + 6 > ohi) {
            if (ohi)
                mprotect((void *)olo, ohi - olo, oprot);
            olo = ohi = 0;
            /* the pages from this site to the last of its segment's
             * sites (one mprotect there and one back: the Lua interpreter
             * built -fno-plt has 995 sites on 40 pages), else its own */
            uintptr_t shi = seg_end(m, at), last = at;
            for (size_t j = i + 1; j < w.nsites && w.sites[j].at > last && w.sites[j].at + 6 <= shi;
                 j++)
                last = w.sites[j].at;
            uintptr_t plo = at & ~(psz - 1), phi = (last + 6 + psz - 1) & ~(psz - 1);
            oprot = page_prot(m, plo, psz);
            if (oprot < 0 || page_prot(m, phi - psz, psz) != oprot || open_text(plo, phi) != 0) {
                phi = (at + 6 + psz - 1) & ~(psz - 1);
                if (oprot < 0 || page_prot(m, phi - psz, psz) != oprot ||
                    open_text(plo, phi) != 0) {
                    refused++;
                    continue;
                }
            }
            olo = plo, ohi = phi;
        }
        patch_site(at, (uintptr_t)(tr + 16 * (tramp_of[w.sites[i].stub] - 1)));
    }
    if (ohi)
        mprotect((void *)olo, ohi - olo, oprot);
    if (ntramp && tr == MAP_FAILED)
        refused = w.nsites;
    for (size_t i = 0; i < w.nsites; i++)
        tramp_of[w.sites[i].stub] = 0;
    if (w.sites)
        munmap(w.sites, w.cap * sizeof *w.sites);
    munmap(w.slots, sbytes);
    if (w.undecoded)
        note_count(" functions not decoded: their calls through the GOT (-fno-plt, .plt.got) are "
                   "not counted",
                   w.undecoded, "", m);
    if (w.full)
        note_count(" functions' call sites through the GOT not patched (out of memory): not "
                   "counted",
                   w.full, "", m);
    if (refused)
        note_count(" call sites through the GOT could not be patched (no near page, or text not "
                   "writable): not counted",
                   refused, "", m);
    return 0;
}

static void hook_module(const struct lc_module *m, int lazy)
{
    struct lc_dyn d;
    if (!hooked(m) || read_dynamic(m, &d) != 0)
        return;
    /* GOT call sites: in the executable and -pg modules (not every
     * library of lc_every), only in a safe window (a fresh module, hooked
     * with its lazy entries), else said once */
    if ((m->profiled || !m->path[0]) && (!lazy || lc_sites_off || patch_sites(m, &d) != 0))
        note_got_calls(m, &d);
    if (!d.njmprel)
        return;
    uintptr_t rlo, rhi;
    relro_range(m, &rlo, &rhi);
    int opened = 0;
    for (size_t i = 0; i < d.njmprel; i++) {
        const ElfW(Rela) *r = &d.jmprel[i];
        if (ELF64_R_TYPE(r->r_info) != R_X86_64_JUMP_SLOT)
            continue;
        uintptr_t t = target_of(m, &d, r, lazy);
        if (!t)
            continue;
        long k = stub_for(t);
        if (k < 0) {
            if (!full_said++)
                cg_note("library calls: more call targets than stubs (8192): the calls of ",
                        mod_name(m), " and later modules are partly not counted");
            break;
        }
        uintptr_t *got = (uintptr_t *)(m->bias + r->r_offset);
        uintptr_t at = (uintptr_t)got;
        if (at >= rlo && at < rhi && !opened) {
            if (mprotect((void *)rlo, rhi - rlo, PROT_READ | PROT_WRITE) != 0) {
                cg_note("library calls: cannot make the GOT of ", mod_name(m),
                        " writable (mprotect refused): its library calls are partly not counted");
                return;
            }
            opened = 1;
        }
        __atomic_store_n(got, (uintptr_t)(cg_lc_stubs + 16 * (uintptr_t)k), __ATOMIC_RELEASE);
    }
    if (opened)
        mprotect((void *)rlo, rhi - rlo, PROT_READ);
}

/* The stubs' slow path (arch/x86_64/libcalls.S): a new arc, or a thread's
 * first call.  errno is the program's: the callee has yet to run, and may
 * read it (a caller may set errno = 0 before strtol). */
void cg_lc_slow_c(uintptr_t from, uintptr_t self) CG_HIDDEN;
void cg_lc_slow_c(uintptr_t from, uintptr_t self)
{
    int saved = errno;
    cg_arc_slow(from, self);
    errno = saved;
}

/* In the base namespace: the one RTLD_DEFAULT looks in (a dlmopen'ed
 * module has its own copies of libc and the rest; it is left alone). */
static int base_namespace(uintptr_t lo)
{
    Dl_info info;
    struct link_map *lm = NULL;
    Lmid_t id = LM_ID_BASE;
    if (!dladdr1((void *)lo, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
        return 0;
    return dlinfo(lm, RTLD_DI_LMID, &id) == 0 && id == LM_ID_BASE;
}

typedef void *(*dlopen_fn)(const char *, int);
static dlopen_fn real_dlopen;
static void unpin(struct lc_module *m);

/* Takes a reference to M (dlopen of its name, RTLD_NOLOAD), so that it
 * stays mapped while it is read: 1, or 0 if it is gone or another module
 * now has that name (profiled set to -1: not known, looked at again).
 * The executable and the loader are never unmapped: no reference. */
static int pin(struct lc_module *m)
{
    m->pin = NULL;
    m->profiled = -1;
    if (!m->path[0] || (m->lo <= (uintptr_t)&lc_lock && (uintptr_t)&lc_lock < m->hi)) {
        m->profiled = 0;
        return 1;
    }
    if (!real_dlopen)
        real_dlopen = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
    void *h = real_dlopen ? real_dlopen(m->path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    struct link_map *lm = NULL;
    if (h && (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || lm->l_addr != m->bias)) {
        m->pin = h;
        unpin(m);
        return 0;
    }
    if (!h) {
        /* the vDSO and other modules not opened by a name the loader
         * finds again: never unloaded by dlclose either */
        if (strncmp(m->path, "linux-vdso", 10) != 0 && strncmp(m->path, "linux-gate", 10) != 0)
            return 0;
    }
    m->pin = h;
    m->profiled = 0;
    return 1;
}

/* Through the loader's own dlclose: through ours (modules.c) the counts
 * of t0600's plugin, loaded twice at one address, were no longer split by
 * load (not understood yet).  Limit: if the program's dlclose of this
 * module ran meanwhile, this one unmaps it without modules.c's notes, and
 * its arcs are not split from a later load at the same address. */
static void unpin(struct lc_module *m)
{
    typedef int (*dlclose_fn)(void *);
    static dlclose_fn real_dlclose;
    if (!m->pin)
        return;
    if (!real_dlclose)
        real_dlclose = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
    if (real_dlclose)
        real_dlclose(m->pin);
    m->pin = NULL;
}

/* One pass over the modules mapped now, under lc_lock: those gone are
 * forgotten (a module mapped later where one was is a new one), those new
 * are hooked -- with LAZY, their lazy entries too (see invariant 6). */
static void scan_once(int lazy)
{
    lc_nseen = 0;
    dl_iterate_phdr(collect, NULL);
    unsigned nnew = 0;
    for (unsigned i = 0; i < lc_nseen; i++) {
        struct lc_module *m = &lc_seen[i];
        int known = 0;
        for (unsigned j = 0; j < lc_nmods && !known; j++)
            if (lc_mods[j].bias == m->bias && lc_mods[j].lo == m->lo && lc_mods[j].hi == m->hi) {
                m->profiled = lc_mods[j].profiled;
                known = 1;
            }
        if (known)
            continue;
        /* another thread's dlclose may unmap it once the loader's list is
         * let go: a reference of our own keeps it (and its name) while it
         * is read and hooked; one gone already is left for the next pass */
        if (m->phnum < 0 || !pin(m))
            continue;
        struct lc_dyn d;
        m->profiled = read_dynamic(m, &d) == 0 && profiled(&d);
        m->fresh = 1;
        nnew++;
    }
    memcpy(lc_mods, lc_seen, lc_nseen * sizeof *lc_mods);
    lc_nmods = lc_nseen;
    for (unsigned i = 0; nnew && i < lc_nmods; i++)
        if (lc_mods[i].fresh) {
            lc_mods[i].fresh = 0;
            if (hooked(&lc_mods[i]) && base_namespace(lc_mods[i].lo))
                hook_module(&lc_mods[i], lazy);
            unpin(&lc_mods[i]);
        }
    /* those that could not be pinned (gone, or not loaded by name) are
     * not known yet: a later pass looks at them again */
    unsigned k = 0;
    for (unsigned i = 0; i < lc_nmods; i++)
        if (lc_mods[i].phnum >= 0 && lc_mods[i].profiled != -1)
            lc_mods[k++] = lc_mods[i];
    lc_nmods = k;
}

/* A pass never waits for another: the thread holding lc_lock may be
 * waiting for the loader's lock (dlsym, dladdr) that this one holds -- a
 * constructor run by dlopen that calls dlopen or dlclose.  A pass asked
 * for while another runs is made by that one, once it is through, with
 * bound entries only (the new module may be running by then). */
static int lc_pending;

/* the runtime's own work (CG_OWN): its samples are not the program's */
CG_OWN static void lc_scan(int lazy)
{
    int saved = errno;
    for (;;) {
        __atomic_store_n(&lc_pending, 1, __ATOMIC_SEQ_CST);
        if (__atomic_exchange_n(&lc_lock, 1, __ATOMIC_ACQUIRE))
            break; /* its holder will look again */
        while (__atomic_exchange_n(&lc_pending, 0, __ATOMIC_SEQ_CST)) {
            scan_once(lazy);
            lazy = 0;
        }
        __atomic_store_n(&lc_lock, 0, __ATOMIC_RELEASE);
        if (!__atomic_load_n(&lc_pending, __ATOMIC_SEQ_CST))
            break;
    }
    errno = saved;
}

/* After a dlclose (runtime/modules.c): what went is forgotten. */
void cg_libcalls_rescan(void)
{
    if (__atomic_load_n(&lc_on, __ATOMIC_ACQUIRE))
        lc_scan(0);
}

/* ---- dlopen ---------------------------------------------------------
 *
 * glibc's dlopen looks at its caller (its return address) to choose the
 * namespace, the RPATH/RUNPATH to search for a bare name, and $ORIGIN.
 * The interposer (arch/x86_64/dlopen.S) asks cg_dlopen_route whether the
 * caller can make a difference; if not, it calls cg_dlopen_counted, which
 * calls the real dlopen itself and hooks what it loaded.  If it can, the
 * interposer jumps straight to glibc's dlopen with the caller's own return
 * address, and what it loads is hooked at the next pass (bound entries
 * only, invariant 6): a documented limit (docs/libcalls.md). */

static void *dlopen_none(const char *file, int mode)
{
    (void)file;
    (void)mode;
    return NULL;
}

/* Has the module containing CALLER a DT_RPATH or DT_RUNPATH? */
static int has_search_path(const struct link_map *lm)
{
    for (const ElfW(Dyn) *dyn = lm->l_ld; dyn && dyn->d_tag != DT_NULL; dyn++)
        if (dyn->d_tag == DT_RPATH || dyn->d_tag == DT_RUNPATH)
            return 1;
    return 0;
}

/* 0: call cg_dlopen_counted; else the address of glibc's dlopen, for the
 * interposer to jump to as the caller called it. */
void *cg_dlopen_route(const char *file, int mode, void *caller) CG_HIDDEN;
void *cg_dlopen_route(const char *file, int mode, void *caller)
{
    (void)mode;
    int saved = errno;
    if (!real_dlopen)
        real_dlopen = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
    void *direct = real_dlopen ? (void *)real_dlopen : (void *)dlopen_none;
    if (!__atomic_load_n(&lc_on, __ATOMIC_ACQUIRE) || !real_dlopen || !file)
        return direct;
    lc_scan(0); /* what an earlier direct dlopen loaded */
    errno = saved;
    if (strchr(file, '$'))
        return direct; /* $ORIGIN is the caller's */
    Dl_info info;
    struct link_map *lm = NULL;
    Lmid_t id = LM_ID_BASE;
    if (!dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
        dlinfo(lm, RTLD_DI_LMID, &id) != 0 || id != LM_ID_BASE) {
        errno = saved;
        return direct; /* another namespace, or a caller glibc would not know either */
    }
    errno = saved;
    if (strchr(file, '/'))
        return NULL; /* a path: searched nowhere, the same from any caller */
    uintptr_t c = (uintptr_t)caller;
    if (c >= self_lo && c < self_hi)
        return NULL;
    /* a bare name: the caller's RPATH/RUNPATH would be searched, and that of
     * the modules that loaded it; the executable (first in the list, loaded
     * by nobody) without either searches what libcgprof would */
    if (lm->l_prev == NULL && !has_search_path(lm))
        return NULL;
    return direct;
}

void *cg_dlopen_counted(const char *file, int mode) CG_HIDDEN;
void *cg_dlopen_counted(const char *file, int mode)
{
    void *h = real_dlopen(file, mode);
    if (h) /* a failed dlopen's dlerror() is the program's: left alone */
        lc_scan(!(mode & RTLD_DEEPBIND));
    return h;
}

/* The library calls of the modules present now start being counted. */
void cg_libcalls_init(void)
{
    const char *e = getenv("CGPROF_LIBCALLS");
    if (e && strcmp(e, "0") == 0)
        return;
    lc_sites_off = e && strcmp(e, "plt") == 0;
    lc_every = e && strcmp(e, "all") == 0;
    lc_nseen = 0;
    dl_iterate_phdr(collect, NULL);
    if (!self_hi)
        return; /* not found: nothing can be trusted */
    __atomic_store_n(&lc_on, 1, __ATOMIC_RELEASE);
    lc_scan(1);
}

/* Start-up, shut-down and glibc's profiling entry points.
 *
 * libcgprof replaces glibc's gmon runtime whole: when it is preloaded or
 * linked in, the program's references to __monstartup, _mcleanup,
 * moncontrol, mcount and __fentry__ all bind here (profil stays glibc's), so glibc's
 * runtime never starts and only our gmon.out is written.
 */
#include "rt.h"
#include "unwind.h"
#define CGPROF_RUNTIME /* cgprof_dump defined here: not weak */
#include "../include/cgprof.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

static int initialized;
int cg_format = CG_FORMAT_GMON;
int cg_is_root;
int cg_inert;

/* The runtime's mark, an ELF note in every module that holds a copy of it
 * (name "cgprof", type 1): the linker puts libcgprof.a's in the
 * executable's PT_NOTE segment. */
__asm__(".pushsection .note.cgprof,\"a\",@note\n"
        ".balign 4\n"
        ".long 7\n.long 4\n.long 1\n"
        ".asciz \"cgprof\"\n"
        ".balign 4\n"
        ".long 1\n"
        ".popsection\n");

/* Whether the executable holds its own copy of the runtime (libcgprof.a
 * linked in) and this copy is another (libcgprof.so, preloaded by cgprof
 * record or by hand).  Read from the executable's program headers (the
 * first object dl_iterate_phdr reports: its load bias is known there, a
 * static-pie's too, which has no PT_PHDR), before anything else is set
 * up. */
static int has_copy(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    int *found = data;
    const ElfW(Phdr) *ph = info->dlpi_phdr;
    uintptr_t bias = info->dlpi_addr, me = (uintptr_t)&has_copy;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (ph[i].p_type == PT_LOAD && me - (bias + ph[i].p_vaddr) < ph[i].p_memsz)
            return 1; /* this copy is the executable's */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (ph[i].p_type != PT_NOTE)
            continue;
        const unsigned char *p = (const unsigned char *)(bias + ph[i].p_vaddr);
        const unsigned char *end = p + ph[i].p_filesz;
        while ((size_t)(end - p) >= 12) {
            uint32_t h[3];
            memcpy(h, p, sizeof h);
            size_t name = (h[0] + 3) & ~(size_t)3, desc = (h[1] + 3) & ~(size_t)3;
            if ((size_t)(end - p) - 12 < name || (size_t)(end - p) - 12 - name < desc)
                break;
            if (h[0] == 7 && h[2] == 1 && memcmp(p + 12, "cgprof", 7) == 0) {
                *found = 1;
                return 1;
            }
            p += 12 + name + desc;
        }
    }
    return 1; /* the executable only */
}

static int program_has_copy(void)
{
    int found = 0;
    dl_iterate_phdr(has_copy, &found);
    return found;
}

/* Finds the main executable (the first object dl_iterate_phdr reports). */
static int find_main(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct cg_hist *h = data;
    uintptr_t lo = UINTPTR_MAX, hi = 0, text_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        if (ph->p_vaddr < lo)
            lo = ph->p_vaddr;
        if (ph->p_vaddr + ph->p_memsz > hi)
            hi = ph->p_vaddr + ph->p_memsz;
        if ((ph->p_flags & PF_X) && ph->p_vaddr + ph->p_memsz > text_hi)
            text_hi = ph->p_vaddr + ph->p_memsz;
    }
    h->bias = info->dlpi_addr;
    h->image_lo = lo;
    h->image_hi = hi;
    /* glibc's range: __executable_start to etext, i.e. the start of the
     * image to the end of the last executable segment, rounded to 4. */
    h->lowpc = lo & ~(uintptr_t)3;
    h->highpc = (text_hi + 3) & ~(uintptr_t)3;
    return 1;
}

static void hist_init(void)
{
    dl_iterate_phdr(find_main, &cg_hist);
    if (cg_hist.highpc <= cg_hist.lowpc)
        return;
    /* glibc's bin count: two bytes of counter per two bytes of text,
     * rounded to 8 bytes -- gprof then shows the same granularity. */
    uint64_t text = cg_hist.highpc - cg_hist.lowpc;
    uint64_t kbytes = ((text / 2) + 7) & ~(uint64_t)7;
    cg_hist.nbins = (uint32_t)(kbytes / 2);
}

static const struct {
    const char *name;
    int sig;
} signames[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
    {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"CONT", SIGCONT}, {"TSTP", SIGTSTP}, {"WINCH", SIGWINCH},
};

static int parse_signal(const char *s)
{
    if (strncasecmp(s, "SIG", 3) == 0)
        s += 3;
    char *end;
    long n = strtol(s, &end, 10);
    if (*s && !*end)
        return n > 0 && n < NSIG && n != SIGKILL && n != SIGSTOP && n != cg_sample_sig ? (int)n
                                                                                       : -1;
    for (size_t i = 0; i < sizeof signames / sizeof signames[0]; i++)
        if (strcasecmp(s, signames[i].name) == 0)
            return signames[i].sig;
    return -1;
}

static void on_dump_signal(int sig)
{
    (void)sig;
    cg_write_profile(0);
}

void cg_after_fork_child(void)
{
    cg_endings_after_fork();
    cg_modules_after_fork();
    cg_output_after_fork();
    cg_arcs_after_fork();
    cg_stacks_after_fork();
    cg_sample_after_fork();
}

static uint64_t env_u64(const char *name, uint64_t dflt, uint64_t max)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno == ERANGE || (!errno && !*end && n > max)) {
        cg_say("ignoring ", name, ": out of range");
        return dflt;
    }
    if (errno || *end) {
        cg_say("ignoring ", name, ": not a valid number");
        return dflt;
    }
    return n;
}

/* Runs from our constructor, or from the first call of a profiled function
 * if that comes first (a constructor of an object initialized before us).
 * The runtime's own work (CG_OWN, in_runtime): the samples taken in it once
 * sampling has started (hooking the library calls: dlopen, dlsym, reading
 * the modules) are not the program's time; they showed as calls from the
 * loader's call_init to dlopen, _dl_addr, getenv. */
CG_OWN void cg_init(void)
{
    if (__atomic_exchange_n(&initialized, 1, __ATOMIC_ACQ_REL))
        return;
    if (program_has_copy()) {
        /* two runtimes in one process would each count half and write
         * over each other: the executable's profiles it, this one only
         * passes every call it interposes through */
        cg_inert = 1;
        __atomic_store_n(&cg_recording, 0, __ATOMIC_RELAXED);
        return;
    }
    int saved = errno;
    int prev = cg_tls.in_runtime;
    cg_tls.in_runtime = 1;
    cg_hz = (unsigned)env_u64("CGPROF_FREQ", 1000, 100000);
    cg_period = env_u64("CGPROF_PERIOD", 0, UINT64_MAX);
    const char *ev = getenv("CGPROF_EVENT");
    cg_event = ev && *ev ? cg_event_find(ev) : cg_event_default();
    if (!cg_event)
        cg_say("CGPROF_EVENT=", ev, ": unknown event; nothing will be sampled");
    cg_rate_check(); /* above 10 kHz, a perf clock's rate this machine can bear */
    cg_tables_set_limit(env_u64("CGPROF_ARC_MEMORY", UINT64_MAX, UINT64_MAX));
    const char *fmt = getenv("CGPROF_FORMAT");
    if (fmt && strcmp(fmt, "cgprof") == 0)
        cg_format = CG_FORMAT_CGPROF;
    else if (fmt && *fmt && strcmp(fmt, "gmon") != 0)
        cg_say("CGPROF_FORMAT=", fmt, ": unknown format; writing gmon.out");
    cg_is_root = env_u64("CGPROF_ROOT_PID", 0, UINT32_MAX) == (uint64_t)getpid();
    cg_endings_init();
    cg_signals_init(cg_event && cg_event->kind == CG_EV_ITIMER);
    cg_altstack_init(); /* the main thread's: the ending runs after a stack overflow */
    /* stacks are kept in the cgprof format only (gmon.out has no room) */
    cg_stacks_on = cg_format == CG_FORMAT_CGPROF && env_u64("CGPROF_STACKS", 1, 1) != 0;
    /* nothing sampled (-F 0, an unknown event): no stacks, and no unwind
     * tables built for them (8 ms of a counts-only run of SQLite) */
    if (cg_hz == 0 || !cg_event)
        cg_stacks_on = 0;
    /* 1 (a thread signalled at every sample can see EINTR: docs/stacks.md,
     * "One moment per stack"); 2: every user-mode sample is taken in the
     * thread itself, from a user-only event; 3, the default: those of the
     * threads whose stacks outgrow their copies; 0: copies only */
    cg_stacks_sync = (int)env_u64("CGPROF_STACK_SYNC", 3, 3);
    /* the kernel's own frames above a sample taken in it (record --kernel) */
    cg_kernel_frames = cg_stacks_on && env_u64("CGPROF_KERNEL", 0, 1) != 0;
    if (cg_stacks_on)
        cg_stack_bounds_init(); /* this (the main) thread's stack */
    cg_modules_snapshot();
    cg_output_init();
    hist_init();
    if (cg_format == CG_FORMAT_CGPROF && cg_is_root)
        cg_output_check(); /* it writes even without -pg */
    if (cg_sample_init() != 0)
        cg_say("cannot start sampling ", cg_event->name, ": no samples will be taken");
    const char *ds = getenv("CGPROF_DUMP_SIGNAL");
    if (ds && *ds) {
        int sig = parse_signal(ds);
        if (sig < 0) {
            cg_say("CGPROF_DUMP_SIGNAL=", ds, ": not a signal that can dump the profile");
        } else {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_dump_signal;
            sa.sa_flags = SA_RESTART;
            sigemptyset(&sa.sa_mask);
            sigaction(sig, &sa, NULL);
        }
    }
    pthread_atfork(NULL, NULL, cg_after_fork_child);
    cg_thread_track();
    /* the cgprof format only: gmon.out has no place for arcs into other objects */
    if (cg_format == CG_FORMAT_CGPROF)
        cg_libcalls_init();
    if (cg_format == CG_FORMAT_CGPROF && cg_is_root)
        cg_helper_start();
    cg_tls.in_runtime = prev;
    errno = saved;
}

__attribute__((constructor(101))) static void cg_ctor(void)
{
    cg_init();
}

__attribute__((destructor(101))) static void cg_fini(void)
{
    cg_write_final(CG_END_EXIT); /* unless _mcleanup wrote it already */
}

/* ---- glibc's profiling interface ---------------------------------- */

/* gcrt1.o calls this with the text range before main; our range is the
 * same one, found from the program headers, so the arguments are not
 * needed.  It only makes sure we are initialized. */
API void __monstartup(unsigned long lowpc, unsigned long highpc)
{
    (void)lowpc;
    (void)highpc;
    cg_init();
    if (cg_inert)
        return;
    if (!__atomic_exchange_n(&cg_instrumented, 1, __ATOMIC_RELAXED) &&
        !(cg_format == CG_FORMAT_CGPROF && cg_is_root))
        cg_output_check(); /* said now, not only when the run is over */
    cg_helper_start();
}

API void monstartup(unsigned long lowpc, unsigned long highpc)
{
    __monstartup(lowpc, highpc);
}

/* Whether the code at RET is exit's own (its atexit handlers' caller, in
 * the C library).  Not known in a static executable, where the C library
 * is the executable (the first module, l_prev NULL): 0.  The runtime's own
 * work (CG_OWN): dladdr's symbol search showed as _dl_addr under exit. */
CG_OWN static int in_exit(void *ret)
{
    Dl_info a, b;
    struct link_map *la = NULL, *lb = NULL;
    return dladdr1(ret, &a, (void **)&la, RTLD_DL_LINKMAP) && la &&
           dladdr1((void *)&exit, &b, (void **)&lb, RTLD_DL_LINKMAP) && la == lb && lb->l_prev;
}

/* Registered with atexit by gcrt1.o; also callable by a program.  As
 * glibc's, it stops profiling and writes the profile: the one final
 * write of the process (calls made after it are not counted).  In the
 * cgprof format, when exit calls it (gcrt1.o's atexit), it does nothing:
 * the executable's destructors and the atexit handlers registered before
 * gcrt1.o's still run, and their calls are counted, until cg_fini makes
 * the final write (libcgprof is finalized after the executable). */
API void _mcleanup(void)
{
    if (cg_format == CG_FORMAT_CGPROF && in_exit(__builtin_return_address(0)))
        return;
    __atomic_store_n(&cg_recording, 0, __ATOMIC_RELAXED);
    cg_write_final(CG_END_EXIT);
}

API void moncontrol(int mode)
{
    if (cg_inert)
        return;
    __atomic_store_n(&cg_recording, mode != 0, __ATOMIC_RELAXED);
}

API int cgprof_dump(void)
{
    if (cg_inert)
        return 0;
    return cg_write_profile(0);
}

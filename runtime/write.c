/* Writing the profile: gmon.out in GNU format (version 1), atomically.
 *
 * Async-signal-safe throughout, so the same code serves exit, exec, the
 * dump signal and cgprof_dump(): memory comes from mmap, text is formatted
 * by hand, the file is written with write(2) under a temporary name and
 * renamed into place, so a reader never sees half a profile.
 *
 * Counts wider than the format: a histogram bin above 65535 is spread over
 * several histogram records of the same range (GNU gprof sums them), and an
 * arc count above 2^32-1 over several arc records (summed too).  Calls lost
 * for want of memory are written as an arc record from pc 0 to pc 0, which
 * no symbol covers; `cgprof report` reads it back and warns.
 */
#include "rt.h"
#include "writer.h"
#include "unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char out_path[4096];   /* CGPROF_OUTPUT, or empty */
static char out_prefix[4096]; /* GMON_OUT_PREFIX, or empty */
static int is_child;          /* forked child: a file of its own */
static int writing;           /* atomic: one writer at a time */
static uint64_t final_digest; /* what the last final write held; 0 = none */
static uint64_t last_digest;  /* what the last write of any kind held */
static int problems_said;     /* lost calls, unsampled threads: said once */
static int error_said;        /* errno of the last failure said; 0 after a success */
static int quiet, quiet_err;  /* a failure not to say yet: its errno */

void cg_say(const char *a, const char *b, const char *c)
{
    const char *parts[4] = {"cgprof: ", a, b, c};
    for (int i = 0; i < 4; i++)
        if (parts[i] && write(2, parts[i], strlen(parts[i])) < 0)
            return;
    if (write(2, "\n", 1) < 0)
        return;
}

/* A few perf_event_open failures in words (strerror is not
 * async-signal-safe). */
static const char *errno_text(int e)
{
    switch (e) {
    case ENOENT:
    case EOPNOTSUPP:
        return "not supported on this machine (no such counter; a VM often has no PMU)";
    case EACCES:
    case EPERM:
        return "not permitted (see /proc/sys/kernel/perf_event_paranoid)";
    case EMFILE:
    case ENFILE:
        return "too many open files (each sampled thread holds one: raise RLIMIT_NOFILE, "
               "ulimit -n)";
    case ENOSYS:
        return "no perf_event_open in this kernel";
    case -1: /* sampler.c: the ring buffer's mmap, EPERM */
        return "no locked memory left for its ring buffer (a user's rings may lock "
               "perf_event_mlock_kb per CPU, then RLIMIT_MEMLOCK: raise either, or run as "
               "root)";
    default:
        return "failed";
    }
}

/* Formats v in decimal ending just before `end`; returns the first char. */
/* "cgprof: N TEXT NAME", if N is not 0 */
static void say_count(uint64_t n, const char *text, const char *name)
{
    char num[24];
    if (n)
        cg_say(cg_utoa(n, num + sizeof num), text, name);
}

char *cg_utoa(uint64_t v, char *end)
{
    char *p = end;
    *--p = '\0';
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    return p;
}

static void copy(char *dst, const char *src, size_t cap)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void cg_output_init(void)
{
    extern char **environ;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "CGPROF_OUTPUT=", 14) == 0 && (*e)[14])
            copy(out_path, *e + 14, sizeof out_path);
        else if (strncmp(*e, "GMON_OUT_PREFIX=", 16) == 0 && (*e)[16])
            copy(out_prefix, *e + 16, sizeof out_prefix);
    }
}

static int kept_dir = -1, kept_file = -1;
static char kept_base[256]; /* the profile's name in kept_dir */

/* One descriptor held in reserve for the runtime's own use when the
 * program's threads' perf events, or its own files, use every descriptor
 * its limit allows: the profile's write (else lost: 512 threads under
 * `ulimit -n 300` on a loaded machine, the events of the threads gone not
 * yet all closed) and the sampler's scan of /proc/self/task (which closes
 * those events).  It is that directory, open: the scan reads it where it
 * is (cg_reserve_borrow), never giving a descriptor up -- a /dev/null
 * given up for the scan's open and taken again after left a moment in
 * which a thread's perf event could take its number, and the reserve was
 * gone (t0155 under sanitizers).  The writer gives it up for an open that
 * fails with EMFILE, and takes it again after.  Before it is closed it is
 * told from a descriptor of the program's that took its number (a close
 * it did not know was ours) by its device and inode.  Atomic: the writer
 * and the sampler thread may both want it. */
static int spare_out = -1;
static dev_t spare_dev;
static ino_t spare_ino;

void cg_reserve_take(void)
{
    struct stat st;
    if (__atomic_load_n(&spare_out, __ATOMIC_ACQUIRE) >= 0)
        return;
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    int none = -1;
    if (fstat(fd, &st) != 0 || (spare_dev = st.st_dev, spare_ino = st.st_ino, 0) ||
        !__atomic_compare_exchange_n(&spare_out, &none, fd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        close(fd);
}

/* The reserve, for the sampler's scan alone until cg_reserve_return: the
 * process's /proc/self/task, open (rewound), or -1. */
int cg_reserve_borrow(void)
{
    cg_reserve_take();
    int fd = __atomic_exchange_n(&spare_out, -1, __ATOMIC_ACQ_REL);
    if (fd >= 0 && lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void cg_reserve_return(int fd)
{
    int none = -1;
    if (fd >= 0 &&
        !__atomic_compare_exchange_n(&spare_out, &none, fd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        close(fd); /* the writer took another meanwhile */
}

/* A forked child: the reserve it inherited is its parent's task
 * directory; its own instead (one thread: nothing can take the number). */
static void reserve_after_fork(void)
{
    int fd = __atomic_exchange_n(&spare_out, -1, __ATOMIC_ACQ_REL);
    if (fd >= 0)
        close(fd);
    cg_reserve_take();
}

/* Gives the spare up: 1 if it was ours and is closed now (try again). */
static int spare_give(void)
{
    struct stat st;
    int fd = __atomic_exchange_n(&spare_out, -1, __ATOMIC_ACQ_REL);
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_dev != spare_dev || st.st_ino != spare_ino)
        return 0;
    close(fd);
    return 1;
}

/* open(2), with the reserve given up and the open tried again if every
 * descriptor is taken (EMFILE); the caller takes the reserve again once
 * it has closed what it opened (cg_reserve_take). */
int cg_open_reserved(const char *path, int flags, mode_t mode)
{
    int fd = open(path, flags, mode);
    if (fd < 0 && errno == EMFILE && spare_give())
        fd = open(path, flags, mode);
    return fd;
}

static void forget_kept(void)
{
    if (kept_file >= 0)
        close(kept_file);
    if (kept_dir >= 0)
        close(kept_dir);
    kept_file = kept_dir = -1;
}

void cg_output_after_fork(void)
{
    is_child = 1;
    writing = 0;
    final_digest = 0;
    last_digest = 0;
    error_said = 0;
    forget_kept(); /* the parent's file: the child writes NAME.PID */
    reserve_after_fork();
}

int cg_output_child(void)
{
    return is_child || cg_exec_child;
}

/* The file name, decided at write time as glibc does (so after chdir too). */
static void output_name(char *buf, size_t cap)
{
    char num[24];
    const char *pid = cg_utoa((uint64_t)getpid(), num + sizeof num);
    const char *dflt = cg_format == CG_FORMAT_CGPROF ? "cgprof.data" : "gmon.out";
    const char *base = out_path[0] ? out_path : out_prefix[0] ? out_prefix : dflt;
    /* a forked child, and in the cgprof format any process cgprof record
     * did not start itself (a -pg program run by a script), gets a file of
     * its own, so no process overwrites another's profile */
    int child = cg_output_child();
    int add_pid = out_prefix[0] && !out_path[0]   ? 1
                  : cg_format == CG_FORMAT_CGPROF ? child || !cg_is_root
                                                  : child;
    copy(buf, base, cap);
    if (add_pid) {
        size_t n = strlen(buf);
        if (n + 1 + strlen(pid) < cap) {
            buf[n] = '.';
            copy(buf + n + 1, pid, cap - n - 1);
        }
    }
    /* an image that an exec of this process started: NAME.execN, so the
     * images before it keep their profiles */
    if (cg_exec_gen) {
        char gen[24];
        const char *g = cg_utoa(cg_exec_gen, gen + sizeof gen);
        size_t n = strlen(buf);
        if (n + 5 + strlen(g) < cap) {
            copy(buf + n, ".exec", cap - n);
            copy(buf + n + 5, g, cap - n - 5);
        }
    }
}

static int write_all(int fd, const char *p, size_t n);
static int check_target(const char *name, const char **why, int *in_place);

/* One line per failure, naming the file and the reason; the same reason
 * is not said again until a write has succeeded. */
static void say_failure(const char *name, int err, const char *why)
{
    if (quiet) {
        quiet_err = err;
        return;
    }
    if (err == error_said)
        return;
    error_said = err;
    if (!why)
        why = strerrordesc_np(err);
    const char *parts[] = {"cgprof: cannot write the profile ", name, ": ", why ? why : "failed",
                           "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (write(2, parts[i], strlen(parts[i])) < 0)
            return;
}

/* NAME's temporary file: NAME.cgprof-tmp.PID */
static void tmp_name(char *tmp, size_t cap, const char *name)
{
    char num[24];
    copy(tmp, name, cap - 40);
    size_t n = strlen(tmp);
    copy(tmp + n, ".cgprof-tmp.", cap - n);
    n = strlen(tmp);
    copy(tmp + n, cg_utoa((uint64_t)getpid(), num + sizeof num), cap - n);
}

/* ---- what is kept before the program gives up its rights -------------
 *
 * A program that calls setuid() or chroot() (privileges.c interposes them)
 * may no longer be able to reach or replace its profile at exit: the path
 * leads nowhere in the new root, the directory is not the new user's.  So
 * just before, the profile's directory and the file itself are opened,
 * while they still can be, and kept: a write that then fails by the path
 * is made through the directory (a new root: the file is still replaced
 * atomically) or, failing that, into the kept file in place (a new user:
 * not atomic, but the run's data is kept). */
void cg_output_keep(void)
{
    if (kept_dir >= 0 || !(__atomic_load_n(&cg_instrumented, __ATOMIC_RELAXED) ||
                           (cg_format == CG_FORMAT_CGPROF && cg_is_root)))
        return; /* kept already, or this process writes no profile */
    int saved = errno;
    char name[4200], dir[4200];
    output_name(name, sizeof name);
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    const char *why;
    int in_place;
    /* nothing is kept for a target the path may not replace (read-only,
     * the program itself) or writes in place anyway (a device, a fifo) */
    if (check_target(name, &why, &in_place) == 0 && !in_place && strlen(base) < sizeof kept_base) {
        copy(dir, name, slash ? (size_t)(slash - name) + 2 : 1);
        if (!slash)
            copy(dir, ".", sizeof dir);
        else if (slash == name)
            copy(dir, "/", sizeof dir);
        copy(kept_base, base, sizeof kept_base);
        kept_dir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        /* not truncated: an earlier profile stays whole until replaced */
        if (kept_dir >= 0)
            kept_file = openat(kept_dir, kept_base, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    }
    errno = saved;
}

/* Writes LEN bytes through what cg_output_keep kept; 0, or an errno. */
static int store_kept(const char *buf, size_t len)
{
    char tmp[300];
    if (kept_dir >= 0) { /* the directory: a temporary renamed into place */
        tmp_name(tmp, sizeof tmp, kept_base);
        int fd = openat(kept_dir, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd >= 0) {
            int ok = write_all(fd, buf, len) == 0;
            ok &= close(fd) == 0;
            if (ok && renameat(kept_dir, tmp, kept_dir, kept_base) == 0) {
                if (kept_file >= 0) /* the new file is the one to keep now */
                    close(kept_file);
                kept_file = openat(kept_dir, kept_base, O_WRONLY | O_CLOEXEC);
                return 0;
            }
            unlinkat(kept_dir, tmp, 0);
        }
    }
    if (kept_file < 0)
        return EBADF;
    if (ftruncate(kept_file, 0) != 0 || lseek(kept_file, 0, SEEK_SET) != 0 ||
        write_all(kept_file, buf, len) != 0)
        return errno;
    return 0;
}

/* Writes LEN bytes to NAME: a temporary file renamed into place, so a
 * crash or a full disk never leaves a torn profile where a good one was.
 * 0, or -1 after saying why. */
static int store_path(const char *name, const char *buf, size_t len);
static int store(const char *name, const char *buf, size_t len)
{
    if (kept_dir < 0 && kept_file < 0)
        return store_path(name, buf, len);
    quiet = 1; /* the path's failure is said only if nothing kept helps */
    quiet_err = 0;
    int rc = store_path(name, buf, len);
    int err = quiet_err;
    quiet = 0;
    if (rc == 0) {
        if (kept_file >= 0) { /* replaced by the path: keep the new file */
            close(kept_file);
            kept_file = kept_dir >= 0 ? openat(kept_dir, kept_base, O_WRONLY | O_CLOEXEC) : -1;
        }
        return 0;
    }
    if ((err == EACCES || err == EPERM || err == ENOENT || err == EROFS || err == ENOTDIR) &&
        store_kept(buf, len) == 0) {
        error_said = 0;
        return 0;
    }
    say_failure(name, err ? err : EIO, NULL);
    return -1;
}

static int store_path(const char *name, const char *buf, size_t len)
{
    char tmp[4300];
    const char *why;
    int in_place;
    int err = check_target(name, &why, &in_place);
    if (err) {
        say_failure(name, err, why);
        return -1;
    }
    /* over the file size limit the kernel would send SIGXFSZ, which the
     * program did not ask for: fail as a full disk does instead */
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && len > rl.rlim_cur) {
        say_failure(name, EFBIG, "the file size limit (ulimit -f) is smaller than the profile");
        return -1;
    }
    if (in_place)
        copy(tmp, name, sizeof tmp);
    else
        tmp_name(tmp, sizeof tmp, name);
    int fd = cg_open_reserved(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        say_failure(name, errno, NULL);
        return -1;
    }
    if (write_all(fd, buf, len) != 0) {
        err = errno;
        close(fd);
        cg_reserve_take();
        if (!in_place)
            unlink(tmp);
        say_failure(name, err, NULL);
        return -1;
    }
    int closed = close(fd);
    err = errno;
    cg_reserve_take(); /* again, if it was given up */
    if (closed != 0 && !in_place) {
        unlink(tmp);
        say_failure(name, err, NULL);
        return -1;
    }
    if (!in_place && rename(tmp, name) != 0) {
        err = errno;
        unlink(tmp);
        say_failure(name, err, NULL);
        return -1;
    }
    error_said = 0;
    return 0;
}

/* At start: whether the profile can be written where it will go, said
 * now rather than only when the run is over. */
int cg_output_check(void)
{
    char name[4200], tmp[4300];
    cg_reserve_take();
    output_name(name, sizeof name);
    const char *why;
    int in_place;
    int err = check_target(name, &why, &in_place);
    if (!err && !in_place) {
        tmp_name(tmp, sizeof tmp, name);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) {
            err = errno == EEXIST ? 0 : errno;
        } else {
            close(fd);
            unlink(tmp);
        }
    }
    if (err)
        say_failure(name, err, why);
    return err ? -1 : 0;
}

/* Whether the profile may go to NAME: not a directory, not a read-only
 * file (glibc's open would fail there too), not the program itself.  0,
 * or an errno and, in *why, the reason when errno's text would mislead. */
static int check_target(const char *name, const char **why, int *in_place)
{
    struct stat st, exe;
    *why = NULL;
    *in_place = 0;
    if (stat(name, &st) != 0)
        return errno == ENOENT ? 0 : errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    if (stat("/proc/self/exe", &exe) == 0 && exe.st_dev == st.st_dev && exe.st_ino == st.st_ino) {
        *why = "it is the program being profiled";
        return ETXTBSY;
    }
    if (!(st.st_mode & 0222) || access(name, W_OK) != 0) {
        *why = "the file is read-only (it is left as it is)";
        return EACCES;
    }
    /* a device or pipe (/dev/null, a fifo) is written, never replaced */
    *in_place = !S_ISREG(st.st_mode);
    return 0;
}

/* Sums every key's counts over R's tables and generations into M, a table
 * at most half full.  It is sized by the keys of the tables' current
 * generations, which hold every key of the older ones, not by the
 * generations' sizes (relayouts make those 8 slots per key and more:
 * measured on SQLite's speedtest1, 1,400 keys in 32,000 slots, and a 1 MB
 * merged table to map and fill).  A key can be missing from the current
 * generation (a signal handler's call during a growth) and other threads
 * may add keys meanwhile: if they fill it past half, it is made again
 * twice the size.  The home slot is the product's top bits (its low bits
 * depend on the key's low bits only). */
static int merge_tables(struct merged *m, const struct cg_registry *r)
{
    uint64_t want = 16;
    for (struct cg_table *tb = cg_tables(r); tb; tb = tb->next)
        want += __atomic_load_n(&tb->nkeys, __ATOMIC_RELAXED);
    for (;;) {
        int bits = 4;
        while ((1ull << bits) < want * 2)
            bits++;
        m->cap = 1ull << bits;
        m->bytes = m->cap * sizeof *m->arcs;
        m->arcs = mmap(NULL, m->bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (m->arcs == MAP_FAILED)
            return -1;
        m->n = 0;
        m->total = 0;
        int full = 0;
        for (struct cg_table *tb = cg_tables(r); tb && !full; tb = tb->next) {
            for (struct cg_gen *g = __atomic_load_n(&tb->gen, __ATOMIC_ACQUIRE); g && !full;
                 g = g->older) {
                for (uint64_t i = 0; i < g->nslots; i++) {
                    const struct cg_slot *a = &g->slots[i];
                    uintptr_t self = __atomic_load_n(&a->self, __ATOMIC_ACQUIRE);
                    uint64_t count = __atomic_load_n(&a->count, __ATOMIC_RELAXED);
                    if (self == 0 || count == 0)
                        continue;
                    uintptr_t from = a->from;
                    uint64_t h = ((from ^ (self << 17)) * CG_HASH_MUL) >> (64 - bits);
                    while (m->arcs[h].self && (m->arcs[h].from != from || m->arcs[h].self != self))
                        h = (h + 1) & (m->cap - 1);
                    if (!m->arcs[h].self) {
                        if ((m->n + 1) * 2 > m->cap) {
                            full = 1;
                            break;
                        }
                        m->arcs[h].from = from;
                        m->arcs[h].self = self;
                        m->n++;
                    }
                    m->arcs[h].count += count;
                    m->total += count;
                }
            }
        }
        if (!full)
            return 0;
        munmap(m->arcs, m->bytes);
        want = m->cap;
    }
}

/* ---- arcs of unmapped code -------------------------------------------
 *
 * Arcs are kept by pc alone (generations would cost mcount's fast path), so
 * when code is unmapped and other code may come to the same addresses, the
 * counts its arcs have reached are noted (cg_arcs_freeze, from the module
 * snapshot, never a signal handler): at write time the part of an arc's
 * count up to each note is the unmapped module's, the rest the module
 * mapped there since (profile.c). */
static struct cg_frozen_arc *frozen;
static uint64_t nfrozen, frozen_cap;

/* Room in the notes for N more, made now: memory mapped after an unmapping
 * could take the hole the unmapped code left, where the program's next
 * dlopen would have gone.  0, or -1. */
static int frozen_room(uint64_t n)
{
    if (nfrozen + n <= frozen_cap)
        return 0;
    uint64_t cap = frozen_cap ? frozen_cap : 256;
    while (cap < nfrozen + n)
        cap *= 2;
    /* a writer may be reading the old array: it is never unmapped (it
     * grows by doubling, so what it costs is bounded by twice) */
    struct cg_frozen_arc *p = cg_map(cap * sizeof *p);
    if (!p)
        return -1;
    if (frozen)
        memcpy(p, frozen, nfrozen * sizeof *p);
    __atomic_store_n(&frozen, p, __ATOMIC_RELEASE);
    frozen_cap = cap;
    return 0;
}

void cg_arcs_freeze_reserve(void)
{
    struct merged m;
    if (merge_tables(&m, &cg_arc_tables) != 0)
        return;
    munmap(m.arcs, m.bytes);
    frozen_room(m.n);
}

void cg_arcs_freeze(const uintptr_t *lo, const uintptr_t *hi, unsigned nranges, unsigned gen)
{
    struct merged m;
    if (nranges == 0 || merge_tables(&m, &cg_arc_tables) != 0)
        return;
    for (uint64_t i = 0; i < m.cap; i++) {
        const struct cg_slot *a = &m.arcs[i];
        if (!a->self)
            continue;
        int in = 0;
        for (unsigned k = 0; k < nranges && !in; k++)
            in = (a->from >= lo[k] && a->from < hi[k]) || (a->self >= lo[k] && a->self < hi[k]);
        if (!in)
            continue;
        if (frozen_room(1) != 0)
            break; /* named as before: by the module mapped there last */
        frozen[nfrozen] = (struct cg_frozen_arc){a->from, a->self, a->count, gen};
        __atomic_store_n(&nfrozen, nfrozen + 1, __ATOMIC_RELEASE);
    }
    munmap(m.arcs, m.bytes);
}

const struct cg_frozen_arc *cg_arcs_frozen(uint64_t *n)
{
    *n = __atomic_load_n(&nfrozen, __ATOMIC_ACQUIRE);
    return __atomic_load_n(&frozen, __ATOMIC_ACQUIRE);
}

/* The executable's histogram, made from the merged samples. */
struct hist {
    uint64_t *bins;
    size_t bytes;
    uint64_t max;
};

static int make_hist(struct hist *h, const struct merged *samples)
{
    h->max = 0;
    h->bytes = ((size_t)cg_hist.nbins + 1) * sizeof *h->bins;
    h->bins = mmap(NULL, h->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (h->bins == MAP_FAILED)
        return -1;
    uintptr_t lo = cg_hist.bias + cg_hist.lowpc, range = cg_hist.highpc - cg_hist.lowpc;
    for (uint64_t i = 0; i < samples->cap && cg_hist.nbins; i++) {
        const struct cg_slot *s = &samples->arcs[i];
        uintptr_t off = (s->from & CG_PC_MASK) - lo; /* the executable: never unmapped */
        if (!s->self || off >= range)
            continue;
        /* gprof reads bin i as [lowpc + i*range/nbins, ...): match it */
        uint64_t bin = (uint64_t)((unsigned __int128)off * cg_hist.nbins / range);
        h->bins[bin] += s->count;
        if (h->bins[bin] > h->max)
            h->max = h->bins[bin];
    }
    return 0;
}

/* Link-time address for pcs inside the executable (PIE: minus the load
 * bias, as glibc writes them); other pcs stay as they were at run time. */
static uintptr_t file_pc(uintptr_t pc)
{
    uintptr_t lo = cg_hist.bias + cg_hist.image_lo, hi = cg_hist.bias + cg_hist.image_hi;
    return pc >= lo && pc < hi ? pc - cg_hist.bias : pc;
}

void cg_put(struct out *o, const void *p, size_t n)
{
    if (o->len + n <= o->cap)
        memcpy(o->buf + o->len, p, n);
    o->len += n;
}

#define put cg_put

static void put_arc(struct out *o, uintptr_t from, uintptr_t self, uint32_t count)
{
    unsigned char tag = 1;
    put(o, &tag, 1);
    put(o, &from, sizeof from);
    put(o, &self, sizeof self);
    put(o, &count, sizeof count);
}

static void put_arc_wide(struct out *o, uintptr_t from, uintptr_t self, uint64_t count)
{
    while (count > UINT32_MAX) {
        put_arc(o, from, self, UINT32_MAX);
        count -= UINT32_MAX;
    }
    if (count)
        put_arc(o, from, self, (uint32_t)count);
}

/* Lays out the whole file in o; with o->cap == 0 only measures it. */
/* Samples per second of the profile.  itimer: ITIMER_PROF cannot fire
 * faster than the kernel's tick and reports no overruns, so its real rate
 * is measured -- samples taken over the CPU time used -- to keep seconds
 * right, however few the samples (a short run's 16 samples of 60 ms at
 * the rate asked, 1 kHz, were 16 ms; at 10 kHz 1.6 ms).  Every other time
 * source runs at the rate asked for. */
uint64_t cg_sample_rate(uint64_t samples)
{
    uint64_t hz = cg_hz ? cg_hz : 1000;
    struct timespec ts;
    if (!cg_event || cg_event->kind != CG_EV_ITIMER || samples == 0 ||
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return hz;
    double cpu = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    uint64_t r = cpu > 0 ? (uint64_t)(samples / cpu + 0.5) : hz;
    return r > 0 && r < hz ? r : hz;
}

static void layout_gmon(struct out *o, const struct merged *m, const struct hist *h, uint64_t lost,
                        uint64_t samples_total)
{
    const char head[20] = {'g', 'm', 'o', 'n', 1, 0, 0, 0};
    put(o, head, sizeof head);
    uint64_t nrec = cg_hist.nbins ? (h->max + 65534) / 65535 : 0;
    if (cg_hist.nbins && nrec == 0)
        nrec = 1;
    for (uint64_t r = 0; r < nrec; r++) {
        unsigned char tag = 0;
        put(o, &tag, 1);
        put(o, &cg_hist.lowpc, sizeof cg_hist.lowpc);
        put(o, &cg_hist.highpc, sizeof cg_hist.highpc);
        /* time events: samples at the rate; counting events: bins hold
         * events (each sample weighs its period), one per "second" */
        int timed = !cg_event || cg_event->kind != CG_EV_PERF || cg_event->is_time;
        uint32_t n = cg_hist.nbins, rate = !timed ? 1 : (uint32_t)cg_sample_rate(samples_total);
        put(o, &n, 4);
        put(o, &rate, 4);
        char dim[16] = "seconds";
        if (!timed)
            copy(dim, cg_event->name, 15);
        dim[15] = dim[0];
        put(o, dim, 16);
        /* the bins, written in place: a large executable has hundreds of
         * thousands (SQLite's speedtest1: about 400,000), and a call per
         * bin cost it 10 ms of its 270 (perf).  The buffer is a fresh
         * anonymous mapping, zero-filled: bins that are all zero (no
         * sample, as with CGPROF_FREQ=0) need not be read nor written. */
        size_t bytes = (size_t)cg_hist.nbins * 2;
        uint64_t base = r * 65535;
        if (o->len + bytes <= o->cap && h->max > base) {
            char *dst = o->buf + o->len;
            for (uint32_t i = 0; i < cg_hist.nbins; i++) {
                uint64_t c = h->bins[i];
                uint16_t v = c > base ? (uint16_t)(c - base > 65535 ? 65535 : c - base) : 0;
                memcpy(dst + 2 * (size_t)i, &v, 2);
            }
        }
        o->len += bytes;
    }
    for (uint64_t i = 0; i < m->cap; i++)
        if (m->arcs[i].count)
            put_arc_wide(o, file_pc(m->arcs[i].from), file_pc(m->arcs[i].self), m->arcs[i].count);
    if (lost)
        put_arc_wide(o, 0, 0, lost);
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Stops taking samples while the profile is written, and waits (briefly:
 * a handler never blocks) for samples under way in other threads and in
 * the sampler thread, so that every sample is whole in the tables it is
 * read from.  A handler this very thread interrupted (a dump signal during
 * a sample) cannot finish first: the wait is bounded. */
static void pause_sampling(void)
{
    __atomic_store_n(&cg_paused, 1, __ATOMIC_SEQ_CST);
    cg_sampler_flush();
    for (int i = 0; i < 100000 && __atomic_load_n(&cg_sampling_inflight, __ATOMIC_ACQUIRE); i++)
        sched_yield();
}

static int write_locked(int final)
{
    char name[4200], num[24];
    output_name(name, sizeof name);
    cg_sampler_flush(); /* what was sampled up to now goes in */
    /* a checkpoint, written by the runtime's own thread, leaves the
     * program's sampling alone (its counts may then be a few samples out
     * of step with its stacks); every other write pauses it */
    if (final != CG_WRITE_CHECKPOINT)
        pause_sampling();
    if (final == 1)
        cg_modules_snapshot(); /* not in a signal handler: the loader lock is safe */
    struct merged m, sm;
    struct hist h;
    int rc = -1;
    if (merge_tables(&m, &cg_arc_tables) != 0) {
        cg_say("cannot map memory to write ", name, "");
        return -1;
    }
    if (merge_tables(&sm, &cg_sample_tables) != 0) {
        cg_say("cannot map memory to write ", name, "");
        goto out_arcs;
    }
    if (make_hist(&h, &sm) != 0) {
        cg_say("cannot map memory to write ", name, "");
        goto out_samples;
    }
    uint64_t lost = cg_arcs_lost();
    /* A final write after another with the same data (exec that failed,
     * then exit), or a checkpoint with nothing new, is skipped. */
    uint64_t digest = 1 + lost + m.total + sm.total;
    if ((final && final != CG_WRITE_CHECKPOINT && digest == final_digest) ||
        (final == CG_WRITE_CHECKPOINT && digest == last_digest)) {
        rc = 0; /* nothing new since the last write */
        goto out_hist;
    }
    if (cg_format == CG_FORMAT_CGPROF && cg_stacks_merge() != 0)
        cg_say("cannot map memory for the stacks of ", name, "; written without them");
    struct out o = {0};
    struct frozen fz;
    cg_modules(&fz.nmods);
    cg_thread_recs(&fz.nthreads);
    cg_arcs_frozen(&fz.narcs_noted);
    if (cg_format == CG_FORMAT_CGPROF)
        cg_layout_cgprof(&o, &m, &sm, lost, &fz);
    else
        layout_gmon(&o, &m, &h, lost, sm.total);
    o.cap = o.len;
    o.len = 0;
    /* zero-filled: layout_gmon leaves zero bins unwritten */
    o.buf = mmap(NULL, o.cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (o.buf == MAP_FAILED) {
        cg_say("cannot map memory to write ", name, "");
        goto out_hist;
    }
    if (cg_format == CG_FORMAT_CGPROF)
        cg_layout_cgprof(&o, &m, &sm, lost, &fz);
    else
        layout_gmon(&o, &m, &h, lost, sm.total);
    if (store(name, o.buf, o.len) != 0)
        goto out_buf;
    last_digest = digest;
    if (final == CG_WRITE_CHECKPOINT)
        final = 0;
    else if (final)
        final_digest = digest;
    /* Said once, at the first final write (a second one follows only if a
     * late call or sample changed the data). */
    uint64_t vm_children = __atomic_load_n(&cg_unsampled_vm_children, __ATOMIC_RELAXED);
    uint64_t unsampled = __atomic_load_n(&cg_unsampled_threads, __ATOMIC_RELAXED) - vm_children;
    if (final && !problems_said) {
        problems_said = 1;
        say_count(vm_children,
                  " processes made by clone(CLONE_VM) shared this one's memory: their calls are "
                  "counted in it, their CPU time was not sampled; profile ",
                  name);
        say_count(unsampled,
                  " threads could not be given a CPU timer and were not sampled; profile ", name);
        say_count(lost, " calls could not be recorded (out of memory); the count is in ", name);
        int err[2] = {0, 0};
        uint64_t unopened = cg_sampler_unsampled(err);
        if (unopened) {
            cg_say(cg_utoa(unopened, num + sizeof num), " threads not sampled: event ",
                   cg_event->name);
            for (int i = 0; i < 2; i++) /* each cause seen, the first first */
                if (err[i] || !i)
                    cg_say(err[i] == -1 ? "ring buffer: " : "perf_event_open: ",
                           errno_text(err[i]), "");
        }
        say_count(cg_sampler_throttled(),
                  " throttlings of the event by the kernel (too many samples in a tick): "
                  "what it counted meanwhile is lost; profile ",
                  name);
        say_count(cg_samples_merged(),
                  " samples could not be recorded where they were taken (ring buffers full): "
                  "their events are counted in the thread's next sample; profile ",
                  name);
        say_count(cg_samples_lost(),
                  " samples could not be recorded (ring buffers full, or out of memory); profile ",
                  name);
    }
    rc = 0;
out_buf:
    munmap(o.buf, o.cap);
out_hist:
    cg_stacks_merged_free();
    munmap(h.bins, h.bytes);
out_samples:
    munmap(sm.arcs, sm.bytes);
out_arcs:
    munmap(m.arcs, m.bytes);
    return rc;
}

/* Writes the profile now.  A final write (exit) waits for a write already
 * under way in another thread; any other write gives way to it. */
CG_OWN int cg_write_profile(int final)
{
    /* a process not built with -pg writes only if cgprof record started it
     * (and asked for the own format, which needs no -pg) */
    if (!__atomic_load_n(&cg_instrumented, __ATOMIC_RELAXED) &&
        !(cg_format == CG_FORMAT_CGPROF && cg_is_root))
        return 0;
    int saved = errno;
    int expected = 0, waited = 0;
    while (!__atomic_compare_exchange_n(&writing, &expected, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
        /* bounded: the writer might be the very code this thread interrupted */
        if (!final || final == CG_WRITE_CHECKPOINT || ++waited > 5000) {
            if (final != CG_WRITE_CHECKPOINT)
                cg_say("another write of the profile is under way; this one is skipped", "", "");
            errno = saved;
            return -1;
        }
        expected = 0;
        usleep(1000);
    }
    /* the time spent here is the runtime's: its samples are not the
     * program's (signals.c), and its CPU time is reported on its own */
    int prev = cg_tls.in_runtime;
    cg_tls.in_runtime = 1;
    struct timespec t0, t1;
    int timed = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0) == 0;
    int rc = write_locked(final);
    if (timed && clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1) == 0)
        cg_count_write((uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
                       (uint64_t)(t1.tv_nsec - t0.tv_nsec));
    cg_tls.in_runtime = prev;
    /* the writer's own samples still in the rings of perf events are
     * dropped, paused, before sampling goes on */
    if (final != CG_WRITE_CHECKPOINT && __atomic_load_n(&cg_paused, __ATOMIC_ACQUIRE))
        cg_sampler_flush();
    __atomic_store_n(&cg_paused, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&writing, 0, __ATOMIC_RELEASE);
    errno = saved;
    return rc;
}

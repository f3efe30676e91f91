/* Endings: the profile is written however the process ends, by the
 * runtime's own thread where it can, and kept across exec.
 *
 * - exit, _mcleanup, our destructor: one final write (the first of them).
 * - _exit and _Exit (interposed): the final write, then the real exit.
 * - a deadly signal (signals.c): the final write, then the signal's own
 *   default action.
 * - exec (interposed): the image's data is written, and the next image is
 *   told (CGPROF_EXEC=PID:GENERATION:CHILD) that it follows one, so it
 *   writes NAME.execN instead of replacing what came before.
 * - kill -9, the OOM killer: nothing can run then, so the helper thread
 *   writes a checkpoint every CGPROF_CHECKPOINT milliseconds (default
 *   1000; 0: none) -- at most that much is lost.
 *
 * Writes are done by the helper thread (sampler.c's thread, which blocks
 * every signal, runs no profiled code and is never sampled): a program
 * thread that ends the process asks it and waits, asleep, so the cost of
 * writing is never sampled as the program's time.  A thread writes itself
 * only when the helper cannot (not started, a vfork child, no answer in
 * time); its samples meanwhile are counted as the runtime's (signals.c).
 */
#include "rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

unsigned cg_exec_gen;
int cg_exec_child;
unsigned char cg_run_id[16];
static pid_t my_pid; /* the process we count for */
static int done;     /* atomic: the final write has been made */
static uint64_t checkpoint_ns = 1000000000u;
static uint64_t last_checkpoint;                      /* helper thread only */
static unsigned write_req, write_done;                /* atomic: futex words of the handshake */
static int req_final;                                 /* atomic: the strongest kind asked for */
static uint64_t helper_cpu_ns, write_cpu_ns, nwrites; /* atomic */

static uint64_t parse_u64(const char *s, int *ok)
{
    uint64_t v = 0;
    *ok = s && *s;
    for (; s && *s; s++) {
        if (*s < '0' || *s > '9' || v > UINT64_MAX / 10 - 9) {
            *ok = 0;
            return 0;
        }
        v = v * 10 + (uint64_t)(*s - '0');
    }
    return v;
}

/* CGPROF_RUN's 32 hex digits into ID; 0, or -1 if it is not that. */
static int run_id_parse(const char *s, unsigned char id[16])
{
    unsigned char v[16];
    for (int i = 0; i < 32; i++) {
        int c = s[i], d = c >= '0' && c <= '9'   ? c - '0'
                          : c >= 'a' && c <= 'f' ? c - 'a' + 10
                          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : -1;
        if (d < 0)
            return -1;
        v[i / 2] = (unsigned char)(i % 2 ? v[i / 2] | d : d << 4);
    }
    if (s[32])
        return -1;
    memcpy(id, v, sizeof v);
    return 0;
}

/* Tasks of the thread group that were there before the runtime started,
 * other than main: not the program's (qemu-user's own threads share the
 * group with the program it runs), so they do not keep it alive below. */
#define FOREIGN_MAX 8
static pid_t foreign[FOREIGN_MAX];
static int nforeign;

/* Calls FN(tid, CTX) for each task of the thread group; the count, or -1. */
static long each_task(void (*fn)(pid_t, void *), void *ctx)
{
    char buf[512];
    int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return -1;
    long tasks = 0, got;
    while ((got = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0)
        for (long off = 0; off < got;) {
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, 2);
            const char *name = buf + off + 19;
            if (name[0] != '.') {
                tasks++;
                if (fn) {
                    long tid = 0;
                    for (const char *c = name; *c >= '0' && *c <= '9'; c++)
                        tid = tid * 10 + (*c - '0');
                    fn((pid_t)tid, ctx);
                }
            }
            off += reclen;
        }
    close(dir);
    return tasks;
}

static void note_foreign(pid_t tid, void *ctx)
{
    (void)ctx;
    if (tid != my_pid && nforeign < FOREIGN_MAX)
        foreign[nforeign++] = tid;
}

static void count_foreign(pid_t tid, void *ctx)
{
    for (int i = 0; i < nforeign; i++)
        if (foreign[i] == tid)
            ++*(long *)ctx;
}

void cg_endings_init(void)
{
    my_pid = getpid();
    nforeign = 0;
    each_task(note_foreign, NULL);
    const char *cp = getenv("CGPROF_CHECKPOINT");
    if (cp && *cp) {
        int ok;
        uint64_t ms = parse_u64(cp, &ok);
        if (!ok || ms > 86400000u)
            cg_say("ignoring CGPROF_CHECKPOINT=", cp,
                   ": not a number of milliseconds (0-86400000)");
        else
            checkpoint_ns = ms * 1000000u;
    }
    /* the run: CGPROF_RUN (32 hex digits) from cgprof record or the image
     * that exec'd us, or a new one for a process nobody started for us */
    const char *run = getenv("CGPROF_RUN");
    if (!run || run_id_parse(run, cg_run_id) != 0) {
        ssize_t got = getrandom(cg_run_id, sizeof cg_run_id, GRND_NONBLOCK);
        if (got != (ssize_t)sizeof cg_run_id) { /* no entropy yet: the clock and pid */
            uint64_t a = cg_random64(my_pid), b = cg_random64(my_pid + 1);
            memcpy(cg_run_id, &a, 8);
            memcpy(cg_run_id + 8, &b, 8);
        }
    }
    /* PID:GEN:CHILD, set by the image that exec'd us -- if it was this process */
    const char *ex = getenv("CGPROF_EXEC");
    if (ex && *ex) {
        char buf[64];
        size_t n = strlen(ex);
        if (n < sizeof buf) {
            memcpy(buf, ex, n + 1);
            char *a = buf, *b = strchr(a, ':'), *c = b ? strchr(b + 1, ':') : NULL;
            if (b && c) {
                *b++ = '\0';
                *c++ = '\0';
                int ok1, ok2, ok3;
                uint64_t pid = parse_u64(a, &ok1), gen = parse_u64(b, &ok2),
                         child = parse_u64(c, &ok3);
                if (ok1 && ok2 && ok3 && pid == (uint64_t)my_pid && gen < 1000000) {
                    cg_exec_gen = (unsigned)gen;
                    cg_exec_child = child != 0;
                }
            }
        }
    }
}

void cg_endings_after_fork(void)
{
    my_pid = getpid();
    nforeign = 0; /* the child is its one thread */
    done = 0;
    write_req = write_done = 0;
    req_final = 0;
    helper_cpu_ns = write_cpu_ns = nwrites = 0;
    cg_exec_gen = 0;
    cg_exec_child = 0;
}

/* The helper thread is started for checkpoints once the process has
 * shown it writes a profile. */
void cg_helper_start(void)
{
    if (checkpoint_ns && !cg_sampler_running())
        cg_sampler_start(NULL, cg_hz, cg_period);
}

uint64_t cg_checkpoint_ns(void)
{
    return checkpoint_ns;
}

void cg_count_write(uint64_t cpu_ns)
{
    __atomic_add_fetch(&nwrites, 1, __ATOMIC_RELAXED);
    if (!cg_sampler_here())
        __atomic_add_fetch(&write_cpu_ns, cpu_ns, __ATOMIC_RELAXED);
}

void cg_runtime_cost(struct cg_runtime_cost *c)
{
    c->helper_cpu_ns = __atomic_load_n(&helper_cpu_ns, __ATOMIC_RELAXED);
    if (cg_sampler_here()) {
        struct timespec ts;
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
            c->helper_cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
    c->write_cpu_ns = __atomic_load_n(&write_cpu_ns, __ATOMIC_RELAXED);
    c->writes = __atomic_load_n(&nwrites, __ATOMIC_RELAXED);
    c->samples = cg_runtime_samples();
    c->start_cpu_ns = cg_sampler_start_cpu_ns();
    c->before_cpu_ns = cg_sampler_before_cpu_ns();
    c->late_ns = cg_sampler_late_ns();
}

/* glibc ends the process with exit(0) when its last thread ends; the
 * helper thread, itself a thread, would keep it alive.  So the helper
 * does that itself when every other thread is gone: the thread group's
 * leader a zombie (main called pthread_exit) and nobody but us left.
 * The leader's state is read from its own task entry: qemu-user makes up
 * /proc/self/stat (never 'Z'), not the task directory. */
static void last_thread_check(void)
{
    char buf[512], path[64] = "/proc/self/task/", digits[24];
    const char *pid = cg_utoa((uint64_t)my_pid, digits + sizeof digits);
    size_t at = strlen(path), len = strlen(pid);
    memcpy(path + at, pid, len);
    memcpy(path + at + len, "/stat", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');
    if (!paren || paren[1] != ' ' || paren[2] != 'Z')
        return;
    long others = 0;
    long tasks = each_task(count_foreign, &others);
    if (tasks >= 0 && tasks - others <= 2) /* the zombie leader and us */
        exit(0);
}

/* Runs on the helper thread at every wake-up, after it has drained the
 * perf ring buffers: a write asked for, or a checkpoint that is due. */
void cg_helper_tick(uint64_t now)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        __atomic_store_n(&helper_cpu_ns, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                         __ATOMIC_RELAXED);
    unsigned req = __atomic_load_n(&write_req, __ATOMIC_ACQUIRE);
    if (last_checkpoint == 0)
        last_checkpoint = now;
    static uint64_t last_look;
    if (now - last_look >= 100000000u) {
        last_look = now;
        last_thread_check();
    }
    if (req != __atomic_load_n(&write_done, __ATOMIC_RELAXED)) {
        int kind = __atomic_exchange_n(&req_final, 0, __ATOMIC_ACQ_REL);
        cg_write_profile(kind);
        __atomic_store_n(&write_done, req, __ATOMIC_RELEASE);
        syscall(SYS_futex, &write_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
        last_checkpoint = now;
        return;
    }
    if (checkpoint_ns && now - last_checkpoint >= checkpoint_ns &&
        !__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        last_checkpoint = now;
        cg_write_profile(CG_WRITE_CHECKPOINT);
    }
}

/* Asks the helper thread to write and waits for it, asleep, up to
 * TIMEOUT_MS; 0 when it has written, -1 when it could not be asked. */
static int delegate(int kind, int timeout_ms)
{
    if (!cg_sampler_running() || cg_sampler_here())
        return -1;
    int cur = __atomic_load_n(&req_final, __ATOMIC_RELAXED);
    while (cur < kind && !__atomic_compare_exchange_n(&req_final, &cur, kind, 0, __ATOMIC_ACQ_REL,
                                                      __ATOMIC_RELAXED))
        ;
    unsigned req = __atomic_add_fetch(&write_req, 1, __ATOMIC_ACQ_REL);
    cg_sampler_flush(); /* wakes it; it drains the rings, then writes */
    for (int waited = 0; waited < timeout_ms; waited += 10) {
        unsigned d = __atomic_load_n(&write_done, __ATOMIC_ACQUIRE);
        if ((int)(d - req) >= 0)
            return 0;
        struct timespec ts = {0, 10000000};
        syscall(SYS_futex, &write_done, FUTEX_WAIT_PRIVATE, d, &ts, NULL, 0);
    }
    return -1;
}

/* The final write of an ending (CG_END_*), made once per process. */
CG_OWN int cg_write_final(int how)
{
    if (cg_inert)
        return 0; /* the executable's runtime writes */
    if (getpid() != my_pid)
        return 0; /* a vfork child: the data is its parent's */
    if (how != CG_END_EXEC && __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
        return 0;
    int kind = how == CG_END_SIGNAL ? 2 : 1;
    int saved = errno;
    int prev = cg_tls.in_runtime;
    cg_tls.in_runtime = 1; /* waiting for the helper: not the program's time */
    int rc = 0;
    if (delegate(kind, how == CG_END_SIGNAL ? 3000 : 10000) != 0)
        rc = cg_write_profile(kind);
    cg_tls.in_runtime = prev;
    errno = saved;
    return rc;
}

/* ---- _exit, _Exit ---------------------------------------------------- */

API void _exit(int status)
{
    cg_write_final(CG_END_EXIT);
    for (;;)
        syscall(SYS_exit_group, status);
}

API void _Exit(int status)
{
    _exit(status);
}

/* ---- exec: the data so far is written, and the next image told ------- */

/* ENVP with CGPROF_EXEC=PID:GEN+1:CHILD and CGPROF_RUN=this run in place
 * of any earlier ones, in
 * mapped memory (exec may follow vfork: no malloc); NULL if none could be
 * made.  *BYTES is what to unmap should exec fail. */
static char **exec_env(char *const envp[], size_t *bytes, int writes, int wrote)
{
    static char var[80], run[48] = "CGPROF_RUN=";
    for (int i = 0; i < 16; i++) {
        run[11 + 2 * i] = "0123456789abcdef"[cg_run_id[i] >> 4];
        run[12 + 2 * i] = "0123456789abcdef"[cg_run_id[i] & 15];
    }
    run[43] = '\0';
    char num[24], *p = var;
    const char *parts[] = {"CGPROF_EXEC=",
                           cg_utoa((uint64_t)getpid(), num + sizeof num),
                           ":",
                           0,
                           ":",
                           cg_output_child() ? "1" : "0"};
    if (!writes)
        parts[5] = "0"; /* a shell's child is nobody's: the program it runs is */
    char gen[24];
    parts[3] = cg_utoa(cg_exec_gen + (wrote ? 1 : 0), gen + sizeof gen);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        for (const char *s = parts[i]; *s; s++)
            *p++ = *s;
    *p = '\0';
    size_t n = 0;
    while (envp && envp[n])
        n++;
    *bytes = (n + 3) * sizeof(char *);
    char **env = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (env == MAP_FAILED)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(envp[i], "CGPROF_EXEC=", 12) != 0 && strncmp(envp[i], "CGPROF_RUN=", 11) != 0)
            env[k++] = envp[i];
    env[k++] = var;
    env[k++] = run;
    env[k] = NULL;
    return env;
}

#define REAL(name, type)                                                                           \
    static type real_##name;                                                                       \
    if (!real_##name)                                                                              \
        real_##name = (type)dlsym(RTLD_NEXT, #name);

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

/* Runs FN(ARG, ARGV, ENVP) with CGPROF_EXEC added, after the write. */
static int run_exec(execve_fn fn, fexecve_fn ffn, const char *path, int fd, char *const argv[],
                    char *const envp[])
{
    /* an image built with -pg leaves its profile, and the next one writes
     * NAME.execN; one without -pg (a shell that execs the program) leaves
     * nothing, and the program keeps the name */
    if (cg_inert) /* the executable's runtime (its exec, which called this one) tells the next image
                   */
        return fn    ? fn(path, argv, envp)
               : ffn ? ffn(fd, argv, envp)
                     : (int)syscall(SYS_execve, path, argv, envp);
    int writes = __atomic_load_n(&cg_instrumented, __ATOMIC_RELAXED);
    int wrote = writes;
    if (wrote)
        cg_write_final(CG_END_EXEC);
    cg_sampler_before_exec();
    size_t bytes = 0;
    char **env = exec_env(envp, &bytes, writes, wrote);
    char *const *use = env ? env : envp;
    int rc;
    if (fn)
        rc = fn(path, argv, use);
    else if (ffn)
        rc = ffn(fd, argv, use);
    else
        rc = (int)syscall(SYS_execve, path, argv, use); /* static: no dlsym */
    int e = errno;
    cg_sampler_exec_failed();
    if (env)
        munmap(env, bytes);
    errno = e;
    return rc;
}

API int execve(const char *path, char *const argv[], char *const envp[])
{
    REAL(execve, execve_fn);
    return run_exec(real_execve, NULL, path, -1, argv, envp);
}

API int execv(const char *path, char *const argv[])
{
    extern char **environ;
    return execve(path, argv, environ);
}

/* execvpe without libc's (a static program): the PATH search itself. */
static int search_path(const char *file, char *const argv[], char *const envp[])
{
    if (strchr(file, '/'))
        return execve(file, argv, envp);
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    int err = ENOENT;
    for (const char *p = path;;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        char cand[4096];
        if (n + 2 + strlen(file) < sizeof cand) {
            memcpy(cand, n ? p : ".", n ? n : 1);
            size_t k = n ? n : 1;
            cand[k] = '/';
            memcpy(cand + k + 1, file, strlen(file) + 1);
            execve(cand, argv, envp);
            if (errno != ENOENT && errno != ENOTDIR)
                err = errno;
        }
        if (!colon)
            break;
        p = colon + 1;
    }
    errno = err;
    return -1;
}

API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    REAL(execvpe, execve_fn);
    if (!real_execvpe)
        return search_path(file, argv, envp);
    return run_exec(real_execvpe, NULL, file, -1, argv, envp);
}

API int execvp(const char *file, char *const argv[])
{
    extern char **environ;
    return execvpe(file, argv, environ);
}

API int fexecve(int fd, char *const argv[], char *const envp[])
{
    REAL(fexecve, fexecve_fn);
    if (!real_fexecve) {
        errno = ENOSYS;
        return -1;
    }
    return run_exec(NULL, real_fexecve, NULL, fd, argv, envp);
}

/* The execl family: gather the variadic list, then go through the above. */
static char **gather(const char *arg0, va_list ap, char ***envp)
{
    size_t n = 1;
    va_list cp;
    va_copy(cp, ap);
    while (va_arg(cp, char *))
        n++;
    va_end(cp);
    char **argv = malloc((n + 1) * sizeof *argv);
    if (!argv)
        return NULL;
    argv[0] = (char *)arg0;
    for (size_t i = 1; i <= n; i++)
        argv[i] = va_arg(ap, char *);
    if (envp)
        *envp = va_arg(ap, char **);
    return argv;
}

/* Runs the gathered list through execv (0), execvp (1) or execve (2). */
static int exec_list(int how, const char *path, const char *arg, va_list ap)
{
    char **envp = NULL;
    char **argv = gather(arg, ap, how == 2 ? &envp : NULL);
    if (!argv)
        return -1;
    int rc = how == 0   ? execv(path, argv)
             : how == 1 ? execvp(path, argv)
                        : execve(path, argv, envp);
    free(argv);
    return rc;
}

API int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(0, path, arg, ap);
    va_end(ap);
    return rc;
}

API int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(1, file, arg, ap);
    va_end(ap);
    return rc;
}

API int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(2, path, arg, ap);
    va_end(ap);
    return rc;
}

/* cgprof record: run a program with libcgprof preloaded.
 *
 * The command checks the options and the event (a perf event this machine
 * cannot count is an error here, before the program runs), sets up the
 * environment and then becomes the program (exec), so the program's exit
 * status, its signals and its process id are its own: nothing stands
 * between it and its parent.
 */
#include "cmds.h"
#include "../runtime/events.h"
#include "cgdata.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <unistd.h>

static void record_usage(FILE *f)
{
    fputs("usage: cgprof record [options] [--] PROG [ARGS...]\n"
          "  -e, --event EVENT  what to sample: cpu-clock (default where perf events are\n"
          "                     permitted, else cpu), cpu, wall, itimer, or another perf\n"
          "                     event; -e list shows them and what this machine supports\n"
          "  -F, --freq HZ      samples per second (default 1000; 0 records call counts\n"
          "                     only); a counting event's each weighted by its events\n"
          "  -c, --period N     a counting event (e.g. page-faults) sampled every N events\n"
          "                     instead of at a rate\n"
          "  -o, --output FILE  write the profile to FILE (default: cgprof.data, or gmon.out\n"
          "                     with --format gmon, in the current directory)\n"
          "      --checkpoint MS  write the profile every MS milliseconds while the program\n"
          "                     runs (default 1000; 0: only when it ends), so that a kill -9\n"
          "                     loses at most that much\n"
          "      --format F     cgprof (the default: cgprof.data, the whole process --\n"
          "                     libraries, vDSO, build-ids; docs/profile-format.md) or gmon\n"
          "                     (GNU gmon.out of a -pg program, which GNU gprof reads)\n"
          "      --no-stacks    sample pcs only, without call stacks (cgprof format;\n"
          "                     the default records each sample's call stack)\n"
          "      --kernel       also the kernel's frames of samples taken in it (system\n"
          "                     calls, page faults; perf_event_paranoid 1 or less, or root)\n"
          "      --lib-calls W  which calls into shared libraries are counted (cgprof\n"
          "                     format; docs/libcalls.md): pg (the default: those of -pg\n"
          "                     code), all (those of every module, -pg or not, as\n"
          "                     CGPROF_LIBCALLS=all) or none\n"
          "      --no-lib-calls the same as --lib-calls none\n"
          "  -v, -V, --version  the version\n",
          f);
}

/* libcgprof.so: $ENV, else beside the cgprof binary or in ../lib, under
 * SUB ("" for the host's own; "/aarch64" for AArch64's, where `make
 * ARCH=aarch64` and `make install` put it). */
static int find_runtime(const char *env_name, const char *sub, char *out, size_t cap)
{
    const char *env = getenv(env_name);
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return access(out, R_OK);
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    const char *rel[] = {"", "/../lib", "/../lib/cgprof"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char cand[PATH_MAX + 64];
        snprintf(cand, sizeof cand, "%s%s%s/libcgprof.so", self, rel[i], sub);
        if (access(cand, R_OK) == 0 && realpath(cand, out))
            return 0;
    }
    return -1;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || !*s || *end || *s == '-' || x > max)
        return -1;
    *v = x;
    return 0;
}

/* FILE made absolute, so a program that changes directory still writes
 * where the user asked. */
static char *absolute(const char *file)
{
    if (file[0] == '/')
        return strdup(file);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    size_t n = strlen(cwd) + strlen(file) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", cwd, file);
    return p;
}

/* Whether FILE is PROG (as execvp would find it): the profile would
 * replace the running program. */
static int same_file_as_program(const char *file, const char *prog)
{
    struct stat a, b;
    if (stat(file, &a) != 0)
        return 0;
    if (strchr(prog, '/'))
        return stat(prog, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        char cand[PATH_MAX];
        snprintf(cand, sizeof cand, "%.*s/%s", (int)n, n ? p : ".", prog);
        if (access(cand, X_OK) == 0)
            return stat(cand, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
        p += n + (colon ? 1 : 0);
        if (!colon)
            break;
    }
    return 0;
}

/* Whether FILE may be replaced by the profile: it is not there, is
 * empty, is not a regular file (the runtime's business), or is already a
 * profile -- a cgprof profile or a GNU gmon.out, by their first bytes.
 * Anything else (-o prog.c) would be destroyed without a word. */
static int replaceable(const char *file)
{
    struct stat st;
    if (stat(file, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return 1;
    unsigned char head[8];
    FILE *f = fopen(file, "rb");
    if (!f)
        return 1; /* the runtime says it cannot write it */
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return cgdata_is(head, n) || (n >= 4 && memcmp(head, "gmon", 4) == 0);
}

/* Opens EV's perf event on this process to see whether the machine counts
 * it: 0, or an errno. */
static int probe(const struct cg_event *ev)
{
    if (ev->kind == CG_EV_CPU || ev->kind == CG_EV_ITIMER)
        return 0;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = ev->kind == CG_EV_WALL ? PERF_TYPE_SOFTWARE : ev->type;
    a.config = ev->kind == CG_EV_WALL ? PERF_COUNT_SW_CPU_CLOCK : ev->config;
    a.sample_period = 1000000;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

static const char *why(int e)
{
    switch (e) {
    case ENOENT:
    case EOPNOTSUPP:
        return "this machine cannot count it (no such counter; a VM often has no PMU)";
    case EACCES:
    case EPERM:
        return "not permitted (see /proc/sys/kernel/perf_event_paranoid)";
    case ENOSYS:
        return "this kernel has no perf_event_open";
    default:
        return strerror(e);
    }
}

static int list_events(void)
{
    printf("%-24s %-10s %s\n", "event", "here", "what");
    for (const struct cg_event *e = cg_event_all(); e->name; e++) {
        int err = probe(e);
        printf("%-24s %-10s %s\n", e->name, err ? "no" : "yes", e->what);
    }
    return 0;
}

struct opts {
    const struct cg_event *event;
    uint64_t hz, period;
    const char *output, *format;
    int have_hz;
    int no_stacks;
    const char *lib_calls; /* CGPROF_LIBCALLS: "0", "all", NULL (the default) */
    int kernel;
    const char *checkpoint;
};

/* Parses options up to PROG; returns PROG's index, or -1 (and *rc). */
static int parse(int argc, char **argv, struct opts *o, int *rc)
{
    static const struct {
        const char *s, *l;
    } valued[] = {{"-e", "--event"},    {"-F", "--freq"},   {"-c", "--period"},
                  {"-o", "--output"},   {NULL, "--format"}, {NULL, "--checkpoint"},
                  {NULL, "--lib-calls"}};
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i], *val = NULL, *opt = NULL;
        if (strcmp(a, "--") == 0)
            return i + 1;
        if (a[0] != '-')
            return i;
        if (strcmp(a, "--no-stacks") == 0) {
            o->no_stacks = 1;
            continue;
        }
        if (strcmp(a, "--no-lib-calls") == 0) {
            o->lib_calls = "0";
            continue;
        }
        if (strcmp(a, "--kernel") == 0) {
            o->kernel = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            record_usage(stdout);
            *rc = 0;
            return -1;
        }
        if (strcmp(a, "-V") == 0 || strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
            printf("cgprof %s\n", CGPROF_VERSION);
            *rc = 0;
            return -1;
        }
        for (size_t k = 0; k < sizeof valued / sizeof valued[0] && !opt; k++) {
            size_t ln = strlen(valued[k].l);
            if ((valued[k].s && strcmp(a, valued[k].s) == 0) || strcmp(a, valued[k].l) == 0) {
                opt = valued[k].l;
                if (i + 1 >= argc) {
                    fprintf(stderr, "cgprof record: option %s needs a value\n", a);
                    *rc = 2;
                    return -1;
                }
                val = argv[++i];
            } else if (strncmp(a, valued[k].l, ln) == 0 && a[ln] == '=') {
                opt = valued[k].l;
                val = a + ln + 1;
            } else if (valued[k].s && strncmp(a, valued[k].s, 2) == 0 && a[2]) {
                opt = valued[k].l;
                val = a + 2;
            }
        }
        *rc = 2;
        if (!opt) {
            fprintf(stderr, "cgprof record: unknown option '%s'\n", a);
            record_usage(stderr);
            return -1;
        }
        if (strcmp(opt, "--event") == 0) {
            if (strcmp(val, "list") == 0) {
                *rc = list_events();
                return -1;
            }
            o->event = cg_event_find(val);
            if (!o->event) {
                fprintf(stderr, "cgprof record: unknown event '%s' (cgprof record -e list)\n", val);
                return -1;
            }
        } else if (strcmp(opt, "--freq") == 0) {
            if (parse_u64(val, 100000, &o->hz) != 0) {
                fprintf(stderr, "cgprof record: -F %s: not a rate from 0 to 100000 Hz\n", val);
                return -1;
            }
            o->have_hz = 1;
        } else if (strcmp(opt, "--period") == 0) {
            if (parse_u64(val, UINT64_MAX, &o->period) != 0 || o->period == 0) {
                fprintf(stderr, "cgprof record: -c %s: not a positive number of events\n", val);
                return -1;
            }
        } else if (strcmp(opt, "--output") == 0) {
            o->output = val;
        } else if (strcmp(opt, "--checkpoint") == 0) {
            uint64_t ms;
            if (parse_u64(val, 86400000, &ms) != 0) {
                fprintf(stderr, "cgprof record: --checkpoint %s: not a number of milliseconds\n",
                        val);
                return -1;
            }
            o->checkpoint = val;
        } else if (strcmp(opt, "--lib-calls") == 0) {
            if (strcmp(val, "pg") == 0)
                o->lib_calls = NULL;
            else if (strcmp(val, "all") == 0 || strcmp(val, "none") == 0)
                o->lib_calls = strcmp(val, "all") == 0 ? "all" : "0";
            else {
                fprintf(stderr, "cgprof record: --lib-calls %s: not pg, all or none\n", val);
                return -1;
            }
        } else if (strcmp(val, "gmon") == 0 || strcmp(val, "cgprof") == 0) {
            o->format = val;
        } else {
            fprintf(stderr, "cgprof record: --format %s: not gmon or cgprof\n", val);
            return -1;
        }
    }
    return i;
}

/* The profile's file: -o's, else the default name in the directory
 * record started in, so a program that changes directory still writes
 * here; NULL when the user's GMON_OUT_PREFIX names the files. */
static const char *output_file(const struct opts *o)
{
    const char *prefix = getenv("GMON_OUT_PREFIX");
    return o->output                        ? o->output
           : prefix && *prefix              ? NULL
           : strcmp(o->format, "gmon") == 0 ? "gmon.out"
                                            : "cgprof.data";
}

/* The environment for the program.  PRELOAD (malloc'd) is
 * "LD_PRELOAD=LIB[:the old one]"; it is put in the environment, unless
 * EMULATED: then it is for qemu-aarch64's -E, and the host's LD_PRELOAD
 * is taken away (it would load into qemu itself).  An emulated run's
 * event is left to the runtime when none was asked for (o->event NULL). */
static int setup_env(const struct opts *o, const char *lib, int emulated, char **preload)
{
    const char *old = getenv("LD_PRELOAD");
    size_t n = strlen(lib) + (old ? strlen(old) : 0) + 16;
    char num[32];
    if (!(*preload = malloc(n)))
        return -1;
    snprintf(*preload, n, "LD_PRELOAD=%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
    int bad = emulated ? unsetenv("LD_PRELOAD") : setenv("LD_PRELOAD", *preload + 11, 1);
    snprintf(num, sizeof num, "%llu", (unsigned long long)o->hz);
    bad |= setenv("CGPROF_FREQ", num, 1);
    bad |= o->event ? setenv("CGPROF_EVENT", o->event->name, 1) : unsetenv("CGPROF_EVENT");
    bad |= setenv("CGPROF_FORMAT", o->format, 1);
    if (o->no_stacks)
        bad |= setenv("CGPROF_STACKS", "0", 1);
    if (o->lib_calls)
        bad |= setenv("CGPROF_LIBCALLS", o->lib_calls, 1);
    if (o->kernel)
        bad |= setenv("CGPROF_KERNEL", "1", 1);
    snprintf(num, sizeof num, "%ld", (long)getpid()); /* exec keeps the pid */
    bad |= setenv("CGPROF_ROOT_PID", num, 1);
    /* this run's id, which every process of it writes in its profile (also
     * those started by posix_spawn or system, which no exec wrapper sees),
     * so that profiles an earlier run left here are told from this run's */
    unsigned char id[16];
    char run[33];
    if (getrandom(id, sizeof id, 0) != (ssize_t)sizeof id)
        return -1;
    for (int i = 0; i < 16; i++)
        snprintf(run + 2 * i, 3, "%02x", id[i]);
    bad |= setenv("CGPROF_RUN", run, 1);
    if (o->period) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)o->period);
        bad |= setenv("CGPROF_PERIOD", num, 1);
    }
    const char *out = output_file(o);
    if (out) {
        char *abs = absolute(out);
        bad |= !abs || setenv("CGPROF_OUTPUT", abs, 1);
        free(abs);
    }
    if (o->checkpoint) {
        bad |= setenv("CGPROF_CHECKPOINT", o->checkpoint, 1);
    }
    return bad ? -1 : 0;
}

/* --kernel where it cannot give kernel frames: said in one line, and the
 * run goes on without them. */
static void kernel_note(const struct opts *o)
{
    const char *no = NULL;
    char buf[160];
    int time_ev =
        o->event->kind == CG_EV_WALL || (o->event->kind == CG_EV_PERF && o->event->is_time);
    if (strcmp(o->format, "cgprof") != 0 || o->no_stacks)
        no = "they are frames of the stacks, which need the cgprof format with stacks";
    else if (!time_ev)
        no = "only a time event (cpu-clock, task-clock, wall) samples in the kernel";
    else if (geteuid() != 0) {
        long level = 2;
        FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
        if (f) {
            if (fscanf(f, "%ld", &level) != 1)
                level = 2;
            fclose(f);
        }
        if (level > 1) {
            snprintf(buf, sizeof buf,
                     "perf_event_paranoid is %ld here, and kernel samples need 1 or less "
                     "(sysctl kernel.perf_event_paranoid=1), or root",
                     level);
            no = buf;
        }
    }
    if (no)
        fprintf(stderr, "cgprof record: note: --kernel: no kernel frames: %s\n", no);
}

int cmd_record(int argc, char **argv)
{
    struct opts o = {NULL, 1000, 0, NULL, "cgprof", 0, 0, NULL, 0, NULL};
    int rc = 0;
    int i = parse(argc, argv, &o, &rc);
    if (i < 0)
        return rc;
    if (i >= argc) {
        fprintf(stderr, "cgprof record: no program to run\n");
        record_usage(stderr);
        return 2;
    }
    /* an AArch64 program on this x86-64 host: run under qemu-aarch64 with
     * AArch64's runtime (docs/architectures.md), where the events are the
     * CPU timers, perf_event_open being missing there */
    int emulated = record_prog_aarch64(argv[i]), event_given = o.event != NULL;
    if (emulated && o.event && o.event->kind != CG_EV_CPU && o.event->kind != CG_EV_ITIMER) {
        fprintf(stderr,
                "cgprof record: -e %s: %s is an AArch64 program, run under qemu-aarch64, which "
                "has no perf_event_open: use -e cpu or -e itimer\n",
                o.event->name, argv[i]);
        return 2;
    }
    if (!o.event && emulated)
        o.event = cg_event_find("cpu");
    if (!o.event) {
        o.event = cg_event_default();
        if (o.event->kind == CG_EV_CPU)
            fprintf(stderr,
                    "cgprof record: note: perf events are not permitted here (%s); sampling "
                    "with the cpu event, POSIX CPU timers the kernel checks on its tick, "
                    "not the default cpu-clock\n",
                    why(probe(cg_event_find("cpu-clock"))));
    }
    if (o.lib_calls && strcmp(o.lib_calls, "all") == 0 && strcmp(o.format, "gmon") == 0) {
        fprintf(stderr, "cgprof record: --lib-calls all needs the cgprof format (gmon.out has "
                        "no place for calls into other objects)\n");
        return 2;
    }
    int counting = o.event->kind == CG_EV_PERF && !o.event->is_time;
    if (o.period && !counting) {
        fprintf(stderr,
                "cgprof record: -c applies to counting events; %s is sampled by time (-F)\n",
                o.event->name);
        return 2;
    }
    if (o.have_hz && o.period) {
        fprintf(stderr,
                "cgprof record: -F and -c together: sample %s at a rate (-F) or every N "
                "events (-c), not both\n",
                o.event->name);
        return 2;
    }
    int err = emulated ? 0 : probe(o.event);
    if (err) {
        fprintf(stderr, "cgprof record: event '%s' is not available: %s\n", o.event->name,
                why(err));
        return 1;
    }
    if (o.output && same_file_as_program(o.output, argv[i])) {
        fprintf(stderr, "cgprof record: -o %s: that is the program itself; choose another file\n",
                o.output);
        return 2;
    }
    const char *out = output_file(&o);
    if (out && !replaceable(out)) {
        fprintf(stderr,
                "cgprof record: %s exists and is not a profile: it would be replaced; remove it "
                "or choose another file with -o\n",
                out);
        return 2;
    }
    if (o.kernel && emulated)
        fprintf(stderr, "cgprof record: note: --kernel: no kernel frames: the program runs under "
                        "qemu-aarch64\n");
    else if (o.kernel)
        kernel_note(&o);
    if (o.event->kind == CG_EV_ITIMER && o.hz > 100)
        fprintf(stderr,
                "cgprof record: note: itimer ticks with the kernel's timer interrupt (CONFIG_HZ, "
                "250 on many kernels): it may sample at fewer than %llu Hz; the profile holds "
                "the rate reached (cpu-clock samples at the rate asked)\n",
                (unsigned long long)o.hz);
    rc = record_check_prog(argv[i], strcmp(o.format, "gmon") == 0, emulated);
    if (rc != 0)
        return rc;
    char lib[PATH_MAX], qemu[PATH_MAX];
    if (!emulated && find_runtime("CGPROF_LIB", "", lib, sizeof lib) != 0) {
        fprintf(stderr, "cgprof record: cannot find libcgprof.so (set CGPROF_LIB)\n");
        return 2;
    }
    if (emulated && find_runtime("CGPROF_LIB_AARCH64", "/aarch64", lib, sizeof lib) != 0) {
        fprintf(stderr,
                "cgprof record: %s is an AArch64 program: cannot find AArch64's "
                "libcgprof.so (make ARCH=aarch64 builds it; or set CGPROF_LIB_AARCH64)\n",
                argv[i]);
        return 2;
    }
    if (emulated && record_resolve("qemu-aarch64", qemu, sizeof qemu) != 0 &&
        record_resolve("qemu-aarch64-static", qemu, sizeof qemu) != 0) {
        fprintf(stderr,
                "cgprof record: %s is an AArch64 program: running it here needs "
                "qemu-aarch64 (Debian's qemu-user), which is not in PATH\n",
                argv[i]);
        return 126;
    }
    struct opts env = o;
    if (emulated && !event_given)
        env.event = NULL; /* the runtime's default: a CPU timer per thread */
    char *preload = NULL;
    if (setup_env(&env, lib, emulated, &preload) != 0 ||
        (emulated && !getenv("QEMU_LD_PREFIX") &&
         access("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1", F_OK) == 0 &&
         setenv("QEMU_LD_PREFIX", "/usr/aarch64-linux-gnu", 1) != 0)) {
        fprintf(stderr, "cgprof record: cannot set up the environment\n");
        return 2;
    }
    if (emulated) {
        /* qemu-aarch64 -E LD_PRELOAD=... PROG ARGS...: the program keeps
         * this process (its pid), and qemu ends as the program does */
        char **av = calloc((size_t)(argc - i) + 4, sizeof *av);
        if (!av) {
            fprintf(stderr, "cgprof record: out of memory\n");
            return 2;
        }
        av[0] = qemu;
        av[1] = "-E";
        av[2] = preload;
        for (int k = i; k < argc; k++)
            av[3 + k - i] = argv[k];
        execv(qemu, av);
        fprintf(stderr, "cgprof record: cannot run %s: %s\n", qemu, strerror(errno));
        return 126;
    }
    free(preload);
    execvp(argv[i], argv + i);
    fprintf(stderr, "cgprof record: cannot run %s: %s\n", argv[i], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}

/* Loading a profile (load.h): which files the command line names, and
 * reading them into the symbols, arcs and samples the analysis takes.
 * report and export share it, so both read a profile the same way. */
#include "load.h"
#include "cgsum.h"
#include "escape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERR_LEN 512

/* 1 if PATH is a cgprof profile (by its first bytes, not its name).  Only
 * regular files are looked into: peeking at a pipe would eat its start,
 * so a pipe is read as gmon.out. */
static int is_cgdata_file(const char *path)
{
    unsigned char head[8];
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return cgdata_is(head, n);
}

int load_is_cgdata(const char *path)
{
    return is_cgdata_file(path);
}

/* 1 if cgprof.data is there and no older than gmon.out (or there is none). */
static int cgdata_is_newer(void)
{
    struct stat c, g;
    if (stat("cgprof.data", &c) != 0 || !is_cgdata_file("cgprof.data"))
        return 0;
    return stat("gmon.out", &g) != 0 || c.st_mtim.tv_sec > g.st_mtim.tv_sec ||
           (c.st_mtim.tv_sec == g.st_mtim.tv_sec && c.st_mtim.tv_nsec >= g.st_mtim.tv_nsec);
}

/* With no arguments and cgprof.data not chosen: gmon.out with a.out, as
 * gprof reads them.  Says which file is read when cgprof.data is there
 * too, and what is missing when the pair is not there; 1 if it is not. */
static int no_default_profile(const char *cmd)
{
    struct stat st;
    int gmon = stat("gmon.out", &st) == 0;
    int cg = is_cgdata_file("cgprof.data");
    if (!gmon) {
        fprintf(stderr,
                "%s: no profile here: neither cgprof.data nor gmon.out in this directory "
                "(make one with 'cgprof record PROG', or name the files)\n",
                cmd);
        return 1;
    }
    if (stat("a.out", &st) != 0) {
        fprintf(stderr,
                "%s: gmon.out%s is read with its program, a.out by default, and there is no "
                "a.out here: name it (%s PROG gmon.out)\n",
                cmd, cg ? " (newer than cgprof.data)" : "", cmd);
        return 1;
    }
    if (cg)
        fprintf(stderr, "%s: note: reading gmon.out with a.out: it is newer than cgprof.data\n",
                cmd);
    return 0;
}

int load_pick_inputs(struct load_inputs *a, int n, char **args, const char *cmd)
{
    static char *dflt[] = {"cgprof.data"};
    memset(a, 0, sizeof *a);
    if (n == 0 && cgdata_is_newer()) {
        a->cgdata = 1;
        a->files = dflt;
        a->nfiles = 1;
        return 0;
    }
    if (n == 0 && no_default_profile(cmd))
        return 2;
    if (n >= 1 && is_cgdata_file(args[0])) {
        a->cgdata = 1;
        a->files = args;
        a->nfiles = n;
        for (int i = 1; i < n; i++) /* a process tree: summed */
            if (!is_cgdata_file(args[i])) {
                fprintf(stderr, "%s: %s is a cgprof profile and %s is not: they cannot be summed\n",
                        cmd, args[0], args[i]);
                return 2;
            }
    } else {
        a->prog = n >= 1 ? args[0] : "a.out";
        a->files = args + (n >= 1);
        a->nfiles = n >= 1 ? n - 1 : 0;
        for (int i = 0; i < a->nfiles; i++)
            if (is_cgdata_file(a->files[i])) {
                if (a->nfiles > 1) {
                    fprintf(stderr,
                            "%s: %s is a cgprof profile and %s is not: they cannot be summed "
                            "(give them one at a time)\n",
                            cmd, a->files[i], a->files[i == 0]);
                    return 2;
                }
                /* the profile names its executable; PROG, given, replaces it
                 * (a program moved since it was recorded) */
                a->cgdata = 1;
                a->files = &a->files[i];
                a->nfiles = 1;
                break;
            }
    }
    return 0;
}

/* A cgprof profile: its modules' symbols in one map, samples at exact pcs. */
/* Reads every profile given and sums them into D (a process tree).  With
 * several, the same module loaded more than once (a library dlopen'ed
 * again) is one module of the sum. */
static int read_cgdata_sum(struct cgdata *d, char **files, int n, char *err, size_t errsz)
{
    if (n == 1)
        return cgdata_read(d, files[0], err, errsz);
    memset(d, 0, sizeof *d);
    int with_stacks = 0, other_runs = 0;
    const char *other = NULL;
    for (int i = 0; i < n; i++) {
        struct cgdata x;
        int rc = cgdata_read(&x, files[i], err, errsz);
        if (rc == 0 && x.has_stacks)
            with_stacks++;
        if (rc == 0 && i == 0) {
            d->pid = x.pid;
            d->rate = x.rate;
            d->period = x.period;
            d->kind = x.kind;
            d->timed = x.timed;
            memcpy(d->event, x.event, sizeof d->event);
            memcpy(d->run_id, x.run_id, sizeof d->run_id);
            d->has_run_id = x.has_run_id;
        } else if (rc == 0 && x.has_run_id &&
                   (!d->has_run_id || memcmp(x.run_id, d->run_id, sizeof x.run_id) != 0)) {
            other_runs++; /* the first profile's run is the one summed */
            if (!other)
                other = files[i];
        }
        if (rc == 0)
            rc = cgdata_add(d, files[0], &x, files[i], err, errsz);
        cgdata_free(&x);
        if (rc != 0)
            return -1;
    }
    if (other_runs) {
        /* a profile left by an earlier run (cgprof.data.PID of a child
         * then) would be summed as this run's: say so, sum as asked */
        fprintf(stderr,
                "cgprof: warning: %d of the %d profiles (%s%s) are not from the run that wrote "
                "%s; summing profiles of different runs\n",
                other_runs, n, other, other_runs > 1 ? ", ..." : "", files[0]);
        d->has_run_id = 0;
    }
    if (with_stacks && with_stacks < n) {
        /* stacks must cover every sample: a sum with some profiles'
         * stacks only would give their time to too few paths */
        fprintf(stderr,
                "cgprof: note: %d of the %d profiles have no sampled stacks (recorded with "
                "--no-stacks): the sum's times are estimated from call counts\n",
                n - with_stacks, n);
        free(d->stacks);
        d->stacks = NULL;
        d->nstacks = 0;
        d->has_stacks = 0;
    }
    return 0;
}

/* The CPU time the program's threads used while they were sampled, in ns,
 * less the runtime's own work on them.  Threads written with flag 4 count
 * from their sampling's start; earlier profiles hold the whole thread
 * clocks, and the time before in RUNTIME. */
static double sampled_threads_cpu(const struct cgdata *d)
{
    double cpu = 0;
    int based = 0;
    for (size_t i = 0; i < d->nthreads; i++) {
        cpu += (double)d->threads[i].cpu_ns;
        based |= (d->threads[i].flags & 4) != 0;
    }
    cpu -= (double)(d->runtime.write_cpu_ns + d->runtime.start_cpu_ns);
    if (!based)
        cpu -= (double)d->runtime.before_cpu_ns;
    return cpu;
}

/* CPU time the threads used that no sample stands for: the kernel
 * throttling a fast event, a source that cannot sample short threads (the
 * cpu event's tick), threads no event could be opened for.  Said, never
 * silent.  Each thread's sample count is within about one of its CPU
 * time x rate (a random first period), so a shortfall beyond a few
 * samples per thread and 3% is real.  Not for wall, which also samples
 * blocked time, nor counting events. */
static void unsampled_time_check(const struct cgdata *d, const char *path, const char *cmd)
{
    if (!d->timed || !d->rate || strcmp(d->event, "wall") == 0 || d->nthreads == 0)
        return;
    double cpu = 0, blocked_cpu = 0;
    unsigned long long blocked = 0, ringless = 0;
    for (size_t i = 0; i < d->nthreads; i++) {
        if (d->threads[i].flags & 2) { /* the cpu event's signal blocked */
            blocked++;
            blocked_cpu += (double)d->threads[i].cpu_ns;
            ringless += (d->threads[i].flags & 8) != 0; /* sampled by it for want of a ring */
        }
    }
    /* the runtime's own work on program threads is not theirs to sample,
     * nor what they ran before their sampling began (the loader's work
     * and the constructors before ours, in the main thread), nor the
     * delays of a time event's samples (the kernel's timer forwards from
     * when it fired late: no sample is missing, they are further apart) */
    cpu = sampled_threads_cpu(d);
    cpu -= (double)d->runtime.late_ns;
    double expected = cpu / 1e9 * (double)d->rate;
    double seen = (double)(d->total_samples + d->lost_samples + d->runtime.samples);
    double missing = expected - seen;
    if (missing <= 3 * sqrt((double)d->nthreads) + 0.03 * expected + 3)
        return;
    if (ringless) { /* threads left without a ring buffer by an ordinary user's limits */
        fprintf(stderr,
                "%s: warning: %s: %llu of the %zu threads blocked the profiler's sampling signal "
                "(they used %.3f s of CPU); %llu of them had no ring buffer, for want of locked "
                "memory (a user's rings may lock perf_event_mlock_kb per CPU, then "
                "RLIMIT_MEMLOCK: raise either, or run as root), and are sampled by that signal: "
                "%.3f s (%.0f%%) of the CPU was not sampled\n",
                cmd, path, blocked, d->nthreads, blocked_cpu / 1e9, ringless,
                missing / (double)d->rate, 100 * missing / expected);
        return;
    }
    if (blocked) { /* the cpu event, or CGPROF_STACK_SYNC=2's handler events */
        int cpu_ev = strcmp(d->event, "cpu") == 0;
        fprintf(stderr,
                "%s: warning: %s: %llu of the %zu threads blocked the profiler's sampling signal "
                "(they used %.3f s of CPU); %s cannot sample a thread while it does, "
                "%s can: %.3f s (%.0f%%) of the CPU was not sampled\n",
                cmd, path, blocked, d->nthreads, blocked_cpu / 1e9,
                cpu_ev ? "the cpu event" : "sampling in the threads (CGPROF_STACK_SYNC=2)",
                cpu_ev ? "the default event (cpu-clock)" : "the default (CGPROF_STACK_SYNC=0)",
                missing / (double)d->rate, 100 * missing / expected);
        return;
    }
    fprintf(stderr,
            "%s: warning: %s: the threads used %.3f s of CPU, of which %.3f s (%.0f%%) "
            "could not be sampled at %llu Hz (the kernel throttling the event, or threads "
            "too short for it: docs/events.md)\n",
            cmd, path, cpu / 1e9, missing / (double)d->rate, 100 * missing / expected,
            (unsigned long long)d->rate);
}

void load_say_unsampled(const struct load_profile *p, const char *cmd)
{
    /* after the report, as the notes below: a profile refused on reading
     * gets its one line of error alone */
    if (p->d.lost_samples)
        fprintf(stderr, "%s: warning: %llu samples were lost by the runtime\n", cmd,
                (unsigned long long)p->d.lost_samples);
    if (p->d.unsampled_threads)
        fprintf(stderr, "%s: warning: %llu threads could not be sampled\n", cmd,
                (unsigned long long)p->d.unsampled_threads);
    if (p->cgdata && p->path)
        unsampled_time_check(&p->d, p->path, cmd);
    if (p->own_share >= 0.05) /* never "0.0%" */
        fprintf(stderr,
                "%s: note: %.1f%% of the samples were in libcgprof's call counting "
                "(mcount, and its counters of library calls), left out of the profile as gprof "
                "leaves out mcount\n",
                cmd, p->own_share);
}

/* record --kernel's frames: out of the stacks unless KEEP (--kernel);
 * asked for and not there, said why. */
static int kernel_frames(struct cgdata *d, const char *path, int keep, const char *cmd)
{
    if (keep && !(d->kernel.flags & CGDATA_KERNEL_ASKED))
        fprintf(stderr,
                "%s: note: --kernel: %s was recorded without kernel frames (cgprof record "
                "--kernel)\n",
                cmd, esc_text(path));
    else if (keep && !(d->kernel.flags & CGDATA_KERNEL_OK))
        fprintf(stderr,
                "%s: note: --kernel: %s has no kernel frames: the kernel did not permit "
                "samples in it (perf_event_paranoid 2 or more, not root), or its event "
                "cannot take them (cpu, itimer)\n",
                cmd, esc_text(path));
    if (cgdata_kernel_frames(d, keep) != 0) {
        fprintf(stderr, "%s: out of memory\n", cmd);
        return 1;
    }
    return 0;
}

/* A module recorded by a path this machine does not have, found under
 * another root: CGPROF_SYMFS, then QEMU_LD_PREFIX (a program run under
 * qemu-user records its libraries by the paths it saw, /lib/libc.so.6,
 * which qemu took from under that prefix).  0, or -1 out of memory. */
static int relocate_modules(struct cgdata *d)
{
    /* the last, Debian's cross prefix for AArch64 (where `cgprof record`
     * runs an AArch64 program under qemu-aarch64 when QEMU_LD_PREFIX is
     * unset): taken only for a module whose build-id it matches */
    const char *roots[3] = {getenv("CGPROF_SYMFS"), getenv("QEMU_LD_PREFIX"),
                            "/usr/aarch64-linux-gnu"};
    for (size_t i = 0; i < d->nmodules; i++) {
        struct cgdata_module *m = &d->modules[i];
        if (m->image || !m->path || m->path[0] != '/' || access(m->path, F_OK) == 0)
            continue;
        for (size_t k = 0; k < 3; k++) {
            if (!roots[k] || !roots[k][0] || (k == 2 && m->build_id_len == 0))
                continue;
            size_t len = strlen(roots[k]) + strlen(m->path) + 1;
            char *at = malloc(len);
            if (!at)
                return -1;
            snprintf(at, len, "%s%s", roots[k], m->path);
            unsigned char bid[64];
            size_t blen =
                k == 2 && access(at, F_OK) == 0 ? modmap_file_build_id(at, bid, sizeof bid) : 0;
            if (access(at, F_OK) == 0 &&
                (k < 2 || (blen == m->build_id_len && memcmp(bid, m->build_id, blen) == 0))) {
                free(m->path);
                m->path = at;
                break;
            }
            free(at);
        }
    }
    return 0;
}

static int load_cgdata(struct load_profile *p, char **files, int nfiles, const char *prog,
                       unsigned sym_flags, int quiet, int kernel, const char *cmd)
{
    char err[ERR_LEN];
    struct cgdata *d = &p->d;
    const char *path = files[0];
    if (read_cgdata_sum(d, files, nfiles, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", cmd, esc_text(err));
        return 1;
    }
    if (relocate_modules(d) != 0) {
        fprintf(stderr, "%s: out of memory\n", cmd);
        return 1;
    }
    for (size_t i = 0; prog && i < d->nmodules; i++)
        if (d->modules[i].flags & CGDATA_MOD_MAIN) {
            char *copy = strdup(prog);
            if (!copy) {
                fprintf(stderr, "%s: out of memory\n", cmd);
                return 1;
            }
            free(d->modules[i].path);
            d->modules[i].path = copy;
        }
    if (kernel_frames(d, path, kernel, cmd) != 0)
        return 1;
    if (modmap_build(&p->mm, d, sym_flags, stderr, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s: %s\n", cmd, esc_text(path), esc_text(err));
        return 1;
    }
    if (d->nsamples == 0) { /* say why the profile is empty rather than print nothing */
        /* the CPU used while sampled: thread clocks carry the time before
         * an exec and the loader's, which no sample could stand for */
        double cpu = sampled_threads_cpu(d);
        const char *nocalls = d->narcs ? "" : " and no call counts (it was not built with -pg)";
        if (cpu > 0 && d->timed)
            fprintf(stderr,
                    "%s: note: %s holds no samples (its threads used %.1f ms of CPU while "
                    "sampled at %llu Hz: %.1f samples' worth)%s\n",
                    cmd, esc_text(path), cpu / 1e6, (unsigned long long)d->rate,
                    cpu / 1e9 * (double)d->rate, nocalls);
        else /* -F 0 keeps no thread clocks: no CPU time to tell */
            fprintf(stderr,
                    "%s: note: %s holds no samples (sampling was off with -F 0, or the event "
                    "never fired)%s\n",
                    cmd, esc_text(path), nocalls);
    }
    p->path = path;
    /* the profiler's own call counting is left out, as gprof leaves out
     * mcount; say how much it was */
    struct modmap *mm = &p->mm;
    double all = 0, own = 0;
    for (size_t i = 0; i < mm->nsamples; i++) {
        long j = symtab_lookup(&mm->st, mm->samples[i].pc);
        all += (double)mm->samples[i].count;
        if (j >= 0 && mm->st.syms[j].is_runtime)
            own += (double)mm->samples[i].count;
    }
    /* said after a report that succeeded (load_say_unsampled): an error
     * stays one line */
    p->own_share = own > 0 && !quiet ? 100 * own / all : 0;
    p->pcs.pc_samples = mm->samples;
    p->pcs.npc_samples = mm->nsamples;
    p->pcs.pc_rate = d->timed ? (double)d->rate : 1.0;
    p->pcs.pc_unit = d->timed ? "seconds" : d->event;
    p->pcs.event = d->event;
    p->prog = "?";
    for (size_t i = 0; i < d->nmodules; i++)
        if (d->modules[i].flags & CGDATA_MOD_MAIN)
            p->prog = d->modules[i].path;
    p->st = &mm->st;
    p->gd = &mm->gd;
    return 0;
}

int load_profile(struct load_profile *p, const struct load_inputs *in, unsigned sym_flags,
                 int quiet, const char *cmd)
{
    memset(p, 0, sizeof *p);
    gmon_init(&p->own_gd);
    p->cgdata = in->cgdata;
    if (in->cgdata)
        return load_cgdata(p, in->files, in->nfiles, in->prog, sym_flags, quiet, in->kernel, cmd);
    char err[ERR_LEN];
    static char *default_gmon[] = {"gmon.out"};
    char **files = in->nfiles ? in->files : default_gmon;
    int n = in->nfiles ? in->nfiles : 1;
    if (symtab_load_flags(&p->own_st, in->prog, sym_flags, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", cmd, err);
        return 1;
    }
    for (int i = 0; i < n; i++)
        if (gmon_read(&p->own_gd, files[i], err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s\n", cmd, err);
            return 1;
        }
    p->st = &p->own_st;
    p->gd = &p->own_gd;
    p->prog = in->prog;
    return 0;
}

void load_free(struct load_profile *p)
{
    if (p->cgdata) {
        modmap_free(&p->mm);
        cgdata_free(&p->d);
    } else {
        symtab_free(&p->own_st);
    }
    gmon_free(&p->own_gd);
    memset(p, 0, sizeof *p);
}

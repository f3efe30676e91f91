/* cgprof report: read an executable and its gmon.out files, print gprof-style tables. */
#include "cmds.h"

#include "callgraph.h"
#include "cgdata.h"
#include "cgsum.h"
#include "disasm.h"
#include "gmon.h"
#include "gprof_text.h"
#include "json.h"
#include "modmap.h"
#include "symtab.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERR_LEN 512

static void report_usage(FILE *f)
{
    fputs("usage: cgprof report [options] [PROG [GMON...]]\n"
          "       cgprof report [options] [PROFILE]\n"
          "  PROG defaults to a.out, GMON to gmon.out; several GMON files are summed.\n"
          "  A cgprof profile (cgprof record --format cgprof; default cgprof.data when\n"
          "  there is no gmon.out) names its own executable and libraries.\n"
          "  The options are gprof's; NAME is a function's symbol name.\n"
          "  -a, --no-static                 leave out static functions (time goes to the one "
          "before)\n"
          "  -b, --brief                     no explanations after the tables\n"
          "  -c, --static-call-graph         add calls found in the text as arcs with count 0\n"
          "  -D, --ignore-non-functions      (accepted; gprof leaves nothing out on ELF)\n"
          "  -e NAME / -E NAME               leave NAME out of the call graph / and its time\n"
          "  -f NAME / -F NAME               only NAME and its callees in the graph / and time\n"
          "  -k FROM/TO                      leave out the arcs from FROM to TO\n"
          "  -m N, --min-count=N             (line-level reports only)\n"
          "  -n NAME, --time=NAME            only NAME's time is propagated\n"
          "  -N NAME, --no-time=NAME         NAME's time is not propagated\n"
          "  -p[NAME], --flat-profile[=NAME] print the flat profile [of NAME only]\n"
          "  -P[NAME], --no-flat-profile[=NAME]  no flat profile [leave NAME out of it]\n"
          "  -q[NAME], --graph[=NAME]        print the call graph [from NAME down] and index\n"
          "  -Q[NAME], --no-graph[=NAME]     no call graph [leave NAME out of it]\n"
          "  -s, --sum                       write the summed profiles to gmon.sum (cgprof.sum\n"
          "                                  for cgprof profiles)\n"
          "  -T, --traditional               the traditional BSD layout\n"
          "  -w N, --width=N                 index width (default 80)\n"
          "  -z, --display-unused-functions  include functions never called nor sampled\n"
          "  -Z, --no-exec-counts            no execution counts\n"
          "  --demangle[=STYLE], --no-demangle  C++ names demangled (default) or not\n"
          "  --json                          the analyzed profile as JSON "
          "(docs/json-schema.md)\n"
          "  --threads                       per-thread totals (cgprof profiles)\n"
          "  -h, --help                      this help\n",
          f);
}

/* gprof's output styles: what -p/-q (and their negations) select.  With
 * no style chosen, every table the data allows is printed except those
 * the options mentioned (gprof's user_specified). */
#define STYLE_FLAT  1u
#define STYLE_GRAPH 2u
#define STYLE_SUM   4u
#define STYLE_EXEC  8u

struct report_args {
    struct gprof_text_opts text;
    unsigned style, user;
    unsigned sym_flags; /* SYMTAB_NO_STATIC */
    int static_calls;   /* -c */
    struct cg_spec specs[64];
    size_t nspecs;
    struct cg_arc_spec arcs[64];
    size_t narcs;
    const char *prog;
    char **gmons;
    int ngmons;
    int json;    /* --json */
    int threads; /* --threads */
    int cgdata;  /* the profile is in cgprof's format */
};

#define OPT_DEMANGLE    256
#define OPT_NO_DEMANGLE 257
#define OPT_JSON        259
#define OPT_THREADS     260
#define OPT_INLINE      258

/* Adds NAME to TABLE; returns 0, or 2 after a message. */
static int add_spec(struct report_args *a, int opt, const char *name, enum cg_table table)
{
    if (name[0] == '\0' || strchr(name, '.') || strchr(name, ':') ||
        isdigit((unsigned char)name[0])) {
        fprintf(stderr, "cgprof report: -%c %s: file and line specifications not yet supported\n",
                opt, name);
        return 2;
    }
    if (a->nspecs == sizeof a->specs / sizeof a->specs[0]) {
        fprintf(stderr, "cgprof report: too many function names\n");
        return 2;
    }
    a->specs[a->nspecs++] = (struct cg_spec){table, name};
    return 0;
}

/* -k FROM/TO (FROM or TO may be empty: any function).  Splits ARG. */
static int add_arc_spec(struct report_args *a, char *arg)
{
    char *slash = strchr(arg, '/');
    if (!slash)
        return 0; /* gprof ignores a -k without a slash */
    *slash = '\0';
    const char *to = slash + 1;
    const char *sides[2] = {arg, to};
    for (int i = 0; i < 2; i++)
        if (strchr(sides[i], '.') || strchr(sides[i], ':') || isdigit((unsigned char)sides[i][0])) {
            fprintf(stderr,
                    "cgprof report: -k %s: file and line specifications not yet supported\n",
                    sides[i]);
            return 2;
        }
    if (a->narcs == sizeof a->arcs / sizeof a->arcs[0]) {
        fprintf(stderr, "cgprof report: too many -k options\n");
        return 2;
    }
    a->arcs[a->narcs++] = (struct cg_arc_spec){arg[0] ? arg : NULL, to[0] ? to : NULL};
    return 0;
}

/* -p, -P, -q, -Q: with NAME, a table entry and the style shown; without,
 * the style shown or hidden. */
static int style_opt(struct report_args *a, int opt, const char *name)
{
    unsigned bit = (opt == 'p' || opt == 'P') ? STYLE_FLAT : STYLE_GRAPH;
    int negate = opt == 'P' || opt == 'Q';
    if (name) {
        enum cg_table t = bit == STYLE_FLAT ? CG_INCL_FLAT : CG_INCL_GRAPH;
        if (add_spec(a, opt, name, negate ? t + 1 : t) != 0)
            return 2;
        a->style |= bit;
    } else if (negate) {
        a->style &= ~bit;
    } else {
        a->style |= bit;
    }
    a->user |= bit;
    return 0;
}

static int parse_number(int opt, const char *arg, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*arg == '\0' || *end != '\0' || v < 0 || v > 1000000) {
        fprintf(stderr, "cgprof report: -%c: '%s' is not a number\n", opt, arg);
        return 2;
    }
    *out = (int)v;
    return 0;
}

static int demangle_style(struct report_args *a, const char *style)
{
    a->text.demangle = 1;
    if (!style || strcmp(style, "auto") == 0 || strcmp(style, "gnu-v3") == 0)
        return 0;
    if (strcmp(style, "none") == 0) {
        a->text.demangle = 0;
        return 0;
    }
    if (strcmp(style, "java") == 0 || strcmp(style, "gnat") == 0 || strcmp(style, "dlang") == 0 ||
        strcmp(style, "rust") == 0)
        fprintf(stderr, "cgprof report: --demangle=%s: not yet supported\n", style);
    else
        fprintf(stderr, "cgprof report: unknown demangling style '%s'\n", style);
    return 2;
}

/* One option; returns 0 to go on, -1 to exit 0 (help), 2 on a usage error. */
static int one_opt(struct report_args *a, int c, char *arg, char **argv)
{
    int ignored;
    switch (c) {
    case 'a':
        a->sym_flags |= SYMTAB_NO_STATIC;
        return 0;
    case 'b':
        a->text.brief = 1;
        return 0;
    case 'c':
        a->static_calls = 1;
        return 0;
    case 'D':
        /* gprof 2.40 keeps even untyped symbols (etext, data_start) with
         * -D on ELF executables: nothing to leave out. */
        return 0;
    case 'e':
        return add_spec(a, c, arg, CG_EXCL_GRAPH);
    case 'E':
        return add_spec(a, c, arg, CG_EXCL_GRAPH) || add_spec(a, c, arg, CG_EXCL_TIME) ? 2 : 0;
    case 'f':
        return add_spec(a, c, arg, CG_INCL_GRAPH);
    case 'F':
        return add_spec(a, c, arg, CG_INCL_GRAPH) || add_spec(a, c, arg, CG_INCL_TIME) ? 2 : 0;
    case 'k':
        return add_arc_spec(a, arg);
    case 'm':
        return parse_number(c, arg, &ignored); /* counts only line-level output uses */
    case 'n':
        return add_spec(a, c, arg, CG_INCL_TIME);
    case 'N':
        return add_spec(a, c, arg, CG_EXCL_TIME);
    case 'p':
    case 'P':
    case 'q':
    case 'Q':
        return style_opt(a, c, arg);
    case 's':
        a->style |= STYLE_SUM;
        a->user |= STYLE_SUM;
        return 0;
    case 'T':
        a->text.bsd = 1;
        return 0;
    case 'w':
        return parse_number(c, arg, &a->text.width);
    case 'z':
        a->text.show_zeros = 1;
        return 0;
    case 'Z':
        if (arg) {
            fprintf(stderr, "cgprof report: -Z NAME: not yet supported\n");
            return 2;
        }
        a->style &= ~STYLE_EXEC;
        a->user |= STYLE_EXEC;
        return 0;
    case OPT_DEMANGLE:
        return demangle_style(a, arg);
    case OPT_NO_DEMANGLE:
        a->text.demangle = 0;
        return 0;
    case OPT_JSON:
        a->json = 1;
        return 0;
    case OPT_THREADS:
        a->threads = 1;
        return 0;
    case 'h':
        report_usage(stdout);
        return -1;
    case OPT_INLINE:
        fprintf(stderr, "cgprof report: --inline-file-names: not yet supported\n");
        return 2;
    case 'A':
    case 'C':
    case 'd':
    case 'i':
    case 'I':
    case 'J':
    case 'l':
    case 'L':
    case 'O':
    case 'r':
    case 'R':
    case 'S':
    case 't':
    case 'v':
    case 'x':
    case 'y':
        fprintf(stderr, "cgprof report: -%c: not yet supported\n", c);
        return 2;
    default:
        if (optopt && strchr("eEfFkmnNwIORSt", optopt))
            fprintf(stderr, "cgprof report: option '-%c' needs an argument\n", optopt);
        else if (optopt)
            fprintf(stderr, "cgprof report: unknown option '-%c' (try 'cgprof report -h')\n",
                    optopt);
        else
            fprintf(stderr, "cgprof report: unknown option '%s' (try 'cgprof report -h')\n",
                    argv[optind - 1]);
        return 2;
    }
}

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

/* 1 if cgprof.data is there and no older than gmon.out (or there is none). */
static int cgdata_is_newer(void)
{
    struct stat c, g;
    if (stat("cgprof.data", &c) != 0 || !is_cgdata_file("cgprof.data"))
        return 0;
    return stat("gmon.out", &g) != 0 || c.st_mtim.tv_sec > g.st_mtim.tv_sec ||
           (c.st_mtim.tv_sec == g.st_mtim.tv_sec && c.st_mtim.tv_nsec >= g.st_mtim.tv_nsec);
}

/* The positional arguments: [PROG [GMON...]], or a cgprof profile alone.
 * With none: cgprof.data or a.out's gmon.out, whichever is newer. */
static int pick_inputs(struct report_args *a, int n, char **args)
{
    static char *dflt[] = {"cgprof.data"};
    if (n == 0 && cgdata_is_newer()) {
        a->cgdata = 1;
        a->gmons = dflt;
        a->ngmons = 1;
        return 0;
    }
    if (n >= 1 && is_cgdata_file(args[0])) {
        a->cgdata = 1;
        a->gmons = args;
        a->ngmons = n;
    } else {
        a->prog = n >= 1 ? args[0] : "a.out";
        a->gmons = args + (n >= 1);
        a->ngmons = n >= 1 ? n - 1 : 0;
        for (int i = 0; i < a->ngmons; i++)
            if (is_cgdata_file(a->gmons[i])) {
                a->cgdata = 1; /* the profile names its executable: PROG is not needed */
                a->gmons = &a->gmons[i];
                a->ngmons = 1;
                break;
            }
    }
    return 0;
}

/* Parses ARGV into A; returns -1 to exit 0 (help), 2 on a usage error. */
static int parse_args(int argc, char **argv, struct report_args *a)
{
    static const struct option longopts[] = {
        {"no-static", no_argument, NULL, 'a'},
        {"annotated-source", optional_argument, NULL, 'A'},
        {"brief", no_argument, NULL, 'b'},
        {"static-call-graph", no_argument, NULL, 'c'},
        {"exec-counts", optional_argument, NULL, 'C'},
        {"debug", optional_argument, NULL, 'd'},
        {"ignore-non-functions", no_argument, NULL, 'D'},
        {"file-info", no_argument, NULL, 'i'},
        {"directory-path", required_argument, NULL, 'I'},
        {"no-annotated-source", optional_argument, NULL, 'J'},
        {"line", no_argument, NULL, 'l'},
        {"print-path", no_argument, NULL, 'L'},
        {"min-count", required_argument, NULL, 'm'},
        {"time", required_argument, NULL, 'n'},
        {"no-time", required_argument, NULL, 'N'},
        {"file-format", required_argument, NULL, 'O'},
        {"flat-profile", optional_argument, NULL, 'p'},
        {"no-flat-profile", optional_argument, NULL, 'P'},
        {"graph", optional_argument, NULL, 'q'},
        {"no-graph", optional_argument, NULL, 'Q'},
        {"function-ordering", no_argument, NULL, 'r'},
        {"file-ordering", required_argument, NULL, 'R'},
        {"sum", no_argument, NULL, 's'},
        {"external-symbol-table", required_argument, NULL, 'S'},
        {"table-length", required_argument, NULL, 't'},
        {"traditional", no_argument, NULL, 'T'},
        {"version", no_argument, NULL, 'v'},
        {"width", required_argument, NULL, 'w'},
        {"all-lines", no_argument, NULL, 'x'},
        {"separate-files", no_argument, NULL, 'y'},
        {"display-unused-functions", no_argument, NULL, 'z'},
        {"no-exec-counts", optional_argument, NULL, 'Z'},
        {"inline-file-names", no_argument, NULL, OPT_INLINE},
        {"demangle", optional_argument, NULL, OPT_DEMANGLE},
        {"no-demangle", no_argument, NULL, OPT_NO_DEMANGLE},
        {"help", no_argument, NULL, 'h'},
        {"json", no_argument, NULL, OPT_JSON},
        {"threads", no_argument, NULL, OPT_THREADS},
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 1;
    opterr = 0;
    a->text.demangle = 1;
    while ((c = getopt_long(argc, argv,
                            "+aA::bcC::d::De:E:f:F:hiI:J::k:lLm:n:N:O:p::P::q::Q::rR:sS:t:"
                            "Tvw:xyzZ::",
                            longopts, NULL)) != -1) {
        int rc = one_opt(a, c, optarg, argv);
        if (rc != 0)
            return rc;
    }
    return pick_inputs(a, argc - optind, argv + optind);
}

/* gprof's choice of tables: those chosen, or else all the data allows
 * less those the options mentioned. */
static void choose_tables(struct report_args *a, int has_samples, int has_arcs)
{
    unsigned style = a->style;
    if (style == 0) {
        if (has_samples)
            style |= STYLE_FLAT;
        if (has_arcs)
            style |= STYLE_GRAPH;
        style &= ~a->user;
    }
    a->text.flat = (style & STYLE_FLAT) != 0;
    a->text.graph = (style & STYLE_GRAPH) != 0;
    a->style = style;
}

static int load_profiles(const struct report_args *a, struct gmon_data *gd, char *err)
{
    static char *default_gmon[] = {"gmon.out"};
    char **files = a->ngmons ? a->gmons : default_gmon;
    int n = a->ngmons ? a->ngmons : 1;
    for (int i = 0; i < n; i++)
        if (gmon_read(gd, files[i], err, ERR_LEN) != 0)
            return -1;
    return 0;
}

/* -c: the calls found in the text, into O. Returns 0, or -1 after a message. */
/* A cgprof profile's data and map, for -c (its main executable's calls). */
static const struct cgdata *cur_cgdata;
static const struct modmap *cur_modmap;

static int find_static_calls(const struct report_args *a, const struct symtab *st,
                             const struct gmon_data *gd, struct cg_opts *o)
{
    char err[ERR_LEN];
    struct cg_static_call *calls = NULL;
    size_t n = 0;
    int rc = a->cgdata && cur_cgdata
                 ? modmap_static_calls(cur_modmap, cur_cgdata, a->sym_flags, &calls, &n, err,
                                       sizeof err)
                 : disasm_static_calls(a->prog, st, gd, &calls, &n, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "cgprof report: %s\n", err);
        return -1;
    }
    if (rc > 0)
        fprintf(stderr, "cgprof report: %s\n", err); /* as gprof, go on without */
    o->static_calls = calls;
    o->nstatic_calls = n;
    return 0;
}

/* Analyzes and prints; PCS (a cgprof profile's samples) replace the
 * histograms when given.  PROG names the program in --json. */
/* --threads: each thread's samples and CPU time. */
static void print_threads(const struct cgdata *d, double rate)
{
    printf("\t\t\tPer-thread totals\n\n%10s %10s %10s %12s\n", "thread", "samples", "seconds",
           "cpu seconds");
    for (size_t i = 0; i < d->nthreads; i++)
        printf("%10u %10llu %10.2f %12.2f%s\n", d->threads[i].tid,
               (unsigned long long)d->threads[i].samples, (double)d->threads[i].samples / rate,
               d->threads[i].cpu_ns / 1e9, d->threads[i].flags & 1 ? "" : "  (running)");
    printf("\n");
}

static int analyze_and_print(struct report_args *a, const struct symtab *st,
                             const struct gmon_data *gd, const struct cg_opts *pcs,
                             const char *prog, const struct cgdata *cd)
{
    char err[ERR_LEN];
    struct callgraph g;
    struct cg_opts o = {a->specs, a->nspecs, a->arcs, a->narcs, NULL, 0, NULL, 0, 0, NULL};
    if (pcs) {
        o.pc_samples = pcs->pc_samples;
        o.npc_samples = pcs->npc_samples;
        o.pc_rate = pcs->pc_rate;
        o.pc_unit = pcs->pc_unit;
    }
    choose_tables(a, gd->nhists > 0 || o.npc_samples > 0, gd->narcs > 0);
    if (a->style & STYLE_SUM) {
        if (gmon_write_sum(gd, "gmon.sum", err, sizeof err) != 0) {
            fprintf(stderr, "cgprof report: %s\n", err);
            return 1;
        }
    }
    if (a->static_calls && find_static_calls(a, st, gd, &o) != 0)
        return 1;
    int rc = cg_build_opts(&g, st, gd, &o, err, sizeof err);
    free((void *)o.static_calls);
    if (rc != 0) {
        fprintf(stderr, "cgprof report: %s\n", err);
        return 1;
    }
    if (gd->lost_calls > 0)
        fprintf(stderr,
                "cgprof report: warning: %llu calls were not recorded (the runtime ran out "
                "of memory)\n",
                (unsigned long long)gd->lost_calls);
    if (a->json) {
        json_print(stdout, &g, prog, gd->lost_calls, cd ? cd->threads : NULL,
                   cd ? cd->nthreads : 0);
    } else {
        if (a->threads && cd)
            print_threads(cd, g.rate > 0 ? g.rate : 1);
        gprof_text_print(stdout, &g, &a->text);
    }
    cg_free(&g);
    rc = fflush(stdout) == 0 ? 0 : 1;
    if (rc)
        fprintf(stderr, "cgprof report: error writing the report\n");
    return rc;
}

/* Reads every profile given and sums them into D (a process tree).  With
 * several, the same module loaded more than once (a library dlopen'ed
 * again) is one module of the sum. */
static int read_cgdata_sum(const struct report_args *a, struct cgdata *d, char *err, size_t errsz)
{
    if (a->ngmons == 1)
        return cgdata_read(d, a->gmons[0], err, errsz);
    memset(d, 0, sizeof *d);
    for (int i = 0; i < a->ngmons; i++) {
        struct cgdata x;
        int rc = cgdata_read(&x, a->gmons[i], err, errsz);
        if (rc == 0 && i == 0) {
            d->pid = x.pid;
            d->rate = x.rate;
            d->period = x.period;
            d->kind = x.kind;
            d->timed = x.timed;
            memcpy(d->event, x.event, sizeof d->event);
        }
        if (rc == 0)
            rc = cgdata_add(d, a->gmons[0], &x, a->gmons[i], err, errsz);
        cgdata_free(&x);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* Profiles of the same process tree next to the one profile read (its
 * children NAME.PID, later images NAME.execN): said, with how to sum. */
static void note_children(const char *name)
{
    char pat[PATH_MAX + 8];
    snprintf(pat, sizeof pat, "%s.*", name);
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0)
        return;
    size_t n = 0;
    for (size_t i = 0; i < g.gl_pathc; i++)
        if (!strstr(g.gl_pathv[i] + strlen(name), "cgprof-tmp") &&
            strcmp(g.gl_pathv[i] + strlen(name), ".sum") != 0 && is_cgdata_file(g.gl_pathv[i]))
            n++;
    globfree(&g);
    if (n)
        fprintf(stderr,
                "cgprof report: note: %zu more profile%s of this run's processes (children, "
                "exec'd images) %s next to %s; to include them: cgprof report %s %s.*\n",
                n, n == 1 ? "" : "s", n == 1 ? "is" : "are", name, name, name);
}

/* A cgprof profile: its modules' symbols in one map, samples at exact pcs. */
static int run_cgdata(struct report_args *a)
{
    char err[ERR_LEN];
    struct cgdata d;
    if (read_cgdata_sum(a, &d, err, sizeof err) != 0) {
        fprintf(stderr, "cgprof report: %s\n", err);
        cgdata_free(&d);
        return 1;
    }
    if (a->ngmons == 1 && !a->json)
        note_children(a->gmons[0]);
    if (a->style & STYLE_SUM) {
        /* the sum of cgprof profiles is a cgprof profile */
        FILE *f = fopen("cgprof.sum", "wb");
        if (!f || cgdata_write(&d, f) != 0 || fclose(f) != 0) {
            fprintf(stderr, "cgprof report: cannot write cgprof.sum: %s\n", strerror(errno));
            cgdata_free(&d);
            return 1;
        }
        a->style &= ~STYLE_SUM;
    }
    struct modmap mm;
    if (modmap_build(&mm, &d, a->sym_flags, stderr, err, sizeof err) != 0) {
        fprintf(stderr, "cgprof report: %s\n", err);
        cgdata_free(&d);
        return 1;
    }
    cur_cgdata = &d;
    cur_modmap = &mm;
    if (d.lost_samples)
        fprintf(stderr, "cgprof report: warning: %llu samples were lost by the runtime\n",
                (unsigned long long)d.lost_samples);
    if (d.unsampled_threads)
        fprintf(stderr, "cgprof report: warning: %llu threads could not be sampled\n",
                (unsigned long long)d.unsampled_threads);
    if (d.runtime.present && !a->json)
        fprintf(stderr,
                "cgprof report: note: the profiler's own work (%llu profile writes, its helper "
                "thread) took %.1f ms of CPU, left out of this profile\n",
                (unsigned long long)d.runtime.writes,
                (double)(d.runtime.helper_cpu_ns + d.runtime.write_cpu_ns) / 1e6);
    /* the profiler's own call counting is left out, as gprof leaves out
     * mcount; say how much it was */
    double all = 0, own = 0;
    for (size_t i = 0; i < mm.nsamples; i++) {
        long j = symtab_lookup(&mm.st, mm.samples[i].pc);
        all += (double)mm.samples[i].count;
        if (j >= 0 && mm.st.syms[j].is_runtime)
            own += (double)mm.samples[i].count;
    }
    if (own > 0 && !a->json)
        fprintf(stderr,
                "cgprof report: note: %.1f%% of the samples were in libcgprof's call counting "
                "(mcount), left out of the profile as gprof leaves out mcount\n",
                100 * own / all);
    struct cg_opts pcs;
    memset(&pcs, 0, sizeof pcs);
    pcs.pc_samples = mm.samples;
    pcs.npc_samples = mm.nsamples;
    pcs.pc_rate = d.timed ? (double)d.rate : 1.0;
    pcs.pc_unit = d.timed ? "seconds" : d.event;
    const char *prog = "?";
    for (size_t i = 0; i < d.nmodules; i++)
        if (d.modules[i].flags & CGDATA_MOD_MAIN)
            prog = d.modules[i].path;
    int rc = analyze_and_print(a, &mm.st, &mm.gd, &pcs, prog, &d);
    modmap_free(&mm);
    cgdata_free(&d);
    return rc;
}

static int run(struct report_args *a)
{
    if (a->cgdata)
        return run_cgdata(a);
    char err[ERR_LEN];
    struct symtab st;
    struct gmon_data gd;
    gmon_init(&gd);
    if (symtab_load_flags(&st, a->prog, a->sym_flags, err, sizeof err) != 0) {
        fprintf(stderr, "cgprof report: %s\n", err);
        return 1;
    }
    int rc = 1;
    if (load_profiles(a, &gd, err) == 0)
        rc = analyze_and_print(a, &st, &gd, NULL, a->prog, NULL);
    else
        fprintf(stderr, "cgprof report: %s\n", err);
    gmon_free(&gd);
    symtab_free(&st);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    struct report_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? 0 : 2;
    return run(&a);
}

/* cgprof report: read an executable and its gmon.out files, print gprof-style tables. */
#include "cmds.h"

#include "callgraph.h"
#include "cgdata.h"
#include "cglines.h"
#include "cgsum.h"
#include "disasm.h"
#include "escape.h"
#include "gmon.h"
#include "gprof_text.h"
#include "annotate.h"
#include "bbcount.h"
#include "json.h"
#include "load.h"
#include "srcsamples.h"
#include "symspec.h"
#include "lines.h"
#include "linemap.h"
#include "inlview.h"
#include "modmap.h"
#include "stacks.h"
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
          "  A cgprof profile (what cgprof record writes) names its own executable and\n"
          "  libraries; PROG, given, replaces the executable (a program moved since).\n"
          "  With no arguments: the newer of cgprof.data and gmon.out.\n"
          "  The options are gprof's; NAME is a function's symbol name.\n"
          "  -a, --no-static                 leave out static functions (time goes to the one "
          "before)\n"
          "  -b, --brief                     no explanations after the tables\n"
          "  -c, --static-call-graph         add calls found in the text as arcs with count 0\n"
          "  -C, --exec-counts               execution counts of functions (-l: of lines, blocks)\n"
          "  -D, --ignore-non-functions      (accepted; gprof leaves nothing out on ELF)\n"
          "  -e NAME / -E NAME               leave NAME out of the call graph / and its time\n"
          "  -f NAME / -F NAME               only NAME and its callees in the graph / and time\n"
          "  -k FROM/TO                      leave out the arcs from FROM to TO\n"
          "  -A, --annotated-source          the sources with each function's calls (-g)\n"
          "  -i, --file-info                 what each gmon.out holds\n"
          "  -I DIRS                         where to look for sources (colon-separated)\n"
          "  -J, --no-annotated-source       no annotated source\n"
          "  -l, --line                      line by line (a program built with -g)\n"
          "  -m N, --min-count=N             -A: fewer calls are shown as #####\n"
          "  -n NAME, --time=NAME            only NAME's time is propagated\n"
          "  -N NAME, --no-time=NAME         NAME's time is not propagated\n"
          "  -p[NAME], --flat-profile[=NAME] print the flat profile [of NAME only]\n"
          "  -P[NAME], --no-flat-profile[=NAME]  no flat profile [leave NAME out of it]\n"
          "  -q[NAME], --graph[=NAME]        print the call graph [from NAME down] and index\n"
          "  -Q[NAME], --no-graph[=NAME]     no call graph [leave NAME out of it]\n"
          "  -s, --sum                       write the summed profiles to gmon.sum (cgprof.sum\n"
          "                                  for cgprof profiles)\n"
          "  -T, --traditional               the traditional BSD layout\n"
          "  -t N, --table-length=N          -A: lines in the Top N Lines table (default 10)\n"
          "  -w N, --width=N                 index width (default 80)\n"
          "  -x, --all-lines                 -A: a count on every executed line\n"
          "  -y, --separate-files            -A: write FILE-ann files instead\n"
          "  -z, --display-unused-functions  include functions never called nor sampled\n"
          "  -Z, --no-exec-counts            no execution counts\n"
          "  --demangle[=STYLE], --no-demangle  C++ names demangled (default) or not\n"
          "  --json                          the analyzed profile as JSON "
          "(docs/json-schema.md)\n"
          "  --threads                       per-thread totals (cgprof profiles)\n"
          "  --kernel                        the kernel's functions in the stacks, with their\n"
          "                                  own time (a profile of record --kernel)\n"
          "  --inline                        functions inlined into sampled code as entries\n"
          "                                  of their own, NAME [inlined] (from the DWARF)\n"
          "  --propagate=MODE                a profile with stacks: times 'measured' from the\n"
          "                                  stacks (default), or 'counts': gprof's estimate\n"
          "  -v, -V, --version               the version\n"
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
#define STYLE_INFO  16u
#define STYLE_ANNO  32u

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
    int json;                  /* --json */
    int threads;               /* --threads */
    int kernel;                /* --kernel */
    int cgdata;                /* the profile is in cgprof's format */
    int counts;                /* --propagate=counts: gprof's estimate even with stacks */
    int measured;              /* --propagate=measured, asked for by name */
    int lines;                 /* -l: line by line */
    int inline_funcs;          /* --inline: inlined functions as entries */
    int positional;            /* a symbol spec names a file or a line */
    struct annotate_opts anno; /* -A and its options */
    char *dirs[64];            /* -I */
};

#define OPT_DEMANGLE    256
#define OPT_NO_DEMANGLE 257
#define OPT_JSON        259
#define OPT_THREADS     260
#define OPT_INLINE      258
#define OPT_PROPAGATE   261
#define OPT_KERNEL      262
#define OPT_INLINE_FUNCS 263

/* Adds NAME to TABLE; returns 0, or 2 after a message. */
static int add_spec(struct report_args *a, int opt, const char *name, enum cg_table table)
{
    if (name[0] == '\0') {
        fprintf(stderr, "cgprof report: -%c: empty symbol specification\n", opt);
        return 2;
    }
    if (symspec_positional(name))
        a->positional = 1;
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
        fprintf(stderr, "cgprof report: -%c: '%s' is not a number from 0 to 1000000\n", opt, arg);
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

static int add_dirs(struct report_args *a, char *arg);

/* One option; returns 0 to go on, -1 to exit 0 (help), 2 on a usage error. */
static int one_opt(struct report_args *a, int c, char *arg, const char *cur)
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
        if (parse_number(c, arg, &ignored) != 0)
            return 2;
        a->anno.min_calls = ignored > 0 ? (unsigned long)ignored : 0;
        return 0;
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
    case OPT_KERNEL:
        a->kernel = 1;
        return 0;
    case OPT_PROPAGATE:
        if (strcmp(arg, "counts") != 0 && strcmp(arg, "measured") != 0) {
            fprintf(stderr, "cgprof report: --propagate=%s: 'measured' or 'counts'\n", arg);
            return 2;
        }
        a->counts = strcmp(arg, "counts") == 0;
        a->measured = !a->counts;
        return 0;
    case 'h':
        report_usage(stdout);
        return -1;
    case 'v':
    case 'V':
        printf("cgprof %s\n", CGPROF_VERSION);
        return -1;
    case OPT_INLINE_FUNCS:
        a->inline_funcs = 1;
        return 0;
    case OPT_INLINE:
        fprintf(stderr, "cgprof report: --inline-file-names: not yet supported\n");
        return 2;
    case 'l':
        a->lines = 1;
        return 0;
    case 'i':
        a->style |= STYLE_INFO;
        a->user |= STYLE_INFO;
        return 0;
    case 'A':
    case 'J':
        if (arg) {
            fprintf(stderr, "cgprof report: -%c NAME: not yet supported\n", c);
            return 2;
        }
        if (c == 'A')
            a->style |= STYLE_ANNO;
        else
            a->style &= ~STYLE_ANNO;
        a->user |= STYLE_ANNO;
        return 0;
    case 'x':
        a->anno.all_lines = 1;
        return 0;
    case 'y':
        a->anno.to_files = 1;
        return 0;
    case 't':
        return parse_number(c, arg, &a->anno.table_len);
    case 'I':
        return add_dirs(a, arg);
    case 'C':
        if (arg) {
            fprintf(stderr, "cgprof report: -C NAME: not yet supported\n");
            return 2;
        }
        a->style |= STYLE_EXEC;
        a->user |= STYLE_EXEC;
        return 0;
    case 'd':
    case 'L':
    case 'O':
    case 'r':
    case 'R':
    case 'S':
        fprintf(stderr, "cgprof report: -%c: not yet supported\n", c);
        return 2;
    default:
        cli_bad_option("cgprof report", cur, optopt, "eEfFkmnNwIORSt");
        return 2;
    }
}

/* -I DIRS: a colon-separated list of directories searched for sources. */
static int add_dirs(struct report_args *a, char *arg)
{
    for (char *d = strtok(arg, ":"); d; d = strtok(NULL, ":")) {
        if (a->anno.ndirs == sizeof a->dirs / sizeof a->dirs[0]) {
            fprintf(stderr, "cgprof report: too many -I directories\n");
            return 2;
        }
        a->dirs[a->anno.ndirs++] = d;
    }
    a->anno.dirs = a->dirs;
    return 0;
}

/* The positional arguments: [PROG [GMON...]], or a cgprof profile alone
 * (load.c's choice, shared with export). */
static int pick_inputs(struct report_args *a, int n, char **args)
{
    if (a->json && (a->lines || (a->style & (STYLE_ANNO | STYLE_EXEC)))) {
        fprintf(stderr, "cgprof report: --json with %s: not supported yet\n",
                a->lines                  ? "-l"
                : (a->style & STYLE_ANNO) ? "-A"
                                          : "-C");
        return 2;
    }
    struct load_inputs in;
    if (load_pick_inputs(&in, n, args, "cgprof report") != 0)
        return 2;
    a->prog = in.prog;
    a->gmons = in.files;
    a->ngmons = in.nfiles;
    a->cgdata = in.cgdata;
    if (a->cgdata && (a->style & STYLE_INFO)) {
        fprintf(stderr, "cgprof report: -i: only for gmon.out profiles\n");
        return 2;
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
        {"kernel", no_argument, NULL, OPT_KERNEL},
        {"inline", no_argument, NULL, OPT_INLINE_FUNCS},
        {"propagate", required_argument, NULL, OPT_PROPAGATE},
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 1;
    opterr = 0;
    a->text.demangle = 1;
    a->anno.min_calls = 1;
    a->anno.table_len = 10;
    for (;;) {
        /* the argument being read, for messages (with '+', never permuted) */
        const char *cur = optind < argc ? argv[optind] : NULL;
        c = getopt_long(argc, argv,
                        "+aA::bcC::d::De:E:f:F:hiI:J::k:lLm:n:N:O:p::P::q::Q::rR:sS:t:"
                        "TvVw:xyzZ::",
                        longopts, NULL);
        if (c == -1)
            break;
        int rc = one_opt(a, c, optarg, cur);
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

/* Reads the gmon.out files; with -i, says what each holds as gprof does. */
static int load_profiles(struct report_args *a, struct gmon_data *gd, char *err)
{
    static char *default_gmon[] = {"gmon.out"};
    char **files = a->ngmons ? a->gmons : default_gmon;
    int n = a->ngmons ? a->ngmons : 1;
    for (int i = 0; i < n; i++) {
        uint64_t h = gd->nhist_tags, c = gd->narc_tags, b = gd->nbb_tags;
        if (gmon_read(gd, files[i], err, ERR_LEN) != 0)
            return -1;
        if (!(a->style & STYLE_INFO))
            continue;
        h = gd->nhist_tags - h, c = gd->narc_tags - c, b = gd->nbb_tags - b;
        printf("File `%s' (version %u) contains:\n", files[i], (unsigned)gd->version);
        printf("\t%llu histogram record%s\n", (unsigned long long)h, h == 1 ? "" : "s");
        printf("\t%llu call-graph record%s\n", (unsigned long long)c, c == 1 ? "" : "s");
        printf("\t%llu basic-block count record%s\n", (unsigned long long)b, b == 1 ? "" : "s");
        a->text.after_info = 1;
    }
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
    int rc =
        a->cgdata && cur_cgdata
            ? modmap_static_calls(cur_modmap, cur_cgdata, a->sym_flags, &calls, &n, err, sizeof err)
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

/* A profile with stacks: symbolizes them (into STK) and, when O is not
 * NULL (times measured), adds the calls they show to O; says how many
 * samples had their stacks cut and whether the stacks disagree with the
 * samples.  0, or 1 after a message. */
static int stack_calls(const char *file, const struct cgdata *cd, const struct symtab *st,
                       struct stacks *stk, struct cg_opts *o)
{
    char err[ERR_LEN];
    if (stacks_prepare(stk, cd, st, err, sizeof err) != 0) {
        fprintf(stderr, "cgprof report: %s: %s\n", file, err);
        stacks_free(stk);
        return 1;
    }
    if (o) {
        o->stack_calls = stk->calls;
        o->nstack_calls = stk->ncalls;
    }
    uint64_t sampled = 0;
    for (size_t i = 0; i < cd->nsamples; i++)
        sampled += cd->samples[i].count;
    if (cd->stacks_lost)
        fprintf(stderr,
                "cgprof report: warning: %llu samples have no stack (the runtime ran out of "
                "memory); the call graph's times leave them out\n",
                (unsigned long long)cd->stacks_lost);
    if (sampled != stk->samples + cd->stacks_lost)
        fprintf(stderr,
                "cgprof report: warning: the stacks hold %llu samples but the profile %llu; "
                "measured times may be off\n",
                (unsigned long long)(stk->samples + cd->stacks_lost), (unsigned long long)sampled);
    if (cd->stacks_cut)
        fprintf(stderr,
                "cgprof report: note: %llu samples had stacks deeper than %llu frames, or than "
                "the stack copied with them; their outermost frames were cut, and the "
                "functions there miss that time\n",
                (unsigned long long)cd->stacks_cut, (unsigned long long)cd->stack_depth_limit);
    return 0;
}

/* A warning for NAME (given to an option) when no function has it. */
static void check_named(const struct symtab *st, const char *name)
{
    for (size_t i = 0; i < st->n; i++)
        if (cg_name_matches(name, st->syms[i].name))
            return;
    fprintf(stderr,
            "cgprof report: warning: no function is named '%s': the option naming it "
            "changes nothing\n",
            name);
}

static void check_names(const struct report_args *a, const struct symtab *st)
{
    for (size_t k = 0; k < a->nspecs; k++) {
        size_t j = 0;
        while (j < k && strcmp(a->specs[j].name, a->specs[k].name) != 0)
            j++;
        if (j == k) /* once per name (-E puts it in two tables) */
            check_named(st, a->specs[k].name);
    }
    for (size_t k = 0; k < a->narcs; k++) {
        if (a->arcs[k].from)
            check_named(st, a->arcs[k].from);
        if (a->arcs[k].to)
            check_named(st, a->arcs[k].to);
    }
}

/* -C and -A: the execution counts, and the sources annotated with them,
 * of each function (with -l, of each line symbol, with its basic-block
 * counts).  0, or 1 after a message. */
static int print_sources(struct report_args *a, const struct symtab *st, const struct gmon_data *gd,
                         const struct callgraph *g)
{
    char err[ERR_LEN];
    struct symtab own;
    const struct symtab *pos = st;
    memset(&own, 0, sizeof own);
    if (!a->lines && a->cgdata) { /* modmap's symbols, in every module's DWARF */
        if (cglines_positions(&own, st, cur_cgdata) != 0) {
            fprintf(stderr, "cgprof report: out of memory for source positions\n");
            return 1;
        }
        pos = &own;
    } else if (!a->lines) { /* function symbols: their positions are looked up here */
        if (lines_positions(&own, st, a->prog, err, sizeof err) != 0) {
            fprintf(stderr, "cgprof report: %s\n", err);
            return 1;
        }
        pos = &own;
    }
    uint64_t *calls = malloc((g->nsyms ? g->nsyms : 1) * sizeof *calls);
    struct bb_slots *bbs = a->lines && gd->nbbs ? bb_attach(pos, gd) : NULL;
    int rc = calls && (bbs || !a->lines || !gd->nbbs) ? 0 : 1;
    for (size_t i = 0; rc == 0 && i < g->nsyms; i++)
        calls[i] = g->nodes[i].ncalls;
    int before = a->text.after_info || a->text.flat || a->text.graph;
    if (rc == 0 && (a->style & STYLE_EXEC)) {
        annotate_exec_counts(stdout, pos, calls, bbs, a->text.show_zeros, before);
        before = 1;
    }
    a->anno.printed_before = before;
    a->anno.show_zeros = a->text.show_zeros;
    if (rc == 0 && (a->style & STYLE_ANNO) &&
        annotate_print(stdout, pos, calls, bbs, &a->anno, "cgprof report") != 0)
        rc = 1;
    if (rc)
        fprintf(stderr, "cgprof report: out of memory annotating the sources\n");
    free(bbs);
    free(calls);
    symtab_free(&own);
    return rc;
}

/* Symbol specs naming files or lines: every spec is matched against the
 * symbols' source positions here, as gprof matches them, into *BITS (one
 * set of tables per symbol) for the model.  0, or 1 after a message. */
static int match_specs(const struct report_args *a, const struct symtab *st, struct cg_opts *o,
                       unsigned **bits)
{
    char err[ERR_LEN];
    struct symtab own;
    const struct symtab *pos = st;
    memset(&own, 0, sizeof own);
    if (!a->lines) {
        if (lines_positions(&own, st, a->prog, err, sizeof err) != 0) {
            fprintf(stderr, "cgprof report: %s\n", err);
            return 1;
        }
        pos = &own;
    }
    *bits = calloc(st->n ? st->n : 1, sizeof **bits);
    if (!*bits) {
        fprintf(stderr, "cgprof report: out of memory matching symbol specifications\n");
        symtab_free(&own);
        return 1;
    }
    symspec_apply(pos, o->specs, o->nspecs, *bits);
    o->sym_tables = *bits;
    o->nspecs = 0; /* all matched here */
    symtab_free(&own);
    return 0;
}

static int analyze_and_print(struct report_args *a, const struct symtab *st,
                             const struct gmon_data *gd, const struct cg_opts *pcs,
                             const char *prog, const struct cgdata *cd)
{
    check_names(a, st);
    char err[ERR_LEN];
    struct callgraph g;
    struct cg_opts o = {
        .specs = a->specs, .nspecs = a->nspecs, .excl_arcs = a->arcs, .nexcl_arcs = a->narcs};
    o.show_zeros = a->text.show_zeros;
    o.callee_is_func = pcs == NULL || a->lines; /* -l: calls go to functions, as gprof's */
    if (pcs) {
        o.dense_index = !a->lines; /* -l: gprof's numbering and entries, as for gmon.out */
        o.pc_samples = pcs->pc_samples;
        o.npc_samples = pcs->npc_samples;
        o.pc_rate = pcs->pc_rate;
        o.pc_unit = pcs->pc_unit;
        o.event = pcs->event;
    }
    /* -l: line symbols call no one (the calls go from a call's line to a
     * function), so times are passed up by call counts, as gprof -l does */
    int has_stacks = cd && cd->has_stacks, measured = has_stacks && !a->counts && !a->lines;
    if (a->measured && !has_stacks)
        fprintf(stderr,
                "cgprof report: note: --propagate=measured: %s has no sampled stacks (%s); the "
                "times passed to callers are estimated from call counts, as gprof does\n",
                a->ngmons ? a->gmons[0]
                : cd      ? "cgprof.data"
                          : "gmon.out",
                cd ? "recorded with --no-stacks, -F 0, or a counting event"
                   : "a gmon.out has none");
    else if (a->measured && a->lines)
        fprintf(stderr, "cgprof report: note: --propagate=measured: with -l the times passed to "
                        "callers are estimated from call counts, as gprof -l does\n");
    /* a cgprof profile was sampled even when no sample came (-F 0, a short
     * run): its flat profile says "no time accumulated", as gprof's does;
     * stacks alone (a program without -pg) give a call graph too */
    choose_tables(a, gd->nhists > 0 || pcs != NULL, gd->narcs > 0 || (measured && cd->nstacks > 0));
    if (a->style & STYLE_SUM) {
        if (gmon_write_sum(gd, "gmon.sum", err, sizeof err) != 0) {
            fprintf(stderr, "cgprof report: %s\n", err);
            return 1;
        }
    }
    /* gprof 2.40 adds no calls found in the text to a line-level graph */
    if (a->static_calls && !a->lines && find_static_calls(a, st, gd, &o) != 0)
        return 1;
    unsigned *bits = NULL;
    if (a->positional && match_specs(a, st, &o, &bits) != 0) {
        free((void *)o.static_calls);
        return 1;
    }
    struct stacks stk;
    if (has_stacks && stack_calls(a->ngmons ? a->gmons[0] : "cgprof.data", cd, st, &stk,
                                  measured ? &o : NULL) != 0) {
        free((void *)o.static_calls);
        free(bits);
        return 1;
    }
    int rc = cg_build_opts(&g, st, gd, &o, err, sizeof err);
    free((void *)o.static_calls);
    free(bits);
    if (rc == -2) { /* the profile's fault: name it */
        fprintf(stderr, "cgprof report: %s%s: %s\n", a->ngmons ? a->gmons[0] : "gmon.out",
                a->ngmons > 1 ? " and the others" : "", err);
        if (has_stacks)
            stacks_free(&stk);
        return 1;
    }
    if (rc == 0 && measured && (rc = stacks_measure(&g, &stk, err, sizeof err)) != 0)
        cg_free(&g);
    if (rc != 0) {
        fprintf(stderr, "cgprof report: %s\n", err);
        if (has_stacks)
            stacks_free(&stk);
        return 1;
    }
    if (gd->lost_calls > 0)
        fprintf(stderr,
                "cgprof report: warning: %llu calls were not recorded (the runtime ran out "
                "of memory)\n",
                (unsigned long long)gd->lost_calls);
    if (a->json) {
        struct src_lines lines;
        struct src_sites sites;
        struct linemap lm;
        int have = cd && src_lines_build(&lines, cd) == 0;
        int have_lm = cd && linemap_init(&lm, cd, NULL) == 0;
        if (have_lm)
            lm.flags = DWI_INLINE; /* the stacks' inline chains */
        int have_sites = have_lm && src_sites_build(&sites, cd, st, &lm) == 0;
        json_print(stdout, &g, prog, gd->lost_calls, cd ? cd->threads : NULL, cd ? cd->nthreads : 0,
                   has_stacks ? &stk : NULL, have ? &lines : NULL, have_sites ? &sites : NULL, cd,
                   have_lm ? &lm : NULL);
        if (have)
            src_lines_free(&lines);
        if (have_sites)
            src_sites_free(&sites);
        if (have_lm)
            linemap_free(&lm);
    } else {
        if (a->threads && cd)
            print_threads(cd, g.rate > 0 ? g.rate : 1);
        gprof_text_print(stdout, &g, &a->text);
        if ((a->style & (STYLE_ANNO | STYLE_EXEC)) && print_sources(a, st, gd, &g) != 0)
            rc = 1;
    }
    cg_free(&g);
    if (has_stacks)
        stacks_free(&stk);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "cgprof report: error writing the report\n");
        rc = 1;
    }
    return rc;
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
    unsigned char run[16], id[16];
    int has_run = cgdata_peek_run(name, run) == 1;
    size_t n = 0, others = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *f = g.gl_pathv[i];
        if (strstr(f + strlen(name), "cgprof-tmp") || strcmp(f + strlen(name), ".sum") == 0 ||
            !load_is_cgdata(f))
            continue;
        /* a profile of another run (left by an earlier record) is not
         * this run's; one without a run id (older cgprof) may be */
        if (has_run && cgdata_peek_run(f, id) == 1 && memcmp(id, run, sizeof id) != 0)
            others++;
        else
            n++;
    }
    globfree(&g);
    if (n)
        fprintf(stderr,
                "cgprof report: note: %zu more profile%s of this run's processes (children, "
                "exec'd images) %s next to %s; to include them: cgprof report %s %s.*\n",
                n, n == 1 ? "" : "s", n == 1 ? "is" : "are", name, name, name);
    if (others)
        fprintf(stderr,
                "cgprof report: note: %zu profile%s next to %s (%s.*) %s from an earlier run, "
                "not this one\n",
                others, others == 1 ? "" : "s", name, name, others == 1 ? "is" : "are");
}

/* -l on a cgprof profile: the line-level table of its modules (those with
 * DWARF; the others keep their functions) into LST.  0, or 1 after a
 * message. */
static int cg_line_syms(struct report_args *a, struct symtab *lst, const struct load_profile *p)
{
    char err[ERR_LEN];
    int lrc = cglines_symtab(lst, p->st, &p->d, err, sizeof err);
    if (lrc < 0) {
        fprintf(stderr, "cgprof report: out of memory for line symbols\n");
        return 1;
    }
    if (lrc == 2)
        fprintf(stderr, "cgprof report: warning: %s\n", esc_text(err));
    a->text.line_syms = lst;
    a->text.line_addr_mask = cglines_addr_mask();
    return 0;
}

/* --inline: the report of P with its inlined functions as entries. */
static int inline_and_print(struct report_args *a, const struct load_profile *p)
{
    char err[ERR_LEN];
    struct inl_view v;
    if (inlview_build(&v, &p->d, p->st, p->gd, p->pcs.pc_samples, p->pcs.npc_samples, err,
                      sizeof err) != 0) {
        fprintf(stderr, "cgprof report: %s\n", err);
        return 1;
    }
    if (v.ninl == 0)
        fprintf(stderr,
                "cgprof report: note: --inline: no sampled code of %s is inlined code its "
                "DWARF describes (built without -g, or nothing inlined was sampled)\n",
                esc_text(p->path));
    struct cg_opts pcs = p->pcs;
    pcs.pc_samples = v.pcs;
    pcs.npc_samples = v.npcs;
    cur_cgdata = &v.d;
    int rc = analyze_and_print(a, &v.st, &v.gd, &pcs, p->prog, &v.d);
    cur_cgdata = &p->d;
    inlview_free(&v);
    return rc;
}

static int run(struct report_args *a)
{
    if (a->inline_funcs && (a->lines || a->json)) {
        fprintf(stderr, "cgprof report: --inline: not with %s (%s)\n", a->lines ? "-l" : "--json",
                a->lines ? "lines are finer already" : "its stacks carry the inline chains");
        return 2;
    }
    if (a->inline_funcs && !a->cgdata)
        fprintf(stderr, "cgprof report: note: --inline: a gmon.out's histogram has no exact "
                        "pcs to place in inlined code; functions are shown as they are\n");
    if (a->cgdata) { /* cgprof profiles (summed): load.c, as export reads them */
        struct load_inputs in = {a->prog, a->gmons, a->ngmons, a->cgdata, a->kernel};
        struct load_profile p;
        int rc = 1;
        if (a->ngmons == 1 && !a->json)
            note_children(a->gmons[0]);
        /* the text gives only the program's static functions a file: the
         * libraries' DWARF is not read (docs/runtime.md, issue 21) */
        unsigned lf = a->json ? 0 : MODMAP_LIB_NO_LINES;
        if (load_profile(&p, &in, a->sym_flags | SYMTAB_PLT | lf, a->json, "cgprof report") == 0) {
            if (a->style & STYLE_SUM) { /* the sum of cgprof profiles is a cgprof profile */
                FILE *f = fopen("cgprof.sum", "wb");
                if (!f || cgdata_write(&p.d, f) != 0 || fclose(f) != 0) {
                    fprintf(stderr, "cgprof report: cannot write cgprof.sum: %s\n",
                            strerror(errno));
                    load_free(&p);
                    return 1;
                }
                a->style &= ~STYLE_SUM;
            }
            cur_cgdata = &p.d;
            cur_modmap = &p.mm;
            struct symtab lst;
            memset(&lst, 0, sizeof lst);
            rc = a->lines ? cg_line_syms(a, &lst, &p) : 0;
            if (rc == 0 && a->inline_funcs)
                rc = inline_and_print(a, &p);
            else if (rc == 0)
                rc = analyze_and_print(a, a->lines ? &lst : p.st, p.gd, &p.pcs, p.prog, &p.d);
            symtab_free(&lst);
            if (rc == 0)
                load_say_unsampled(&p, "cgprof report");
            for (const char *n = p.d.notes; rc == 0 && n && *n;) { /* the runtime's, once each */
                size_t l = strcspn(n, "\n");
                char line[1024];
                snprintf(line, sizeof line, "%.*s", (int)(l < sizeof line ? l : sizeof line - 1),
                         n);
                fprintf(stderr, "cgprof report: note: %s\n", esc_text(line));
                n += l + (n[l] == '\n');
            }
            if (rc == 0 && p.d.runtime.present && !a->json)
                fprintf(stderr,
                        "cgprof report: note: the profiler's own work (%llu profile writes, its "
                        "helper thread%s) took %.1f ms of CPU, left out of this profile\n",
                        (unsigned long long)p.d.runtime.writes,
                        p.d.runtime.start_cpu_ns ? ", starting each thread's sampling" : "",
                        (double)(p.d.runtime.helper_cpu_ns + p.d.runtime.write_cpu_ns +
                                 p.d.runtime.start_cpu_ns) /
                            1e6);
            cur_cgdata = NULL;
            cur_modmap = NULL;
        }
        load_free(&p);
        return rc;
    }
    char err[ERR_LEN];
    struct symtab st;
    struct gmon_data gd;
    gmon_init(&gd);
    unsigned flags = a->sym_flags | (a->lines ? SYMTAB_NO_LINES : 0);
    if (symtab_load_flags(&st, a->prog, flags, err, sizeof err) != 0) {
        fprintf(stderr, "cgprof report: %s\n", err);
        return 1;
    }
    if (st.note)
        fprintf(stderr, "cgprof report: warning: %s\n", st.note);

    struct symtab lst;
    memset(&lst, 0, sizeof lst);
    int rc = 1;
    if (a->lines) {
        int lrc = lines_symtab(&lst, &st, a->prog, err, sizeof err);
        if (lrc < 0) {
            fprintf(stderr, "cgprof report: %s\n", err);
            symtab_free(&st);
            return 1;
        }
        if (lrc == 1)
            fprintf(stderr, "cgprof report: note: %s; functions are shown without lines\n", err);
        else if (lrc == 2)
            fprintf(stderr, "cgprof report: warning: %s\n", err);
        a->text.line_syms = &lst;
    }
    if (load_profiles(a, &gd, err) == 0) {
        if (gd.nbbs && !a->lines) /* (gprof's words) */
            fprintf(stderr, "cgprof report: warning: ignoring basic-block exec counts (use -l or "
                            "--line)\n");
        rc = analyze_and_print(a, a->lines ? &lst : &st, &gd, NULL, a->prog, NULL);
    } else
        fprintf(stderr, "cgprof report: %s\n", err);
    gmon_free(&gd);
    symtab_free(&lst);
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

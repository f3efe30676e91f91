/* cgprof export: writes a profile in another tool's format -- pprof,
 * callgrind, folded stacks, Graphviz dot, or a one-file HTML report --
 * from the same analysis as cgprof report (load.c, callgraph.c). */
#include "cmds.h"

#include "callgraph.h"
#include "export.h"
#include "modmap.h"
#include "load.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERR_LEN 512

static void export_usage(FILE *f)
{
    fputs(
        "usage: cgprof export -f FORMAT [-o FILE] [options] [PROG [GMON...]]\n"
        "       cgprof export -f FORMAT [-o FILE] [options] [PROFILE...]\n"
        "  Reads what cgprof report reads (default: the newer of cgprof.data and\n"
        "  gmon.out) and writes it for another tool (docs/export.md):\n"
        "  -f, --format=FORMAT   pprof      gzipped profile.proto (go tool pprof, Pyroscope...)\n"
        "                        callgrind  callgrind's format (KCachegrind, callgrind_annotate)\n"
        "                        folded     one line per stack, main;f;g COUNT (flamegraph.pl)\n"
        "                        dot        Graphviz call graph (dot -Tsvg)\n"
        "                        html       one self-contained page: flame graph, flat\n"
        "                                   profile, call graph\n"
        "  -o, --output=FILE     where to write ('-': standard output); default:\n"
        "                        profile.pb.gz (pprof), cgprof.html (html), else stdout\n"
        "  -t, --threshold=PCT   dot: leave out functions and calls under PCT% of\n"
        "                        the time (default 0.5; 0 keeps everything)\n"
        "  -a, --no-static       leave out static functions (as report -a)\n"
        "  --no-demangle         C++ names as they are in the symbol table\n"
        "  --kernel              the kernel's functions in the stacks (as report --kernel)\n"
        "  --inline              folded, pprof, callgrind, html: code inlined from\n"
        "                        other functions as their own frames, from the DWARF\n"
        "                        (docs/export.md)\n"
        "  -h, --help            this help\n"
        "  -v, -V, --version     the version\n",
        f);
}

enum fmt { F_NONE, F_PPROF, F_CALLGRIND, F_FOLDED, F_DOT, F_HTML };

struct export_args {
    enum fmt fmt;
    const char *output;
    struct ex_opts opts;
    unsigned sym_flags;
    int demangle;
    int kernel;
    int inline_frames;
};

static enum fmt parse_format(const char *s)
{
    static const struct {
        const char *name;
        enum fmt f;
    } names[] = {{"pprof", F_PPROF},
                 {"callgrind", F_CALLGRIND},
                 {"folded", F_FOLDED},
                 {"dot", F_DOT},
                 {"html", F_HTML}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0)
            return names[i].f;
    return F_NONE;
}

#define OPT_NO_DEMANGLE 256
#define OPT_KERNEL      257
#define OPT_INLINE      258

/* Parses ARGV into A; -1 to exit 0 (help), 2 on a usage error. */
static int parse_args(int argc, char **argv, struct export_args *a)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"threshold", required_argument, NULL, 't'},
        {"no-static", no_argument, NULL, 'a'},
        {"no-demangle", no_argument, NULL, OPT_NO_DEMANGLE},
        {"kernel", no_argument, NULL, OPT_KERNEL},
        {"inline", no_argument, NULL, OPT_INLINE},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'v'},
        {NULL, 0, NULL, 0},
    };
    int c;
    char *end;
    optind = 1;
    opterr = 0;
    a->demangle = 1;
    a->opts.threshold = 0.5;
    for (;;) {
        /* the argument being read, for messages (with '+', never permuted) */
        const char *cur = optind < argc ? argv[optind] : NULL;
        c = getopt_long(argc, argv, "+f:o:t:ahvV", longopts, NULL);
        if (c == -1)
            break;
        switch (c) {
        case 'f':
            a->fmt = parse_format(optarg);
            if (a->fmt == F_NONE) {
                fprintf(stderr,
                        "cgprof export: unknown format '%s' (pprof, callgrind, folded, dot, "
                        "html)\n",
                        optarg);
                return 2;
            }
            break;
        case 'o':
            a->output = optarg;
            break;
        case 't':
            a->opts.threshold = strtod(optarg, &end);
            if (*optarg == '\0' || *end != '\0' || !(a->opts.threshold >= 0) ||
                a->opts.threshold > 100) {
                fprintf(stderr, "cgprof export: -t: '%s' is not a percentage\n", optarg);
                return 2;
            }
            break;
        case 'a':
            a->sym_flags |= SYMTAB_NO_STATIC;
            break;
        case OPT_NO_DEMANGLE:
            a->demangle = 0;
            break;
        case OPT_KERNEL:
            a->kernel = 1;
            break;
        case OPT_INLINE:
            a->inline_frames = 1;
            break;
        case 'h':
            export_usage(stdout);
            return -1;
        case 'v':
        case 'V':
            printf("cgprof %s\n", CGPROF_VERSION);
            return -1;
        default:
            cli_bad_option("cgprof export", cur, optopt, "fot");
            return 2;
        }
    }
    if (a->fmt == F_NONE) {
        fprintf(stderr, "cgprof export: which format? -f pprof|callgrind|folded|dot|html\n");
        return 2;
    }
    if (a->inline_frames && a->fmt != F_FOLDED && a->fmt != F_PPROF && a->fmt != F_CALLGRIND &&
        a->fmt != F_HTML) {
        fprintf(
            stderr,
            "cgprof export: --inline is for -f folded, pprof, callgrind and html only (so far)\n");
        return 2;
    }
    if (!a->output)
        a->output = a->fmt == F_PPROF ? "profile.pb.gz" : a->fmt == F_HTML ? "cgprof.html" : "-";
    return 0;
}

static int write_format(FILE *out, const struct export_args *a, const struct ex_model *m, char *err)
{
    switch (a->fmt) {
    case F_PPROF:
        return ex_write_pprof(out, m, err, ERR_LEN);
    case F_CALLGRIND:
        return ex_write_callgrind(out, m);
    case F_FOLDED:
        return ex_write_folded(out, m);
    case F_DOT:
        return ex_write_dot(out, m, &a->opts);
    case F_HTML:
        return ex_write_html(out, m, &a->opts);
    default:
        return -1;
    }
}

/* Writes the export in place: for what is not a regular file (a
 * character device such as /dev/null, a FIFO, a terminal) replacing it
 * would be wrong, and a failure there leaves nothing to clean. */
static int write_in_place(const struct export_args *a, const struct ex_model *m)
{
    char err[ERR_LEN] = "";
    FILE *out = fopen(a->output, "w");
    if (!out) {
        fprintf(stderr, "cgprof export: %s: %s\n", a->output, strerror(errno));
        return 1;
    }
    int rc = write_format(out, a, m, err);
    int saved = errno;
    if (fclose(out) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc != 0)
        fprintf(stderr, "cgprof export: %s: %s\n", a->output, err[0] ? err : strerror(saved));
    return rc == 0 ? 0 : 1;
}

/* Writes the export to a temporary file beside the output and renames it
 * into place, so that a failure leaves no partial file.  Only a regular
 * file (or a new one) is replaced so: a symbolic link is followed to the
 * file it names, and anything else is written in place. */
static int write_output(const struct export_args *a, const struct ex_model *m)
{
    char err[ERR_LEN] = "";
    if (strcmp(a->output, "-") == 0) {
        int rc = write_format(stdout, a, m, err);
        if (rc == 0 && fflush(stdout) == 0)
            return 0;
        fprintf(stderr, "cgprof export: %s\n", err[0] ? err : "error writing to standard output");
        return 1;
    }
    struct stat st;
    int exists = stat(a->output, &st) == 0;
    if (exists && !S_ISREG(st.st_mode))
        return write_in_place(a, m);
    char *target = NULL; /* the file a symbolic link names */
    struct stat lst;
    if (lstat(a->output, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        target = realpath(a->output, NULL);
        if (!target) /* dangling: writing through it creates its file */
            return write_in_place(a, m);
    }
    const char *path = target ? target : a->output;
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (!tmp) {
        free(target);
        return 1;
    }
    snprintf(tmp, len + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "cgprof export: %s: %s\n", a->output, strerror(errno));
        free(tmp);
        free(target);
        return 1;
    }
    mode_t mask = umask(0);
    umask(mask);
    /* a file replaced keeps its permissions; a new one gets fopen's */
    fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask);
    FILE *out = fdopen(fd, "w");
    int rc = out ? write_format(out, a, m, err) : -1;
    int saved = errno;
    if (out && fclose(out) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    } else if (!out) {
        close(fd);
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -1;
        saved = errno;
    }
    if (rc != 0) {
        unlink(tmp);
        if (err[0])
            fprintf(stderr, "cgprof export: %s: %s\n", a->output, err);
        else
            fprintf(stderr, "cgprof export: %s: %s\n", a->output, strerror(saved));
    }
    free(tmp);
    free(target);
    return rc == 0 ? 0 : 1;
}

int cmd_export(int argc, char **argv)
{
    struct export_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? 0 : 2;
    struct load_inputs in;
    if (load_pick_inputs(&in, argc - optind, argv + optind, "cgprof export") != 0)
        return 2;
    in.kernel = a.kernel;
    struct load_profile p;
    char err[ERR_LEN];
    struct callgraph g;
    struct ex_model m;
    rc = 1;
    /* the exports name a function's file from the line tables (linemap),
     * never from the symbol table's: the libraries' DWARF is not read for
     * it (libc6-dbg's, decompressed, was a third of an html export) */
    if (load_profile(&p, &in, a.sym_flags | MODMAP_LIB_NO_LINES, 1, "cgprof export") != 0) {
        load_free(&p);
        return 1;
    }
    if (p.cgdata && p.d.stacks_lost)
        fprintf(stderr,
                "cgprof export: warning: %llu samples had no stack kept by the runtime; the "
                "stacks leave them out\n",
                (unsigned long long)p.d.stacks_lost);
    if (cg_build_opts(&g, p.st, p.gd, p.cgdata ? &p.pcs : NULL, err, sizeof err) != 0) {
        fprintf(stderr, "cgprof export: %s\n", err);
    } else {
        if (ex_build(&m, &g, p.st, p.cgdata ? &p.d : NULL, p.prog, a.demangle, err, sizeof err) !=
            0) {
            fprintf(stderr, "cgprof export: %s\n", err);
        } else if (a.inline_frames && ex_inline(&m, err, sizeof err) != 0) {
            fprintf(stderr, "cgprof export: %s\n", err);
            ex_free(&m);
        } else {
            rc = write_output(&a, &m);
            ex_free(&m);
            if (rc == 0)
                load_say_unsampled(&p, "cgprof export");
        }
        cg_free(&g);
    }
    load_free(&p);
    return rc;
}

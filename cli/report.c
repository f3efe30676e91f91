/* cgprof report: read an executable and its gmon.out files, print gprof-style tables. */
#include "cmds.h"

#include "callgraph.h"
#include "gmon.h"
#include "gprof_text.h"
#include "symtab.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define ERR_LEN 512

static void report_usage(FILE *f)
{
    fputs("usage: cgprof report [options] [PROG [GMON...]]\n"
          "  PROG defaults to a.out, GMON to gmon.out; several GMON files are summed.\n"
          "  -b, --brief                     no explanations after the tables\n"
          "  -p, --flat-profile              print the flat profile\n"
          "  -P, --no-flat-profile           do not print the flat profile\n"
          "  -q, --graph                     print the call graph (and its index)\n"
          "  -Q, --no-graph                  do not print the call graph\n"
          "  -z, --display-unused-functions  include functions never called nor sampled\n"
          "  -h, --help                      this help\n",
          f);
}

/* The options as given: -p/-q select tables (none selected means both),
 * -P/-Q then remove them. */
struct report_args {
    struct gprof_text_opts text;
    int want_flat, want_graph, no_flat, no_graph;
    const char *prog;
    char **gmons;
    int ngmons;
};

/* Parses ARGV into A; returns -1 to exit 0 (help), 1 on a usage error. */
static int parse_args(int argc, char **argv, struct report_args *a)
{
    static const struct option longopts[] = {
        {"brief", no_argument, NULL, 'b'},
        {"flat-profile", no_argument, NULL, 'p'},
        {"no-flat-profile", no_argument, NULL, 'P'},
        {"graph", no_argument, NULL, 'q'},
        {"no-graph", no_argument, NULL, 'Q'},
        {"display-unused-functions", no_argument, NULL, 'z'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+bpPqQzh", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            a->text.brief = 1;
            break;
        case 'p':
            a->want_flat = 1;
            break;
        case 'P':
            a->no_flat = 1;
            break;
        case 'q':
            a->want_graph = 1;
            break;
        case 'Q':
            a->no_graph = 1;
            break;
        case 'z':
            a->text.show_zeros = 1;
            break;
        case 'h':
            report_usage(stdout);
            return -1;
        default:
            if (optopt)
                fprintf(stderr, "cgprof report: unknown option '-%c' (try 'cgprof report -h')\n",
                        optopt);
            else
                fprintf(stderr, "cgprof report: unknown option '%s' (try 'cgprof report -h')\n",
                        argv[optind - 1]);
            return 1;
        }
    }
    int any = a->want_flat || a->want_graph;
    a->text.flat = (any ? a->want_flat : 1) && !a->no_flat;
    a->text.graph = (any ? a->want_graph : 1) && !a->no_graph;
    a->prog = optind < argc ? argv[optind++] : "a.out";
    a->gmons = argv + optind;
    a->ngmons = argc - optind;
    return 0;
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

static int run(const struct report_args *a)
{
    char err[ERR_LEN];
    struct symtab st;
    struct gmon_data gd;
    struct callgraph g;
    gmon_init(&gd);
    if (symtab_load(&st, a->prog, err, sizeof err) != 0) {
        fprintf(stderr, "cgprof report: %s\n", err);
        return 1;
    }
    int rc = 1;
    if (load_profiles(a, &gd, err) == 0 && cg_build(&g, &st, &gd, err, sizeof err) == 0) {
        if (gd.lost_calls > 0)
            fprintf(stderr,
                    "cgprof report: warning: %llu calls were not recorded (the runtime ran out "
                    "of memory)\n",
                    (unsigned long long)gd.lost_calls);
        gprof_text_print(stdout, &g, &a->text);
        cg_free(&g);
        rc = fflush(stdout) == 0 ? 0 : 1;
        if (rc)
            fprintf(stderr, "cgprof report: error writing the report\n");
    } else {
        fprintf(stderr, "cgprof report: %s\n", err);
    }
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

/* cgprof: the command-line entry point, dispatching to the subcommands. */
#include "cmds.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: cgprof <command> [options] [args]\n"
          "\n"
          "commands:\n"
          "  record [options] [--] PROG [ARGS...]  run PROG under the runtime\n"
          "  report [options] [PROG [GMON...]]     flat profile and call graph (gprof's)\n"
          "  export -f FORMAT [options] [PROFILE]  for other tools: pprof, callgrind,\n"
          "                                        folded, dot, one-file HTML\n"
          "\n"
          "cgprof --version prints the version; cgprof COMMAND -h the command's options.\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "record") == 0)
        return cmd_record(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    if (strcmp(cmd, "export") == 0)
        return cmd_export(argc - 1, argv + 1);
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0 || strcmp(cmd, "-v") == 0) {
        printf("cgprof %s\n", CGPROF_VERSION);
        return 0;
    }
    fprintf(stderr, "cgprof: unknown command '%s' (try 'cgprof --help')\n", cmd);
    return 2;
}

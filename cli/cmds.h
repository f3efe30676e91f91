/* The cgprof subcommands, one file each under cli/. */
#ifndef CGPROF_CMDS_H
#define CGPROF_CMDS_H

#include <stddef.h>

#define CGPROF_VERSION "0.1.0"

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);

/* record: 0 if PROG (as execvp finds it) can be run and recorded, else
 * the exit status after a message (cli/progcheck.c). */
int record_check_prog(const char *prog, int gmon_format, int emulated);
/* Whether PROG is an AArch64 program on an x86-64 host (record runs it
 * under qemu-aarch64). */
int record_prog_aarch64(const char *prog);
/* PROG as execvp finds it: itself when it holds a '/', else the first
 * executable regular file of that name in $PATH.  0 if found. */
int record_resolve(const char *prog, char *out, size_t cap);

/* One line on stderr for an option getopt_long refused: CUR is the
 * argument it was reading (argv[optind] before the call), OPTOPT getopt's,
 * NEEDS_VALUE the short options that take one (cli/opts.c). */
void cli_bad_option(const char *cmd, const char *cur, int optopt, const char *needs_value);

#endif

/* The cgprof subcommands, one file each under cli/. */
#ifndef CGPROF_CMDS_H
#define CGPROF_CMDS_H

#define CGPROF_VERSION "0.1.0"

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);

/* record: 0 if PROG (as execvp finds it) can be run and recorded, else
 * the exit status after a message (cli/progcheck.c). */
int record_check_prog(const char *prog, int gmon_format);

#endif

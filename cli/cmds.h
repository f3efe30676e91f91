/* The cgprof subcommands, one file each under cli/. */
#ifndef CGPROF_CMDS_H
#define CGPROF_CMDS_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif

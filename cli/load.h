/* Loading a profile for the subcommands that analyze one (report,
 * export): the choice of inputs from the command line and the reading and
 * symbolizing of gmon.out files or a cgprof profile, done once for all. */
#ifndef CGPROF_LOAD_H
#define CGPROF_LOAD_H

#include "callgraph.h"
#include "cgdata.h"
#include "gmon.h"
#include "modmap.h"
#include "symtab.h"

/* What the positional arguments name: [PROG [GMON...]] or a cgprof
 * profile alone (cgdata set; files[0] is it). */
struct load_inputs {
    const char *prog;
    char **files;
    int nfiles;
    int cgdata;
    int kernel; /* --kernel: the kernel's frames kept (record --kernel) */
};

/* Picks the inputs from the N positional ARGS; with none, the newer of
 * cgprof.data and gmon.out (a.out's).  0, or 2 after a message prefixed
 * with CMD ("cgprof report"). */
int load_pick_inputs(struct load_inputs *in, int n, char **args, const char *cmd);

/* A profile read and symbolized: the symbols and arcs the analysis takes
 * (st, gd) and, for a cgprof profile, its exact-pc samples (pcs) and the
 * profile itself (d, with mm mapping its modules). */
struct load_profile {
    int cgdata;
    const struct symtab *st;
    const struct gmon_data *gd;
    struct cg_opts pcs; /* only the pc_* fields are set */
    const char *prog;   /* the executable's path */
    const char *path;   /* the (first) profile read */
    struct cgdata d;
    struct modmap mm;
    struct symtab own_st;
    struct gmon_data own_gd;
    double own_share; /* % of the samples in libcgprof's mcount, said after the report */
};

/* Reads IN with symbol flags SYM_FLAGS (SYMTAB_*).  Warnings (lost
 * samples, libcgprof's share unless QUIET) go to stderr.  0, or 1 after a
 * message prefixed with CMD; load_free afterwards either way. */
int load_profile(struct load_profile *p, const struct load_inputs *in, unsigned sym_flags,
                 int quiet, const char *cmd);
void load_free(struct load_profile *p);
/* A cgprof profile's CPU time that no sample stands for, said on stderr
 * (prefixed with CMD) when beyond chance: after a report that succeeded,
 * so that an error stays one line. */
void load_say_unsampled(const struct load_profile *p, const char *cmd);

/* 1 if PATH is a regular file holding a cgprof profile. */
int load_is_cgdata(const char *path);

#endif

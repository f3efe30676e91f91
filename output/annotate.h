/* gprof -A: source files printed with the execution count of each function's (or line's) start. */
#ifndef CGPROF_ANNOTATE_H
#define CGPROF_ANNOTATE_H

#include "bbcount.h"
#include "symtab.h"

#include <stdint.h>
#include <stdio.h>

struct annotate_opts {
    int all_lines;           /* -x: a count on every executed line */
    unsigned long min_calls; /* -m: fewer calls are shown as ##### (default 1) */
    int table_len;           /* -t: lines in the "Top N Lines" table (default 10) */
    int to_files;            /* -y: write FILE-ann files in the current directory */
    int show_zeros;          /* -z: files whose functions were never called too */
    char **dirs;             /* -I: where to look for sources with relative names */
    size_t ndirs;
    int printed_before; /* tables were printed before (a form feed goes first) */
};

/* Prints the source files named by the symbols of POS (each with its full
 * source path in `file` and its line; POS may be gprof -l's line-level
 * table) annotated with NCALLS[i], the calls of symbol i, and BBS[i]
 * its basic-block counts (BBS may be NULL), as gprof -A does.  A source
 * that cannot be opened is named on stderr (prefixed with PROG) and
 * skipped.  0, or -1 when out of memory. */
int annotate_print(FILE *out, const struct symtab *pos, const uint64_t *ncalls,
                   const struct bb_slots *bbs, const struct annotate_opts *o, const char *prog);

/* gprof -C: "file:line: (name:0xaddr) N executions" for each symbol of POS
 * that was called (every one with SHOW_ZEROS) and each of its basic
 * blocks, by file, line and address.  PRINTED_BEFORE: a form feed first. */
void annotate_exec_counts(FILE *out, const struct symtab *pos, const uint64_t *ncalls,
                          const struct bb_slots *bbs, int show_zeros, int printed_before);

#endif

/* Printers of the flat profile, call graph and function index in GNU gprof's text layout. */
#ifndef CGPROF_GPROF_TEXT_H
#define CGPROF_GPROF_TEXT_H

#include "callgraph.h"

#include <stdio.h>

struct gprof_text_opts {
    int brief;      /* no explanations after the tables (gprof -b) */
    int flat;       /* print the flat profile */
    int graph;      /* print the call graph and the index */
    int show_zeros; /* also functions never called and never sampled (gprof -z) */
    int demangle;   /* C++ names demangled (gprof's default; ignored when traditional) */
    int bsd;        /* the traditional BSD layout (gprof -T) */
    int width;      /* output width for the index (gprof -w); 0 means 80 */
    /* gprof -l: the line-level symbols (lines.c) the model was built from;
     * names are shown with "(file:line @ address)" */
    const struct symtab *line_syms;
    /* nonzero: line_syms' addresses are shown ANDed with it (a cgprof
     * profile's, each within its own module, as gprof shows them) */
    uint64_t line_addr_mask;
    int after_info; /* something (-i) was printed before the tables */
};

/* NAME demangled as gprof shows it (libiberty's GNU v3 scheme, only for
 * "_Z" names, leading dots and an "@version" suffix kept as they are), in
 * malloc'd memory; NULL when NAME is not a mangled C++ name. */
char *gprof_text_demangle(const char *name);

/* Prints the chosen tables of G to OUT. */
void gprof_text_print(FILE *out, const struct callgraph *g, const struct gprof_text_opts *o);

#endif

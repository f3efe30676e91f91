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
};

/* Prints the chosen tables of G to OUT. */
void gprof_text_print(FILE *out, const struct callgraph *g, const struct gprof_text_opts *o);

#endif

/* The call-graph model: self time per function, arcs, cycles and propagated time. */
#ifndef CGPROF_CALLGRAPH_H
#define CGPROF_CALLGRAPH_H

#include "gmon.h"
#include "symtab.h"

#include <stddef.h>
#include <stdint.h>

#define CG_NONE (-1)

/* A node is a function (index < nsyms, same index as in the symtab) or
 * the header of a cycle (index nsyms + c - 1 for cycle c; name NULL).
 * Times are in histogram samples; divide by `rate` for seconds. */
struct cg_node {
    const char *name;
    const char *file;    /* source file of a static function, or NULL */
    double self_time;    /* samples credited to the function (cycle: sum) */
    double child_time;   /* time propagated from callees */
    double prop_fract;   /* fraction of the time that propagates to callers */
    double prop_self;    /* self_time * prop_fract */
    double prop_child;   /* children time as printed */
    uint64_t ncalls;     /* calls from other functions (cycle: from outside) */
    uint64_t self_calls; /* recursive calls (cycle: calls among members) */
    int print_flag;      /* shown in the call graph */
    int excluded;        /* gprof's default exclusions (mcount and kin) */
    int top_order;       /* topological number; members of a cycle share it */
    int cyc_num;         /* cycle number, 0 if on no cycle */
    int cyc_head;        /* the cycle header node, or the node itself */
    int cyc_next;        /* next member of the cycle, CG_NONE at the end */
    int index;           /* position (1-based) in the call graph listing */
    int first_child;     /* arc list of callees, newest arc first */
    int first_parent;    /* arc list of callers, newest arc first */
};

struct cg_arc {
    int parent;
    int child;
    uint64_t count;
    double time;       /* child's self time propagated along this arc */
    double child_time; /* child's descendants' time propagated along it */
    int next_child;    /* next arc of the same parent */
    int next_parent;   /* next arc into the same child */
};

struct callgraph {
    struct cg_node *nodes;
    size_t nsyms;
    size_t ncycles;
    struct cg_arc *arcs;
    size_t narcs;
    double rate;       /* samples per second */
    double hist_scale; /* histogram bin size in 2-byte units */
    double total_time; /* samples in all histograms (minus excluded) */
    double print_time; /* sum of prop_self: the call graph's 100% */
    char dimen[16];    /* histogram unit name, "seconds" */
    char dimen_abbrev; /* 's' */
    int has_hist;
    int *by_total; /* nodes (functions and cycles) in call-graph order */
};

/* Builds the model from symbols and profile data.  Returns 0, or -1 with
 * a message in ERR. */
int cg_build(struct callgraph *g, const struct symtab *st, const struct gmon_data *gd, char *err,
             size_t errsz);
void cg_free(struct callgraph *g);

/* Sorts IDX (n entries) with CMP exactly as glibc's qsort merge sort does,
 * so that ties come out in the same order as in GNU gprof. */
void cg_sort(int *idx, size_t n, int (*cmp)(int, int, const void *), const void *ctx);

#endif

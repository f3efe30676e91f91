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
    int excluded;        /* left out of the flat profile and its time (see cg_selected) */
    int is_runtime;      /* libcgprof's own code (cgprof profiles): left out like mcount */
    unsigned tables;     /* bit 1 << t for each symbol table t (enum cg_table) naming it */
    int top_order;       /* topological number; members of a cycle share it */
    int cyc_num;         /* cycle number, 0 if on no cycle */
    int cyc_head;        /* the cycle header node, or the node itself */
    int cyc_next;        /* next member of the cycle, CG_NONE at the end */
    int index;           /* position (1-based) in the call graph listing */
    int has_entry;       /* the call graph prints an entry for it (dense_index) */
    int first_child;     /* arc list of callees, newest arc first */
    int first_parent;    /* arc list of callers, newest arc first */
    double incl_time;    /* measured (stacks): samples whose stack holds it, or 0 */
};

/* gprof's symbol tables.  Each option naming functions adds them to one
 * or more tables (-p NAME: INCL_FLAT, -E NAME: EXCL_GRAPH and EXCL_TIME,
 * ...).  An INCL table, once non-empty, admits only its members; an EXCL
 * table removes its members.  mcount and kin are in every EXCL table. */
enum cg_table {
    CG_INCL_FLAT,
    CG_EXCL_FLAT,
    CG_INCL_GRAPH,
    CG_EXCL_GRAPH,
    CG_INCL_TIME,
    CG_EXCL_TIME,
    CG_NTABLES
};

/* One symbol specification of a table: the functions named NAME. */
struct cg_spec {
    enum cg_table table;
    const char *name;
};

/* An arc left out (gprof -k FROM/TO): calls from FROM to TO; NULL stands
 * for any function. */
struct cg_arc_spec {
    const char *from;
    const char *to;
};

/* A call instruction found in the text (gprof -c): symbol CALLER calls
 * the entry of symbol CALLEE.  It becomes an arc with count 0. */
struct cg_static_call {
    int caller;
    int callee;
};

/* What the report options change in the model. */
/* A sample at an exact pc (cgprof's own profile format), instead of a
 * histogram: it goes wholly to the function holding the pc. */
struct cg_pc_sample {
    uint64_t pc;
    uint64_t count;
};

struct cg_opts {
    const struct cg_spec *specs;
    size_t nspecs;
    const struct cg_arc_spec *excl_arcs;
    size_t nexcl_arcs;
    const struct cg_static_call *static_calls;
    size_t nstatic_calls;
    /* exact-pc samples, used when the profile has no histogram */
    const struct cg_pc_sample *pc_samples;
    size_t npc_samples;
    double pc_rate;      /* samples per second, or 1 for counted events */
    const char *pc_unit; /* "seconds", or the event's name */
    const char *event;   /* the event sampled (cgprof profiles), or NULL */
    /* caller-callee pairs seen as adjacent frames in sampled stacks
     * (analysis/stacks.c): arcs without a count where none was counted */
    const struct cg_static_call *stack_calls;
    size_t nstack_calls;
    /* Entries numbered 1..N without gaps, and an entry for every function
     * an entry names (cgprof profiles; gmon.out keeps gprof's numbering,
     * which gives every symbol a number and can name unprinted ones). */
    int dense_index;
    int show_zeros; /* -z: functions never called nor sampled get entries too */
    /* gmon.out (gprof's rule): an arc's callee is the nearest function
     * symbol at or below its address, skipping line symbols (-l) and
     * untyped ones */
    int callee_is_func;
    /* tables (bit 1 << enum cg_table) of each function given by
     * symbol specs matched elsewhere (file and line specs), or NULL */
    const unsigned *sym_tables;
};

struct cg_arc {
    int parent;
    int child;
    uint64_t count;
    double time;       /* child's self time propagated along this arc */
    double child_time; /* child's descendants' time propagated along it */
    int next_child;    /* next arc of the same parent */
    int next_parent;   /* next arc into the same child */
    int uncounted;     /* seen only in sampled stacks: its count is unknown, not 0 */
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
    char event[32];    /* the event sampled, "" if not known (gmon.out) */
    char dimen_abbrev; /* 's' */
    int has_hist;
    int measured;                 /* times measured from stacks (analysis/stacks.c) */
    int *by_total;                /* nodes (functions and cycles) in call-graph order */
    size_t table_len[CG_NTABLES]; /* functions in each table */
    int dense_index;              /* has_entry is set; entries come first in the numbering */
    int zero_entries;             /* ... with -z's entries for unused functions */
};

/* Builds the model from symbols and profile data.  Returns 0, or -1 with
 * a message in ERR. */
int cg_build(struct callgraph *g, const struct symtab *st, const struct gmon_data *gd, char *err,
             size_t errsz);

/* The same with options; OPTS may be NULL (cg_build). */
int cg_build_opts(struct callgraph *g, const struct symtab *st, const struct gmon_data *gd,
                  const struct cg_opts *opts, char *err, size_t errsz);

/* Whether function NODE passes the table pair INCL (CG_INCL_FLAT,
 * CG_INCL_GRAPH or CG_INCL_TIME) and the EXCL table after it: it is in
 * INCL, or INCL is empty and it is not in EXCL. */
int cg_selected(const struct callgraph *g, int node, enum cg_table incl);

/* Numbers the functions and cycles again in call-graph order (total time
 * down), after their times changed.  0, or -1 when out of memory. */
int cg_order(struct callgraph *g);
void cg_free(struct callgraph *g);

/* Whether a function named NAME is the one SPEC names: the same name, or
 * a library function "SPEC [libfoo.so]" of a cgprof profile. */
int cg_name_matches(const char *spec, const char *name);

/* Sorts IDX (n entries) with CMP exactly as glibc's qsort merge sort does,
 * so that ties come out in the same order as in GNU gprof. */
void cg_sort(int *idx, size_t n, int (*cmp)(int, int, const void *), const void *ctx);

#endif

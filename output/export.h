/* The model every export format is written from (cgprof export): the
 * analyzed call graph (functions, self time, arcs with exact counts) and
 * the sampled call stacks, symbolized with the same symbol table.
 *
 * Stacks: a call-path tree.  From a cgprof profile's STACKS record each
 * node is a frame (the leaf's pc, or a caller's return address - 1);
 * without one, each node is a stack of one frame: a sampled pc (cgprof
 * profile) or a function's histogram time (gmon.out).  A node's count is
 * the samples whose stack ends there; the counts add up to the profile's
 * total less what the report leaves out (libcgprof's own mcount). */
#ifndef CGPROF_EXPORT_H
#define CGPROF_EXPORT_H

#include "callgraph.h"
#include "cgdata.h"

#include <stdint.h>
#include <stdio.h>

#define EX_TRUNCATED (-1) /* the frames dropped past the stack depth limit */

struct ex_node {
    int parent;   /* an earlier node, or -1 for an outermost frame */
    int func;     /* callgraph node (function), or EX_TRUNCATED */
    uint64_t pc;  /* in the symbol table's address space (modmap's for cgprof) */
    double count; /* samples whose stack ends here */
};

struct ex_model {
    const struct callgraph *g;
    const struct symtab *st;
    const struct cgdata *d; /* the cgprof profile, or NULL for gmon.out */
    const char *prog;
    char **names; /* per function: shown name (demangled unless told not to) */
    struct ex_node *nodes;
    size_t nnodes;
    int has_stacks; /* nodes are real stacks (STACKS record) */
    int timed;      /* samples measure time */
    double rate;    /* samples per second (timed), else 1 */
    double unit_ns; /* nanoseconds per sample (timed) */
    char event[64]; /* "cpu", "wall", a perf event's name */
    double total;   /* sum of the node counts */
    /* ex_inline: the functions inlined into sampled code, numbered after
     * the call graph's (func = g->nsyms + 1 + i), by their DWARF name and
     * module: NAME, or "NAME [libfoo.so]" in a library */
    char **inl_names;
    size_t ninl;
};

/* A func of M that is an inlined function (ex_inline), not a call graph node. */
#define EX_IS_INLINED(m, f) ((f) > (int)(m)->g->nsyms)

/* Builds M from G (analyzed from ST and, for a cgprof profile, D).  0, or
 * -1 with a message in ERR. */
int ex_build(struct ex_model *m, const struct callgraph *g, const struct symtab *st,
             const struct cgdata *d, const char *prog, int demangle, char *err, size_t errsz);
void ex_free(struct ex_model *m);

/* Expands each frame of a cgprof profile's stacks into its inline chain
 * from the DWARF: the frame of function F at a pc inside code inlined
 * into F becomes F's frame with, under it, one frame per inlined
 * function, outermost first; the samples go to the innermost.  Nothing
 * changes where there is no DWARF, and for gmon.out (no exact pcs).
 * 0, or -1 (out of memory) with a message in ERR. */
int ex_inline(struct ex_model *m, char *err, size_t errsz);

#define EX_MAX_INLINE 64 /* inlined frames kept per frame, the innermost */

/* The func of inlined function NAME at PC (its module's) in M
 * (ex_inline), or -1. */
int ex_inlined_func(const struct ex_model *m, uint64_t pc, const char *name);

/* With ex_inline: the -pg calls made from inlined code.  Each of the
 * profile's arcs whose call instruction (return address - 1) lies in code
 * inlined into CALLER, in the innermost inlined function there that M has
 * (INLINED, as the stacks' frames at that call name it), gives one entry:
 * COUNT of CALLER's calls to CALLEE are INLINED's.  LM: a linemap of M's
 * profile with DWI_INLINE.  0 (none for gmon.out or without inlined
 * functions), or -1 out of memory. */
struct ex_moved {
    int caller, callee, inlined;
    uint64_t count;
};
struct linemap;
int ex_inline_calls(const struct ex_model *m, struct linemap *lm, struct ex_moved **out, size_t *n);

/* The shown name of node N's function ("[truncated]" for a cut stack). */
const char *ex_name(const struct ex_model *m, int func);

/* The source file of static function FUNC when known, else FALLBACK. */
const char *ex_file(const struct ex_model *m, int func, const char *fallback);

/* The stacks merged by function: a tree whose children of one parent are
 * distinct functions.  self: samples ending there; total: in its subtree.
 * Nodes come parents first. */
struct ex_fnode {
    int parent, func;
    double self, total;
};
int ex_func_tree(const struct ex_model *m, struct ex_fnode **out, size_t *n);

/* Measured cost of the calls from function CALLER to CALLEE: the samples
 * whose stack has CALLEE's outermost frame called from CALLER, so that
 * the calls into a function cost exactly the samples with it on the
 * stack, recursion counted once (callgrind_annotate's inclusive cost is
 * that sum).  CALLER is EX_TRUNCATED for the calls from frames cut at the
 * depth limit. */
struct ex_edge {
    int caller, callee;
    double cost;
};
int ex_edge_costs(const struct ex_model *m, struct ex_edge **out, size_t *n);

/* Samples with FUNC anywhere on the stack, per function (NSYMS + 1 + NINL
 * entries: the inlined functions after slot NSYMS). */
int ex_inclusive(const struct ex_model *m, double **out);

/* The formats. Each returns 0, or -1 on a write error (errno set). */
struct ex_opts {
    double threshold; /* dot: leave out nodes and edges under this % of the total */
    const char *title;
};
int ex_write_folded(FILE *out, const struct ex_model *m);
int ex_write_callgrind(FILE *out, const struct ex_model *m);
int ex_write_dot(FILE *out, const struct ex_model *m, const struct ex_opts *o);
int ex_write_html(FILE *out, const struct ex_model *m, const struct ex_opts *o);
int ex_write_pprof(FILE *out, const struct ex_model *m, char *err, size_t errsz);

#endif

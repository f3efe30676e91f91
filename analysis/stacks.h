/* Measured time from sampled call stacks: inclusive time per function and
 * the time under each arc, from a cgprof profile's STACKS record. */
#ifndef CGPROF_STACKS_H
#define CGPROF_STACKS_H

#include "callgraph.h"
#include "cgdata.h"
#include "symtab.h"

#include <stddef.h>
#include <stdint.h>

/* The call-path tree of a profile, each frame symbolized in the model's
 * symbol table (the one modmap built for the call graph). */
struct stacks {
    const struct cgdata *d;       /* the profile: the tree is d->stacks */
    size_t n;                     /* d->nstacks */
    long *fn;                     /* per node: the function holding the frame, or -1 */
    unsigned char *skip;          /* per node: not a frame of the program (libcgprof's
                                   * own code, the cut marker, a pc in no symbol) */
    struct cg_static_call *calls; /* distinct adjacent caller-callee pairs */
    size_t ncalls;
    uint64_t samples; /* the counts of all nodes (= SAMPLES' when consistent) */
};

/* Symbolizes D's stacks with ST (modmap's table for D) and collects the
 * caller-callee pairs they show, for cg_opts.stack_calls.  0, or -1 with
 * a message in ERR; stacks_free(S) afterwards either way. */
int stacks_prepare(struct stacks *s, const struct cgdata *d, const struct symtab *st, char *err,
                   size_t errsz);

/* Replaces G's propagated times by measured ones (G built with S's
 * calls): see stacks.c for the definitions.  0, or -1 with a message. */
int stacks_measure(struct callgraph *g, const struct stacks *s, char *err, size_t errsz);

void stacks_free(struct stacks *s);

#endif

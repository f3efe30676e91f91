/* Reader of cgprof's own profile format (docs/profile-format.md). */
#ifndef CGPROF_CGDATA_H
#define CGPROF_CGDATA_H

#include <stddef.h>
#include <stdint.h>

#define CGDATA_NO_MODULE    UINT32_MAX
#define CGDATA_MOD_MAIN     1u
#define CGDATA_MOD_VDSO     2u
#define CGDATA_MOD_UNLOADED 4u

struct cgdata_module {
    uint32_t id;
    uint32_t flags;
    uint64_t bias, lo, hi;
    unsigned char build_id[64];
    uint32_t build_id_len;
    char *path;
    uint32_t load_gen, unload_gen; /* mapped in generations [load, unload): see MODULE */
    const unsigned char *image;    /* vDSO: its ELF image, into the file's buffer */
    uint64_t image_len;
    unsigned char *image_owned; /* or a copy of it (a summed profile), freed with it */
};

/* A sample or arc end: a link-time address within a module. */
struct cgdata_sample {
    uint32_t module;
    uint64_t addr;
    uint64_t count;
};

struct cgdata_arc {
    uint32_t from_module, self_module;
    uint64_t from_addr, self_addr;
    uint64_t count;
};

/* One node of the call-path tree (STACKS record): a frame, its caller
 * (parent, an earlier node; CGDATA_NO_PARENT for an outermost frame) and
 * the samples whose stack ends here (the leaf).  The leaf's address is the
 * sampled pc; a caller frame's is its return address minus one, so it lies
 * inside the call instruction and names the calling function and line. */
#define CGDATA_NO_PARENT  UINT32_MAX
#define CGDATA_CUT_MODULE (UINT32_MAX - 1) /* the frames beyond the depth limit */
/* A frame made by report --inline (analysis/inlview.c), whose address is
 * already one of the report's symbol table: only where symtab_frames is
 * set (never from a file). */
#define CGDATA_SYMTAB_MODULE (UINT32_MAX - 2)
/* A kernel frame (record --kernel): module CGDATA_NO_MODULE, at an address
 * with its top 16 bits set, which no user-space pc has. */
#define CGDATA_IS_KERNEL(module, addr) ((module) == CGDATA_NO_MODULE && (addr) >> 48 == 0xFFFF)
struct cgdata_stack_node {
    uint32_t parent;
    uint32_t module;
    uint64_t addr;
    uint64_t count;
};

/* One thread's totals: samples taken in it and its CPU time. */
struct cgdata_thread {
    uint32_t tid;
    uint32_t flags; /* 1: ended before the profile was written */
    uint64_t samples;
    uint64_t cpu_ns;
};

struct cgdata {
    unsigned char *buf; /* the whole file */
    size_t len;
    uint64_t pid, rate, period;
    uint32_t kind, timed;
    unsigned char run_id[16]; /* RUN: the run the process belonged to */
    int has_run_id;           /* 0: no RUN record (older profiles; sums of several runs) */
    char event[64];
    struct cgdata_module *modules;
    size_t nmodules;
    struct cgdata_sample *samples;
    size_t nsamples;
    struct cgdata_arc *arcs;
    size_t narcs;
    struct cgdata_thread *threads;
    size_t nthreads;
    struct cgdata_stack_node *stacks; /* NULL: no STACKS record */
    size_t nstacks;
    int has_stacks;
    int symtab_frames; /* report --inline's copy: CGDATA_SYMTAB_MODULE frames */
    uint64_t stack_depth_limit, stacks_cut; /* frames kept at most; samples cut there */
    uint64_t stacks_lost;                   /* samples whose stack could not be kept */
    uint64_t total_samples, lost_samples, total_calls, lost_calls, unsampled_threads;
    /* KERNEL (record --kernel): flags 1 asked, 2 kernel samples permitted;
     * the boot its kernel addresses belong to */
    struct {
        unsigned flags;
        char boot_id[64];
    } kernel;
    /* RUNTIME: what the runtime itself cost, left out of the samples */
    struct {
        int present;
        uint64_t helper_cpu_ns, write_cpu_ns, writes, samples;
        uint64_t start_cpu_ns;  /* program threads starting their own sampling */
        uint64_t before_cpu_ns; /* program threads' CPU before their sampling began */
        uint64_t late_ns;       /* CPU time a time event's samples came late by */
    } runtime;
    char *notes; /* NOTES: what the runtime could not do, one line each, or NULL */
};

/* Adds to D's notes the lines of TEXT (N bytes) it has not got yet.  0, or -1. */
int cgdata_add_notes(struct cgdata *d, const char *text, size_t n);

/* 1 if the N bytes at P start a cgprof profile. */
int cgdata_is(const void *p, size_t n);

/* Reads PATH.  0, or -1 with "PATH: what is wrong (at offset N)" in ERR;
 * either way cgdata_free(D) afterwards. */
int cgdata_read(struct cgdata *d, const char *path, char *err, size_t errsz);
/* The same from SIZE bytes at BUF (copied), named NAME in messages. */
int cgdata_read_buffer(struct cgdata *d, const char *name, const void *buf, size_t size, char *err,
                       size_t errsz);
void cgdata_free(struct cgdata *d);

#define CGDATA_KERNEL_ASKED 1u
#define CGDATA_KERNEL_OK    2u
/* Kernel frames (record --kernel) out of D's stacks: each kernel frame's
 * samples go to the user frame it was entered from, as without --kernel;
 * D's stack nodes are renumbered.  With KEEP, they stay, and each sample
 * taken in the kernel moves from its user pc in SAMPLES to its kernel
 * leaf, so the kernel's functions have their own self time.  0, or -1
 * (out of memory). */
int cgdata_kernel_frames(struct cgdata *d, int keep);

/* The module with id ID, or NULL. */
const struct cgdata_module *cgdata_module(const struct cgdata *d, uint32_t id);

/* The run id of the profile in PATH, read from its RUN record without
 * reading the rest: 1 if found (into ID), 0 if the profile has none, -1
 * if PATH is no readable cgprof profile. */
int cgdata_peek_run(const char *path, unsigned char id[16]);

#endif

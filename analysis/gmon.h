/* Reader of GNU gmon.out files (version 1 tagged format), summing several files as gprof does. */
#ifndef CGPROF_GMON_H
#define CGPROF_GMON_H

#include <stddef.h>
#include <stdint.h>

/* One histogram: bins[i] counts the samples whose pc fell in the i-th of
 * nbins equal slices of [low_pc, high_pc).  Records of several files with
 * the same range are summed bin by bin into one gmon_hist. */
struct gmon_hist {
    uint64_t low_pc;
    uint64_t high_pc;
    uint32_t nbins;
    uint32_t rate;     /* samples per second of the first record read */
    char dimen[16];    /* e.g. "seconds", always NUL-terminated */
    char dimen_abbrev; /* e.g. 's' */
    uint32_t *bins;
};

/* One call-graph arc: `count` calls from the call site from_pc into the
 * function entered at self_pc.  Arcs with the same (from_pc, self_pc) are
 * summed; arcs keep the order in which each pair was first read. */
struct gmon_arc {
    uint64_t from_pc;
    uint64_t self_pc;
    uint64_t count;
};

/* Everything read from one or more gmon.out files. */
struct gmon_data {
    struct gmon_hist *hists;
    size_t nhists;
    struct gmon_arc *arcs;
    size_t narcs;
    size_t arcs_cap;
    uint32_t *arc_hash; /* open-addressing index into arcs (+1; 0 = empty) */
    size_t hash_cap;
    uint64_t lost_calls;  /* calls the runtime could not record (arc 0 -> 0) */
    uint64_t nbb_records; /* basic-block records seen (read and skipped) */
};

void gmon_init(struct gmon_data *d);
void gmon_free(struct gmon_data *d);

/* Reads PATH and adds its records to D.  Returns 0, or -1 with a message
 * of the form "PATH: what is wrong (at offset N)" in ERR. */
int gmon_read(struct gmon_data *d, const char *path, char *err, size_t errsz);

#endif

/* Reader of gmon.out files (GNU tagged format, 4.4BSD and old BSD) and writer of gmon.sum. */
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

/* One basic-block count: the block at addr ran count times. */
struct gmon_bb {
    uint64_t addr;
    uint64_t count;
};

/* Everything read from one or more gmon.out files. */
struct gmon_data {
    struct gmon_hist *hists;
    size_t nhists;
    size_t hists_cap;
    struct gmon_arc *arcs;
    size_t narcs;
    size_t arcs_cap;
    uint32_t *arc_hash; /* open-addressing index into arcs (+1; 0 = empty) */
    size_t hash_cap;
    uint32_t *hist_hash; /* the same for hists, keyed by (low_pc, high_pc) */
    size_t hist_hash_cap;
    uint64_t lost_calls;  /* calls the runtime could not record (arc 0 -> 0) */
    uint64_t nbb_records; /* basic-block entries read */
    struct gmon_bb *bbs;  /* the entries (version 1 files), in file order */
    size_t nbbs;
    uint64_t nbb_tags;    /* basic-block records seen, even empty ones */
    uint64_t nhist_tags;  /* histogram records read (gprof -i counts them) */
    uint64_t narc_tags;   /* call-graph records read */
    uint32_t version;     /* version of the last file read (0 for BSD layouts) */
};

void gmon_init(struct gmon_data *d);
void gmon_free(struct gmon_data *d);

/* Reads PATH and adds its records to D.  PATH may be a GNU gmon.out
 * (magic "gmon", version 0 or 1), a 4.4BSD profile (40-byte header with
 * version 0x51879 and the rate) or an old BSD one (20-byte header: lowpc,
 * highpc, size of header and histogram); a BSD header is trusted only if
 * it agrees with the file's length.  Histograms must share unit and bin
 * size, may repeat a range (they are summed) but not overlap another one.
 * Returns 0, or -1 with "PATH: what is wrong (at offset N)" in ERR, after
 * which D holds part of PATH and is fit only for gmon_free. */
int gmon_read(struct gmon_data *d, const char *path, char *err, size_t errsz);

/* The same for the SIZE bytes at BUF, named NAME in messages. */
int gmon_read_buffer(struct gmon_data *d, const char *name, const void *buf, size_t size, char *err,
                     size_t errsz);

/* The largest arc count gmon_write_sum keeps whole: a record holds 32
 * bits, and a larger count is spread over at most 256 records (never
 * more, so a hostile count cannot blow the file up); beyond, it is cut to
 * this value. */
#define GMON_SUM_COUNT_MAX (256 * (uint64_t)UINT32_MAX)

/* Writes D to PATH as one GNU gmon.out (version 1), the way gprof -s
 * writes gmon.sum: histograms, arcs, and an empty basic-block record if D
 * had any.  PATH is replaced atomically.  Returns 0, or -1 with
 * "PATH: what is wrong" in ERR (PATH is then untouched). */
int gmon_write_sum(const struct gmon_data *d, const char *path, char *err, size_t errlen);

/* Adds COUNT calls of the arc (FROM_PC, SELF_PC), summing with an arc
 * already there.  0, -1 when out of memory, or -2 when the sum would
 * exceed 2^64 - 1 (a corrupt count). */
int gmon_add_arc(struct gmon_data *d, uint64_t from_pc, uint64_t self_pc, uint64_t count);

#endif

/* Writer of a summed profile (gmon.sum) in GNU gmon.out format version 1, as gprof -s writes it.
 *
 * Layout, all values in native byte order (the reader's convention):
 *   header      "gmon", version 1 (32 bits), 12 zero bytes
 *   histograms  one record per range, in the order the ranges were first
 *               read; every record carries the first histogram's rate and
 *               unit, as gprof writes its global ones; bins are cut to
 *               16 bits, as gprof cuts its summed counts
 *   arcs        one record per (from_pc, self_pc) pair, in first-read
 *               order, then the lost calls as an arc 0 -> 0; a count that
 *               does not fit in 32 bits is split over several records,
 *               which every reader sums back (gprof cuts it to 32 bits),
 *               up to GMON_SUM_COUNT_MAX
 *   bb counts   if any basic-block record was read: one record with no
 *               entries -- gprof -s without -l keeps no counts either
 *
 * gprof -s maps arcs to functions before writing them; this writer keeps
 * the call-site addresses, so the file read back (by gprof or cgprof)
 * gives the same report as the files it sums.
 *
 * The file appears atomically: it is written to a fresh temporary file in
 * the same directory, flushed to disk, then renamed over PATH.
 */
#include "gmon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An output file and the first error met while writing it. */
struct out {
    FILE *f;
    int err; /* errno of the first failed write, or 0 */
};

static void put(struct out *o, const void *p, size_t n)
{
    if (!o->err && fwrite(p, 1, n, o->f) != n)
        o->err = errno ? errno : EIO;
}

static void put8(struct out *o, unsigned v)
{
    unsigned char b = (unsigned char)v;
    put(o, &b, 1);
}

static void put32(struct out *o, uint32_t v)
{
    put(o, &v, 4);
}

static void put64(struct out *o, uint64_t v)
{
    put(o, &v, 8);
}

static void put_hist(struct out *o, const struct gmon_hist *h, const struct gmon_hist *first)
{
    put8(o, 0);
    put64(o, h->low_pc);
    put64(o, h->high_pc);
    put32(o, h->nbins);
    put32(o, first->rate);
    put(o, first->dimen, 15);
    put8(o, (unsigned char)first->dimen_abbrev);
    for (uint32_t i = 0; i < h->nbins; i++) {
        uint16_t v = (uint16_t)h->bins[i];
        put(o, &v, 2);
    }
}

/* One arc record per 2^32 - 1 calls, at least one record, at most 256. */
static void put_arc(struct out *o, uint64_t from, uint64_t self, uint64_t count)
{
    if (count > GMON_SUM_COUNT_MAX)
        count = GMON_SUM_COUNT_MAX;
    do {
        uint32_t part = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
        put8(o, 1);
        put64(o, from);
        put64(o, self);
        put32(o, part);
        count -= part;
    } while (count > 0);
}

static void put_profile(struct out *o, const struct gmon_data *p)
{
    static const unsigned char zeros[12];
    put(o, "gmon", 4);
    put32(o, 1);
    put(o, zeros, sizeof zeros);
    for (size_t i = 0; i < p->nhists; i++)
        put_hist(o, &p->hists[i], &p->hists[0]);
    for (size_t i = 0; i < p->narcs; i++)
        put_arc(o, p->arcs[i].from_pc, p->arcs[i].self_pc, p->arcs[i].count);
    if (p->lost_calls > 0)
        put_arc(o, 0, 0, p->lost_calls);
    if (p->nbb_tags > 0) {
        put8(o, 2);
        put32(o, 0);
    }
}

/* Creates a new file next to PATH, named PATH.tmp.PID.N; writes its name
 * into TMP.  Mode 0666 less the umask, as fopen would give. */
static int create_temp(const char *path, char *tmp, size_t tmpsz)
{
    for (unsigned n = 0; n < 100; n++) {
        int len = snprintf(tmp, tmpsz, "%s.tmp.%ld.%u", path, (long)getpid(), n);
        if (len < 0 || (size_t)len >= tmpsz) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

int gmon_write_sum(const struct gmon_data *p, const char *path, char *err, size_t errlen)
{
    char tmp[4096];
    int fd = create_temp(path, tmp, sizeof tmp);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create a temporary file: %s", path, strerror(errno));
        return -1;
    }
    struct out o = {fdopen(fd, "wb"), 0};
    if (!o.f) {
        o.err = errno;
        close(fd);
    } else {
        put_profile(&o, p);
        if (fflush(o.f) != 0 && !o.err)
            o.err = errno;
        if (fsync(fd) != 0 && !o.err && errno != EINVAL && errno != EROFS)
            o.err = errno;
        if (fclose(o.f) != 0 && !o.err)
            o.err = errno;
    }
    if (!o.err && rename(tmp, path) != 0)
        o.err = errno;
    if (o.err) {
        unlink(tmp);
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(o.err));
        return -1;
    }
    return 0;
}

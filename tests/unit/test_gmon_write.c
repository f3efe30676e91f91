/* Unit tests of gmon.c's BSD reader and hostile-input checks, and of gmon_write_sum's round trip.
 *
 * Build and run from the repository root (exits non-zero if a check fails):
 *   cc -std=c11 -D_GNU_SOURCE -Ianalysis tests/unit/test_gmon_write.c \
 *      analysis/gmon.c analysis/gmon_write.c -lm -o t && ./t
 */
#include "gmon.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static char dir[200]; /* $TMPDIR/cgprof-gmonw-XXXXXX, removed at the end */

/* A profile image being built in memory. */
struct img {
    unsigned char b[8192];
    size_t n;
};

static void put(struct img *m, const void *p, size_t n)
{
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

static void put32(struct img *m, uint32_t v)
{
    put(m, &v, 4);
}

static void put64(struct img *m, uint64_t v)
{
    put(m, &v, 8);
}

static void gnu_header(struct img *m)
{
    put(m, "gmon", 4);
    put32(m, 1);
    put(m, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
}

static void gnu_hist(struct img *m, uint64_t lo, uint64_t hi, uint32_t nbins, uint16_t first)
{
    char dim[16] = "seconds";
    dim[15] = 's';
    put(m, "\0", 1);
    put64(m, lo);
    put64(m, hi);
    put32(m, nbins);
    put32(m, 100);
    put(m, dim, 16);
    for (uint32_t i = 0; i < nbins; i++) {
        uint16_t v = (uint16_t)(first + i);
        put(m, &v, 2);
    }
}

static void gnu_arc(struct img *m, uint64_t from, uint64_t self, uint32_t count)
{
    put(m, "\1", 1);
    put64(m, from);
    put64(m, self);
    put32(m, count);
}

/* A BSD header: 4.4BSD if RATE is non-zero, else old style. */
static void bsd_header(struct img *m, uint64_t lo, uint64_t hi, uint32_t nbins, uint32_t rate)
{
    uint32_t hdr = rate ? 40 : 20;
    put64(m, lo);
    put64(m, hi);
    put32(m, hdr + 2 * nbins);
    if (rate) {
        put32(m, 0x00051879);
        put32(m, rate);
        put(m, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
    }
    for (uint32_t i = 0; i < nbins; i++) {
        uint16_t v = (uint16_t)(i + 1);
        put(m, &v, 2);
    }
}

static void bsd_arc(struct img *m, uint64_t from, uint64_t self, uint64_t count)
{
    put64(m, from);
    put64(m, self);
    put64(m, count);
}

static const char *save(const struct img *m, const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(m->b, 1, m->n, f) != m->n || fclose(f) != 0)
        abort();
    return path;
}

/* Reads IMG; returns gmon_read's status and leaves its message in ERR. */
static int read_img(struct gmon_data *d, const struct img *m, char *err, size_t errsz)
{
    gmon_init(d);
    return gmon_read(d, save(m, "in.out"), err, errsz);
}

static int same_profile(const struct gmon_data *a, const struct gmon_data *b)
{
    if (a->nhists != b->nhists || a->narcs != b->narcs || a->lost_calls != b->lost_calls)
        return 0;
    for (size_t i = 0; i < a->nhists; i++) {
        const struct gmon_hist *x = &a->hists[i], *y = &b->hists[i];
        if (x->low_pc != y->low_pc || x->high_pc != y->high_pc || x->nbins != y->nbins ||
            x->rate != y->rate || strcmp(x->dimen, y->dimen) != 0 ||
            x->dimen_abbrev != y->dimen_abbrev ||
            memcmp(x->bins, y->bins, x->nbins * sizeof *x->bins) != 0)
            return 0;
    }
    for (size_t i = 0; i < a->narcs; i++)
        if (a->arcs[i].from_pc != b->arcs[i].from_pc || a->arcs[i].self_pc != b->arcs[i].self_pc ||
            a->arcs[i].count != b->arcs[i].count)
            return 0;
    return 1;
}

/* Writes D as a sum and reads it back into R. */
static int round_trip(const struct gmon_data *d, struct gmon_data *r)
{
    char err[512], path[256];
    snprintf(path, sizeof path, "%s/gmon.sum", dir);
    if (gmon_write_sum(d, path, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    gmon_init(r);
    if (gmon_read(r, path, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static void test_sum_round_trip(void)
{
    struct img m = {{0}, 0};
    gnu_header(&m);
    gnu_hist(&m, 0x1000, 0x1100, 64, 1);
    gnu_arc(&m, 0x1010, 0x1020, 3);
    gnu_arc(&m, 0, 0, 5);
    gnu_hist(&m, 0x4000, 0x4080, 32, 7);
    gnu_arc(&m, 0x1030, 0x1020, 1);
    gnu_arc(&m, 0x1010, 0x1020, 4);
    put(&m, "\2", 1); /* a basic-block record of one entry */
    put32(&m, 1);
    put64(&m, 0x1010);
    put64(&m, 9);
    const char *path = save(&m, "a.out");
    struct gmon_data d, r;
    char err[512];
    gmon_init(&d);
    CHECK(gmon_read(&d, path, err, sizeof err) == 0);
    CHECK(gmon_read(&d, path, err, sizeof err) == 0);
    CHECK(d.nhists == 2 && d.narcs == 2 && d.lost_calls == 10 && d.nbb_tags == 2);
    CHECK(d.hists[1].bins[3] == 20 && d.arcs[0].count == 14);
    CHECK(round_trip(&d, &r) == 0);
    CHECK(same_profile(&d, &r));
    CHECK(r.nbb_tags == 1 && r.nbb_records == 0); /* gprof -s keeps an empty record */
    gmon_free(&r);
    gmon_free(&d);

    /* No temporary file is left next to the sum. */
    DIR *dp = opendir(dir);
    struct dirent *e;
    int leftovers = 0;
    while (dp && (e = readdir(dp)))
        leftovers += strstr(e->d_name, ".tmp.") != NULL;
    if (dp)
        closedir(dp);
    CHECK(leftovers == 0);
}

static void test_write_errors(void)
{
    struct gmon_data d;
    char err[512];
    gmon_init(&d);
    const char *path = "/nonexistent-dir/gmon.sum";
    CHECK(gmon_write_sum(&d, path, err, sizeof err) == -1);
    CHECK(strncmp(err, path, strlen(path)) == 0);
    gmon_free(&d);
}

static void test_bsd(void)
{
    struct gmon_data d, r;
    char err[512];

    /* 4.4BSD: the rate from the header, 64-bit arc counts kept whole. */
    struct img m = {{0}, 0};
    bsd_header(&m, 0x2000, 0x2100, 64, 1000);
    bsd_arc(&m, 0x2010, 0x2040, 5000000000ull);
    bsd_arc(&m, 0x2050, 0x2040, 2);
    CHECK(read_img(&d, &m, err, sizeof err) == 0);
    CHECK(d.nhists == 1 && d.hists[0].rate == 1000 && d.hists[0].nbins == 64);
    CHECK(d.hists[0].bins[0] == 1 && d.hists[0].bins[63] == 64);
    CHECK(strcmp(d.hists[0].dimen, "seconds") == 0 && d.hists[0].dimen_abbrev == 's');
    CHECK(d.narcs == 2 && d.arcs[0].count == 5000000000ull);
    CHECK(round_trip(&d, &r) == 0 && same_profile(&d, &r));
    gmon_free(&r);

    /* A count of 2^64 - 1 is cut to GMON_SUM_COUNT_MAX: 256 records, not 2^32. */
    d.arcs[1].count = UINT64_MAX;
    CHECK(round_trip(&d, &r) == 0 && r.arcs[1].count == GMON_SUM_COUNT_MAX);
    gmon_free(&r);

    /* A second 4.4BSD file at another rate is refused, as gprof does. */
    struct img m2 = {{0}, 0};
    bsd_header(&m2, 0x2000, 0x2100, 64, 100);
    CHECK(gmon_read(&d, save(&m2, "rate.out"), err, sizeof err) == -1);
    CHECK(strstr(err, "rate") != NULL);
    gmon_free(&d);

    /* Old BSD: 20-byte header, no rate (the clock tick rate is assumed). */
    m.n = 0;
    bsd_header(&m, 0x2000, 0x2100, 64, 0);
    bsd_arc(&m, 0x2010, 0x2040, 3);
    CHECK(read_img(&d, &m, err, sizeof err) == 0);
    CHECK(d.nhists == 1 && d.hists[0].nbins == 64 && d.hists[0].bins[1] == 2);
    CHECK(d.narcs == 1 && d.arcs[0].count == 3 && d.hists[0].rate > 0);
    gmon_free(&d);
}

/* Headers that are not self-consistent are refused as neither format. */
static void test_not_bsd(void)
{
    struct gmon_data d;
    char err[512];
    struct img m;
    struct {
        const char *what;
        uint64_t lo, hi;
        uint32_t nbins, rate;
        int cut;     /* bytes cut from the end */
        int ncnt_at; /* if non-zero: overwrite ncnt with this */
    } cases[] = {
        {"empty range", 0x2000, 0x2000, 8, 100, 0, 0},
        {"reversed range", 0x3000, 0x2000, 8, 100, 0, 0},
        {"histogram past the end", 0x2000, 0x2100, 8, 100, 0, 0x7fffffff},
        {"histogram shorter than header", 0x2000, 0x2100, 8, 100, 0, 12},
        {"odd histogram size", 0x2000, 0x2100, 8, 100, 0, 41 + 2 * 8},
        {"partial arc", 0x2000, 0x2100, 8, 100, 5, 0},
        {"old style, partial arc", 0x2000, 0x2100, 8, 0, 5, 0},
        {"rate 0", 0x2000, 0x2100, 8, 0, 0, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        m.n = 0;
        bsd_header(&m, cases[i].lo, cases[i].hi, cases[i].nbins, cases[i].rate);
        bsd_arc(&m, 0x2010, 0x2040, 1);
        m.n -= (size_t)cases[i].cut;
        if (cases[i].ncnt_at > 0)
            memcpy(m.b + 16, &cases[i].ncnt_at, 4);
        if (cases[i].ncnt_at < 0) { /* a 4.4BSD header whose rate is 0 */
            uint32_t v = 0x00051879, z = 0;
            m.n = 0;
            bsd_header(&m, cases[i].lo, cases[i].hi, cases[i].nbins, 1);
            memcpy(m.b + 20, &v, 4);
            memcpy(m.b + 24, &z, 4);
        }
        int rc = read_img(&d, &m, err, sizeof err);
        if (rc != -1 || !strstr(err, "neither"))
            fprintf(stderr, "case '%s': rc %d, %s\n", cases[i].what, rc, err);
        CHECK(rc == -1 && strstr(err, "neither") != NULL && strstr(err, "at offset") != NULL);
        gmon_free(&d);
    }
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Counts claiming more than the file holds fail fast, allocating nothing. */
static void test_hostile_counts(void)
{
    struct gmon_data d;
    char err[512];
    struct img m = {{0}, 0};
    double t0 = now();

    gnu_header(&m);
    gnu_hist(&m, 0x1000, 0x1100, 4, 1);
    uint32_t huge = 0xffffffffu;
    memcpy(m.b + 20 + 1 + 16, &huge, 4); /* the histogram claims 2^32 - 1 bins */
    CHECK(read_img(&d, &m, err, sizeof err) == -1 && strstr(err, "bins") != NULL);
    gmon_free(&d);

    m.n = 0;
    gnu_header(&m);
    put(&m, "\2", 1);
    put32(&m, huge); /* a basic-block record of 2^32 - 1 entries */
    CHECK(read_img(&d, &m, err, sizeof err) == -1 && strstr(err, "at offset 20") != NULL);
    gmon_free(&d);

    m.n = 0;
    bsd_header(&m, 0, UINT64_MAX, 4, 100);
    memcpy(m.b + 16, &huge, 4); /* BSD histogram of 2 GB */
    CHECK(read_img(&d, &m, err, sizeof err) == -1 && strstr(err, "neither") != NULL);
    gmon_free(&d);

    /* GNU file whose magic was damaged: refused at once, not read as BSD. */
    m.n = 0;
    gnu_header(&m);
    gnu_hist(&m, 0x1000, 0x1100, 64, 1);
    memcpy(m.b, "gmOX", 4);
    CHECK(read_img(&d, &m, err, sizeof err) == -1 && strstr(err, "neither") != NULL);
    gmon_free(&d);

    CHECK(now() - t0 < 1.0);
}

static void test_overlap(void)
{
    struct gmon_data d;
    char err[512];
    struct img m = {{0}, 0};
    gnu_header(&m);
    gnu_hist(&m, 0x1000, 0x1100, 64, 1);
    gnu_hist(&m, 0x1100, 0x1200, 64, 1); /* adjacent: fine */
    gnu_hist(&m, 0x0f00, 0x1000, 64, 1); /* adjacent below: fine */
    CHECK(read_img(&d, &m, err, sizeof err) == 0 && d.nhists == 3);
    gmon_free(&d);
    size_t at = m.n;
    gnu_hist(&m, 0x0e00, 0x1300, 320, 1); /* encloses all three */
    CHECK(read_img(&d, &m, err, sizeof err) == -1 && strstr(err, "overlaps") != NULL);
    char want[64];
    snprintf(want, sizeof want, "(at offset %zu)", at);
    CHECK(strstr(err, want) != NULL || !fprintf(stderr, "%s\n", err));
    gmon_free(&d);

    /* Same range twice with a different number of bins: a different scale. */
    m.n = 0;
    gnu_header(&m);
    gnu_hist(&m, 0x1000, 0x1100, 64, 1);
    gnu_hist(&m, 0x1000, 0x1100, 32, 1);
    CHECK(read_img(&d, &m, err, sizeof err) == -1 && strstr(err, "bin size") != NULL);
    gmon_free(&d);
}

/* Version 0 (which gprof still reads): a file name after a basic-block count. */
static void test_version0_and_paths(void)
{
    struct gmon_data d;
    char err[512];
    struct img m = {{0}, 0};
    put(&m, "gmon", 4);
    put32(&m, 0);
    put(&m, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
    gnu_hist(&m, 0x1000, 0x1100, 64, 1);
    put(&m, "\2", 1);
    put32(&m, 1);
    put(&m, "x.c", 4);
    put64(&m, 0x1010);
    put64(&m, 9);
    gnu_arc(&m, 0x1010, 0x1020, 3);
    CHECK(read_img(&d, &m, err, sizeof err) == 0);
    CHECK(d.nbb_records == 1 && d.narcs == 1 && d.arcs[0].count == 3);
    gmon_free(&d);
    m.n -= 21 + 16 + 4; /* the name's NUL and all after it gone */
    CHECK(read_img(&d, &m, err, sizeof err) == -1 && strstr(err, "name") != NULL);
    gmon_free(&d);

    gmon_init(&d);
    CHECK(gmon_read(&d, dir, err, sizeof err) == -1 && strstr(err, "directory") != NULL);
    CHECK(gmon_read(&d, "/nonexistent.out", err, sizeof err) == -1 &&
          strstr(err, "/nonexistent.out: ") == err);
    gmon_free(&d);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cgprof-gmonw-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_sum_round_trip();
    test_write_errors();
    test_bsd();
    test_not_bsd();
    test_hostile_counts();
    test_overlap();
    test_version0_and_paths();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        failures++;
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures != 0;
}

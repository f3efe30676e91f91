/* libFuzzer target for the gmon.out readers (GNU, BSD) and the gmon.sum writer's round trip.
 *
 * Build: make fuzz  (clang -fsanitize=fuzzer,address,undefined), then
 *   build/fuzz_gmon -max_total_time=60 tests/fuzz/corpus
 *
 * An input is one profile, or two when it opens with "SPLT" and a 16-bit
 * length N: the N bytes after those 6 (fewer if the input is shorter),
 * then the rest, summed into one gmon_data so the checks between files
 * run too.  Any
 * profile read whole is written with gmon_write_sum and read back; the
 * copy must read without error and hold the same data (bins cut to 16
 * bits, as the format stores them), else the target aborts.
 */
#include "gmon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char sum_path[256];

static void set_sum_path(void)
{
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(sum_path, sizeof sum_path, "%s/cgprof-fuzz-%ld.sum", dir ? dir : "/tmp",
             (long)getpid());
}

static uint64_t capped(uint64_t count)
{
    return count < GMON_SUM_COUNT_MAX ? count : GMON_SUM_COUNT_MAX;
}

static void expect_same(const struct gmon_data *a, const struct gmon_data *b)
{
    int same =
        a->nhists == b->nhists && a->narcs == b->narcs && capped(a->lost_calls) == b->lost_calls;
    for (size_t i = 0; same && i < a->nhists; i++) {
        const struct gmon_hist *x = &a->hists[i], *y = &b->hists[i];
        same = x->low_pc == y->low_pc && x->high_pc == y->high_pc && x->nbins == y->nbins &&
               y->rate == a->hists[0].rate && strcmp(x->dimen, y->dimen) == 0 &&
               x->dimen_abbrev == y->dimen_abbrev;
        for (uint32_t k = 0; same && k < x->nbins; k++)
            same = (uint16_t)x->bins[k] == y->bins[k];
    }
    for (size_t i = 0; same && i < a->narcs; i++)
        same = a->arcs[i].from_pc == b->arcs[i].from_pc &&
               a->arcs[i].self_pc == b->arcs[i].self_pc &&
               capped(a->arcs[i].count) == b->arcs[i].count;
    if (!same) {
        fprintf(stderr, "fuzz_gmon: the written sum reads back different\n");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gmon_data d, r;
    char err[512];
    size_t first = size;
    if (size >= 6 && memcmp(data, "SPLT", 4) == 0) {
        size_t want = (size_t)data[4] | (size_t)data[5] << 8;
        data += 6;
        size -= 6;
        first = want < size ? want : size;
    }
    gmon_init(&d);
    int rc = gmon_read_buffer(&d, "a", data, first, err, sizeof err);
    if (rc == 0 && first < size)
        rc = gmon_read_buffer(&d, "b", data + first, size - first, err, sizeof err);
    if (rc != 0 && strncmp(err, "a: ", 3) != 0 && strncmp(err, "b: ", 3) != 0) {
        fprintf(stderr, "fuzz_gmon: message without the file name: %s\n", err);
        abort();
    }
    if (rc == 0) {
        if (!sum_path[0])
            set_sum_path();
        if (gmon_write_sum(&d, sum_path, err, sizeof err) != 0) {
            fprintf(stderr, "fuzz_gmon: %s\n", err);
            abort();
        }
        gmon_init(&r);
        if (gmon_read(&r, sum_path, err, sizeof err) != 0) {
            fprintf(stderr, "fuzz_gmon: the written sum does not read back: %s\n", err);
            abort();
        }
        expect_same(&d, &r);
        gmon_free(&r);
        unlink(sum_path);
    }
    gmon_free(&d);
    return 0;
}

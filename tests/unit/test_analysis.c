/* Unit tests of the analysis modules: gmon.out reading, symbol lookup, call-graph model.
 *
 * Build and run from the repository root (exits non-zero if a check fails):
 *   cc -std=c11 -D_GNU_SOURCE -Ianalysis tests/unit/test_analysis.c \
 *      analysis/gmon.c analysis/symtab.c analysis/callgraph.c analysis/dwinfo.c \
 *      analysis/elffile.c analysis/plt.c -ldw -lelf -o t && ./t
 */
#include "callgraph.h"
#include "gmon.h"
#include "symtab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* A gmon.out image being built in memory. */
struct img {
    unsigned char b[4096];
    size_t n;
};

static void put(struct img *m, const void *p, size_t n)
{
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

static void put_header(struct img *m)
{
    uint32_t version = 1;
    put(m, "gmon", 4);
    put(m, &version, 4);
    put(m, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
}

static void put_arc(struct img *m, uint64_t from, uint64_t self, uint32_t count)
{
    put(m, "\1", 1);
    put(m, &from, 8);
    put(m, &self, 8);
    put(m, &count, 4);
}

/* A histogram of NBINS bins over [LO, HI), every bin holding COUNT. */
static void put_hist(struct img *m, uint64_t lo, uint64_t hi, uint32_t nbins, uint16_t count)
{
    uint32_t rate = 100;
    char dim[16] = "seconds";
    dim[15] = 's';
    put(m, "\0", 1);
    put(m, &lo, 8);
    put(m, &hi, 8);
    put(m, &nbins, 4);
    put(m, &rate, 4);
    put(m, dim, 16);
    for (uint32_t i = 0; i < nbins; i++)
        put(m, &count, 2);
}

/* Writes M to a new file in $TMPDIR (or /tmp); the caller unlinks it
 * before the next call reuses the name's buffer. */
static const char *write_img(const struct img *m)
{
    static char path[4096];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/cgprof-unit-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, m->b, m->n) != (ssize_t)m->n)
        abort();
    close(fd);
    return path;
}

static void test_gmon(void)
{
    struct img m = {{0}, 0};
    put_header(&m);
    put_hist(&m, 0x1000, 0x1040, 32, 1);
    put_arc(&m, 0x1010, 0x1020, 3);
    put_arc(&m, 0, 0, 5);
    put_arc(&m, 0x1010, 0x1020, 4);
    put_arc(&m, 0x1030, 0x1020, 1);
    const char *path = write_img(&m);
    struct gmon_data d;
    char err[256];
    gmon_init(&d);
    CHECK(gmon_read(&d, path, err, sizeof err) == 0);
    CHECK(gmon_read(&d, path, err, sizeof err) == 0); /* summed twice */
    CHECK(d.nhists == 1 && d.hists[0].bins[5] == 2 && strcmp(d.hists[0].dimen, "seconds") == 0);
    CHECK(d.narcs == 2 && d.arcs[0].count == 14 && d.arcs[1].count == 2);
    CHECK(d.lost_calls == 10);
    gmon_free(&d);
    unlink(path);

    /* Truncated in the middle of the arcs: an error with the offset. */
    m.n -= 3;
    path = write_img(&m);
    gmon_init(&d);
    CHECK(gmon_read(&d, path, err, sizeof err) != 0);
    CHECK(strstr(err, "at offset") != NULL && strncmp(err, path, strlen(path)) == 0);
    gmon_free(&d);
    unlink(path);
}

static int cmp_mod(int a, int b, const void *ctx)
{
    (void)ctx;
    return a % 3 - b % 3;
}

static void test_sort_is_stable(void)
{
    int v[] = {5, 3, 9, 1, 4, 7, 6, 0, 2, 8};
    cg_sort(v, 10, cmp_mod, NULL);
    int want[] = {3, 9, 6, 0, 1, 4, 7, 5, 2, 8};
    CHECK(memcmp(v, want, sizeof v) == 0);
}

/* main -> a -> b -> a (cycle), b -> leaf; main is spontaneous. */
static void test_callgraph(void)
{
    struct symtab_sym syms[] = {
        {.addr = 0x1000, .end_addr = 0x10ff, .name = "main", .is_func = 1},
        {.addr = 0x1100, .end_addr = 0x11ff, .name = "a", .is_func = 1},
        {.addr = 0x1200, .end_addr = 0x12ff, .name = "b", .is_func = 1},
        {.addr = 0x1300, .end_addr = 0x13ff, .name = "leaf", .is_func = 1},
    };
    struct symtab st = {syms, 4, NULL};
    CHECK(symtab_lookup(&st, 0x0fff) == -1 && symtab_lookup(&st, 0x1234) == 2);
    CHECK(symtab_lookup(&st, 0x1400) == -1);
    struct img m = {{0}, 0};
    put_header(&m);
    put_hist(&m, 0x1000, 0x1400, 512, 0);
    m.b[m.n - 2 * 512 + 2 * (0x380 / 2)] = 8; /* 8 samples in leaf */
    put_arc(&m, 0x1010, 0x1100, 2);           /* main -> a */
    put_arc(&m, 0x1110, 0x1200, 6);           /* a -> b */
    put_arc(&m, 0x1210, 0x1100, 4);           /* b -> a */
    put_arc(&m, 0x1220, 0x1300, 6);           /* b -> leaf */
    put_arc(&m, 0x5000, 0x1000, 1);           /* from outside: dropped */
    const char *path = write_img(&m);
    struct gmon_data d;
    struct callgraph g;
    char err[256];
    gmon_init(&d);
    CHECK(gmon_read(&d, path, err, sizeof err) == 0);
    CHECK(cg_build(&g, &st, &d, err, sizeof err) == 0);
    CHECK(g.ncycles == 1);
    CHECK(g.nodes[1].cyc_num == 1 && g.nodes[2].cyc_num == 1 && g.nodes[0].cyc_num == 0);
    CHECK(g.nodes[4].ncalls == 2 && g.nodes[4].self_calls == 10);
    CHECK(g.nodes[0].ncalls == 0 && g.nodes[0].first_parent == CG_NONE);
    CHECK(fabs(g.nodes[3].self_time - 8) < 1e-9);
    CHECK(fabs(g.nodes[0].prop_child - 8) < 1e-9); /* all time reaches main */
    /* The cycle, b, leaf and main all total 8 samples; a (whose only callee
     * is in its cycle) has none.  Ties: the cycle first, then more calls,
     * then by name. */
    CHECK(g.nodes[4].index == 1 && g.nodes[2].index == 2 && g.nodes[3].index == 3);
    CHECK(g.nodes[0].index == 4 && g.nodes[1].index == 5);
    cg_free(&g);
    gmon_free(&d);
    unlink(path);
}

/* Two cycles found by Tarjan's algorithm, numbered as gprof numbers them:
 * f0 -> f1 -> f2 -> f1 and f0 -> f3 -> f4 -> f3; -k drops f0 -> f3, and
 * a static call f2 -> f4 adds an arc with count 0. */
static void test_cycles_and_options(void)
{
    struct symtab_sym syms[5];
    static const char *const names[] = {"f0", "f1", "f2", "f3", "f4"};
    for (int i = 0; i < 5; i++)
        syms[i] = (struct symtab_sym){.addr = 0x1000 + 0x100 * (uint64_t)i,
                                      .end_addr = 0x10ff + 0x100 * (uint64_t)i,
                                      .name = names[i],
                                      .is_func = 1};
    struct symtab st = {syms, 5, NULL};
    struct img m = {{0}, 0};
    put_header(&m);
    put_hist(&m, 0x1000, 0x1500, 640, 1);
    put_arc(&m, 0x1010, 0x1100, 1); /* f0 -> f1 */
    put_arc(&m, 0x1110, 0x1200, 3); /* f1 -> f2 */
    put_arc(&m, 0x1210, 0x1100, 2); /* f2 -> f1 */
    put_arc(&m, 0x1020, 0x1300, 1); /* f0 -> f3 */
    put_arc(&m, 0x1310, 0x1400, 5); /* f3 -> f4 */
    put_arc(&m, 0x1410, 0x1300, 4); /* f4 -> f3 */
    const char *path = write_img(&m);
    struct gmon_data d;
    struct callgraph g;
    char err[256];
    gmon_init(&d);
    CHECK(gmon_read(&d, path, err, sizeof err) == 0);
    CHECK(cg_build(&g, &st, &d, err, sizeof err) == 0);
    /* Heads f1 and f3 in address order: cycles 1 and 2. */
    CHECK(g.ncycles == 2 && g.nodes[1].cyc_num == 1 && g.nodes[2].cyc_num == 1);
    CHECK(g.nodes[3].cyc_num == 2 && g.nodes[4].cyc_num == 2 && g.nodes[0].cyc_num == 0);
    CHECK(g.nodes[0].top_order > g.nodes[1].top_order &&
          g.nodes[0].top_order > g.nodes[3].top_order);
    cg_free(&g);

    struct cg_spec specs[] = {{CG_EXCL_FLAT, "f2"}, {CG_INCL_GRAPH, "f3"}};
    struct cg_arc_spec arcs[] = {{"f0", "f3"}};
    struct cg_static_call calls[] = {{2, 4}};
    struct cg_opts o = {.specs = specs,
                        .nspecs = 2,
                        .excl_arcs = arcs,
                        .nexcl_arcs = 1,
                        .static_calls = calls,
                        .nstatic_calls = 1};
    CHECK(cg_build_opts(&g, &st, &d, &o, err, sizeof err) == 0);
    CHECK(g.nodes[2].excluded && g.nodes[2].self_time == 0 && !g.nodes[1].excluded);
    CHECK(g.nodes[3].ncalls == 4 && g.nodes[3].first_parent != CG_NONE);
    CHECK(cg_selected(&g, 3, CG_INCL_GRAPH) && !cg_selected(&g, 0, CG_INCL_GRAPH));
    CHECK(g.nodes[0].print_flag == 0 && g.nodes[3].print_flag == 1);
    int found = 0;
    for (int a = g.nodes[2].first_child; a != CG_NONE; a = g.arcs[a].next_child)
        found |= g.arcs[a].child == 4 && g.arcs[a].count == 0;
    CHECK(found);
    cg_free(&g);
    gmon_free(&d);
    unlink(path);
}

int main(void)
{
    test_cycles_and_options();
    test_gmon();
    test_sort_is_stable();
    test_callgraph();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_analysis: all checks passed\n");
    return failures != 0;
}

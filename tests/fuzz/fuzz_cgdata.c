/* libFuzzer target for the cgprof profile reader (analysis/cgdata.c) and
 * the analysis and printers behind it (callgraph.c, gprof_text.c, json.c).
 *
 * Build: make fuzz, then build/fuzz_cgdata tests/fuzz/corpus-cgdata
 *
 * Every input either reads cleanly or gets a message that names the file;
 * a read profile must be self-consistent: every sample's module is one the
 * file holds.  A profile read is then analyzed as cgprof report would,
 * with symbols made up from its own addresses (the files it names are not
 * looked at): a function at each arc's callee, C++ names among them, and
 * each module's own entry, as analysis/modmap.c lays them out; the call
 * graph must build (or refuse counts that overflow) and print as text and
 * JSON.  Anything else aborts, and the debug build's invariants
 * (callgraph.c) are checked on every graph.
 */
#include "callgraph.h"
#include "cgdata.h"
#include "stacks.h"
#include "gprof_text.h"
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SLICE_SHIFT 40

/* (module, address) in one address space, as modmap.c lays it out. */
static uint64_t synth(const struct cgdata *d, uint32_t module, uint64_t addr)
{
    for (size_t k = 0; k < d->nmodules; k++)
        if (d->modules[k].id == module)
            return ((uint64_t)(k + 1) << SLICE_SHIFT) + (addr & ((1ull << SLICE_SHIFT) - 1));
    return 0;
}

static int by_addr(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Names for the made-up functions: C, C++ (to be demangled), library. */
static const char *const names[] = {
    "main",
    "_ZN3geo6Square4areaEi",
    "_ZN12_GLOBAL__N_13fibEj",
    "work [libc.so.6]",
    "_ZNKSt6vectorIdSaIdEE4sizeEv [libstdc++.so.6]",
    "[libc.so.6]",
    "_Z3sumIdET_RKSt6vectorIS0_SaIS0_EEi",
};

static void analyze(const struct cgdata *d, FILE *sink)
{
    size_t n = d->narcs + d->nmodules + 1;
    uint64_t *at = malloc(n * sizeof *at);
    struct symtab st = {.syms = calloc(n, sizeof *st.syms)};
    char(*nm)[64] = calloc(n, sizeof *nm);
    struct cg_pc_sample *pcs = calloc(d->nsamples + 1, sizeof *pcs);
    if (!at || !st.syms || !nm || !pcs)
        abort();
    size_t m = 0;
    at[m++] = 0; /* [unknown] */
    for (size_t k = 0; k < d->nmodules; k++)
        at[m++] = (uint64_t)(k + 1) << SLICE_SHIFT;
    for (size_t i = 0; i < d->narcs; i++)
        at[m++] = synth(d, d->arcs[i].self_module, d->arcs[i].self_addr);
    qsort(at, m, sizeof *at, by_addr);
    for (size_t i = 0; i < m; i++) {
        if (st.n && st.syms[st.n - 1].addr == at[i])
            continue;
        snprintf(nm[st.n], sizeof nm[st.n], "%s%zu", names[st.n % (sizeof names / sizeof *names)],
                 st.n);
        st.syms[st.n] = (struct symtab_sym){
            .addr = at[i], .name = nm[st.n], .file = st.n % 5 ? NULL : "f.c", .is_func = 1};
        if (st.n)
            st.syms[st.n - 1].end_addr = at[i] - 1;
        st.n++;
    }
    st.syms[st.n - 1].end_addr = UINT64_MAX;
    struct gmon_data gd;
    gmon_init(&gd);
    int rc = 0;
    for (size_t i = 0; i < d->narcs && rc == 0; i++)
        rc = gmon_add_arc(&gd, synth(d, d->arcs[i].from_module, d->arcs[i].from_addr),
                          synth(d, d->arcs[i].self_module, d->arcs[i].self_addr), d->arcs[i].count);
    if (rc == -1)
        abort(); /* out of memory: not what a fuzzer looks for */
    for (size_t i = 0; i < d->nsamples; i++)
        pcs[i] = (struct cg_pc_sample){.pc = synth(d, d->samples[i].module, d->samples[i].addr),
                                       .count = d->samples[i].count};
    struct cg_opts o;
    memset(&o, 0, sizeof o);
    o.pc_samples = pcs;
    o.npc_samples = d->nsamples;
    o.pc_rate = d->timed ? (double)d->rate : 1.0;
    o.pc_unit = d->timed ? "seconds" : d->event;
    o.dense_index = 1;
    o.show_zeros = (int)(d->pid & 1);
    struct callgraph g;
    char err[256];
    /* sampled stacks: symbolized, their calls added, times measured */
    struct stacks stk;
    int has_stacks = 0;
    if (d->has_stacks) {
        has_stacks = stacks_prepare(&stk, d, &st, err, sizeof err) == 0;
        if (!has_stacks)
            stacks_free(&stk); /* what it had made before it failed */
    }
    if (has_stacks) {
        o.stack_calls = stk.calls;
        o.nstack_calls = stk.ncalls;
    }
    int built = rc == 0 && cg_build_opts(&g, &st, &gd, &o, err, sizeof err) == 0;
    if (built && has_stacks && stacks_measure(&g, &stk, err, sizeof err) != 0) {
        cg_free(&g);
        built = 0;
    }
    if (built) {
        struct gprof_text_opts t = {.flat = 1,
                                    .graph = 1,
                                    .show_zeros = o.show_zeros,
                                    .demangle = 1,
                                    .bsd = (int)(d->pid & 2)};
        gprof_text_print(sink, &g, &t);
        json_print(sink, &g, "prog", gd.lost_calls, d->threads, d->nthreads,
                   has_stacks ? &stk : NULL, NULL, NULL, d, NULL);
        cg_free(&g);
    }
    if (has_stacks)
        stacks_free(&stk);
    gmon_free(&gd);
    free(pcs);
    free(nm);
    free(st.syms);
    free(at);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink && !(sink = fopen("/dev/null", "w")))
        abort();
    struct cgdata d;
    char err[512];
    int rc = cgdata_read_buffer(&d, "f", data, size, err, sizeof err);
    if (rc != 0 && strncmp(err, "f: ", 3) != 0) {
        fprintf(stderr, "fuzz_cgdata: message without the file name: %s\n", err);
        abort();
    }
    for (size_t i = 0; rc == 0 && i < d.nsamples; i++)
        if (d.samples[i].module != CGDATA_NO_MODULE && !cgdata_module(&d, d.samples[i].module))
            abort();
    for (size_t i = 0; rc == 0 && i < d.nmodules; i++)
        if (d.modules[i].image && (d.modules[i].image < d.buf ||
                                   d.modules[i].image + d.modules[i].image_len > d.buf + d.len))
            abort();
    if (rc == 0)
        analyze(&d, sink);
    cgdata_free(&d);
    return 0;
}

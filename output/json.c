/* Printer of the analyzed profile as JSON: flat data, call graph with
 * cycles, the time along each arc (measured from stacks or propagated
 * from counts) and the sampled stacks (docs/json-schema.md). */
#include "json.h"
#include "linemap.h"
#include "modmap.h"

#include <math.h>

static void put_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

/* Seconds with enough digits to sum back exactly at the sampling rate. */
static void put_seconds(FILE *out, double samples, double rate)
{
    double v = rate > 0 ? samples / rate : 0;
    fprintf(out, "%.9g", isfinite(v) ? v : 0.0);
}

static const char *node_name(const struct callgraph *g, int id, char *buf, size_t n)
{
    const struct cg_node *nd = &g->nodes[id];
    if (nd->name)
        return nd->name;
    snprintf(buf, n, "<cycle %d>", nd->cyc_num);
    return buf;
}

/* A function is listed when it was called, called out, or sampled. */
static int listed(const struct callgraph *g, size_t i)
{
    const struct cg_node *n = &g->nodes[i];
    return !n->excluded && (n->ncalls || n->self_calls || n->self_time > 0 ||
                            n->first_child != CG_NONE || n->first_parent != CG_NONE);
}

/* A function called only along arcs seen in stacks: its calls are not
 * known (code built without -pg), so none are printed. */
static int calls_unknown(const struct callgraph *g, const struct cg_node *n)
{
    if (n->ncalls || n->self_calls)
        return 0;
    for (int a = n->first_parent; a != CG_NONE; a = g->arcs[a].next_parent)
        if (g->arcs[a].uncounted)
            return 1;
    return 0;
}

static void print_functions(FILE *out, const struct callgraph *g)
{
    int first = 1;
    fputs("  \"functions\": [", out);
    for (size_t i = 0; i < g->nsyms; i++) {
        const struct cg_node *n = &g->nodes[i];
        if (!listed(g, i))
            continue;
        fputs(first ? "\n    {" : ",\n    {", out);
        first = 0;
        fputs("\"name\": ", out);
        put_string(out, n->name);
        if (n->file) {
            fputs(", \"file\": ", out);
            put_string(out, n->file);
        }
        if (calls_unknown(g, n))
            fprintf(out, ", \"index\": %d, \"counted\": false", n->index);
        else
            fprintf(out, ", \"index\": %d, \"calls\": %llu, \"self_calls\": %llu", n->index,
                    (unsigned long long)n->ncalls, (unsigned long long)n->self_calls);
        fputs(", \"self_seconds\": ", out);
        put_seconds(out, n->self_time, g->rate);
        fputs(", \"child_seconds\": ", out);
        put_seconds(out, n->child_time, g->rate);
        if (g->measured) {
            fputs(", \"inclusive_seconds\": ", out);
            put_seconds(out, n->incl_time, g->rate);
        }
        if (n->cyc_num)
            fprintf(out, ", \"cycle\": %d", n->cyc_num);
        fputc('}', out);
    }
    fputs(first ? "],\n" : "\n  ],\n", out);
}

static void print_cycles(FILE *out, const struct callgraph *g)
{
    fputs("  \"cycles\": [", out);
    for (size_t c = 0; c < g->ncycles; c++) {
        const struct cg_node *h = &g->nodes[g->nsyms + c];
        fprintf(out, "%s\n    {\"number\": %d, \"index\": %d", c ? "," : "", h->cyc_num, h->index);
        if (h->ncalls + h->self_calls == 0 && g->measured) /* a cycle of code without -pg */
            fputs(", \"counted\": false", out);
        else
            fprintf(out, ", \"calls\": %llu, \"internal_calls\": %llu",
                    (unsigned long long)h->ncalls, (unsigned long long)h->self_calls);
        fputs(", \"self_seconds\": ", out);
        put_seconds(out, h->self_time, g->rate);
        fputs(", \"child_seconds\": ", out);
        put_seconds(out, h->child_time, g->rate);
        if (g->measured) {
            fputs(", \"inclusive_seconds\": ", out);
            put_seconds(out, h->incl_time, g->rate);
        }
        fputs(", \"members\": [", out);
        int first = 1;
        for (int m = h->cyc_next; m != CG_NONE; m = g->nodes[m].cyc_next) {
            fputs(first ? "" : ", ", out);
            first = 0;
            put_string(out, g->nodes[m].name);
        }
        fputs("]}", out);
    }
    fputs(g->ncycles ? "\n  ],\n" : "],\n", out);
}

static void print_sites(FILE *out, const struct src_sites *s, int caller, int callee)
{
    size_t n;
    const struct src_site *v = s ? src_sites_of(s, caller, callee, &n) : NULL;
    if (!v)
        return;
    fputs(", \"sites\": [", out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", {\"file\": " : "{\"file\": ", out);
        put_string(out, v[i].file);
        fprintf(out, ", \"line\": %u, \"count\": %llu}", v[i].line, (unsigned long long)v[i].count);
    }
    fputc(']', out);
}

static void print_arcs(FILE *out, const struct callgraph *g, const struct src_sites *sites)
{
    char b1[32], b2[32];
    fputs("  \"arcs\": [", out);
    for (size_t i = 0; i < g->narcs; i++) {
        const struct cg_arc *a = &g->arcs[i];
        fputs(i ? ",\n    {\"caller\": " : "\n    {\"caller\": ", out);
        put_string(out, node_name(g, a->parent, b1, sizeof b1));
        fputs(", \"callee\": ", out);
        put_string(out, node_name(g, a->child, b2, sizeof b2));
        if (a->uncounted)
            fputs(", \"counted\": false", out);
        else
            fprintf(out, ", \"count\": %llu", (unsigned long long)a->count);
        fputs(", \"self_seconds\": ", out);
        put_seconds(out, a->time, g->rate);
        fputs(", \"child_seconds\": ", out);
        put_seconds(out, a->child_time, g->rate);
        int pc = g->nodes[a->parent].cyc_num, cc = g->nodes[a->child].cyc_num;
        if (pc && pc == cc && a->parent != a->child)
            fputs(", \"within_cycle\": true", out);
        if (!a->uncounted)
            print_sites(out, sites, a->parent, a->child);
        fputc('}', out);
    }
    fputs(g->narcs ? "\n  ]" : "]", out);
}

static const char *module_path(const struct cgdata *d, uint32_t id)
{
    const struct cgdata_module *m = cgdata_module(d, id);
    return m ? m->path : NULL;
}

/* The inline chain of a frame at PC (LM's space), outermost first: each
 * inlined function and where it was inlined (the call's file and line in
 * the code around it); nothing outside inlined code or without DWARF. */
static void print_inlined(FILE *out, struct linemap *lm, uint64_t pc)
{
    const struct dwi_inl *chain[64];
    size_t n = lm && pc ? linemap_inline(lm, pc, chain, 64) : 0;
    if (n > 64)
        n = 64;
    if (n == 0)
        return;
    fputs(", \"inlined\": [", out);
    for (size_t j = n; j-- > 0;) {
        fputs(j + 1 < n ? ", {\"function\": " : "{\"function\": ", out);
        put_string(out, chain[j]->name);
        fputs(", \"call_file\": ", out);
        if (chain[j]->call_file)
            put_string(out, chain[j]->call_file);
        else
            fputs("null", out);
        fprintf(out, ", \"call_line\": %u}", chain[j]->call_line);
    }
    fputc(']', out);
}

/* The call-path tree, each frame symbolized: the function as the report
 * names it, the module it lies in and (LM) the functions inlined there. */
static void print_stacks(FILE *out, const struct callgraph *g, const struct stacks *s,
                         struct linemap *lm)
{
    const struct cgdata *d = s->d;
    fprintf(out, ",\n  \"stacks\": {\"depth_limit\": %llu, \"cut_samples\": %llu, \"nodes\": [",
            (unsigned long long)d->stack_depth_limit, (unsigned long long)d->stacks_cut);
    for (size_t i = 0; i < s->n; i++) {
        const struct cgdata_stack_node *x = &d->stacks[i];
        fputs(i ? ",\n    {\"parent\": " : "\n    {\"parent\": ", out);
        if (x->parent == CGDATA_NO_PARENT)
            fputs("null", out);
        else
            fprintf(out, "%u", x->parent);
        if (x->module == CGDATA_CUT_MODULE) {
            fputs(", \"cut\": true", out);
        } else {
            fputs(", \"function\": ", out);
            if (s->fn[i] >= 0)
                put_string(out, g->nodes[s->fn[i]].name);
            else
                fputs("null", out);
            fputs(", \"module\": ", out);
            const char *path = module_path(d, x->module);
            if (path)
                put_string(out, path);
            else
                fputs("null", out);
            fprintf(out, ", \"address\": \"0x%llx\"", (unsigned long long)x->addr);
            if (!CGDATA_IS_KERNEL(x->module, x->addr))
                print_inlined(out, lm, modmap_pc(d, x->module, x->addr));
        }
        fprintf(out, ", \"count\": %llu}", (unsigned long long)x->count);
    }
    fputs(s->n ? "\n  ]}" : "]}", out);
}

/* A cgprof profile's samples by source line. */
static void print_lines(FILE *out, const struct callgraph *g, const struct src_lines *l)
{
    fputs(",\n  \"lines\": [", out);
    for (size_t i = 0; i < l->n; i++) {
        fputs(i ? ",\n    {\"file\": " : "\n    {\"file\": ", out);
        put_string(out, l->v[i].file);
        fprintf(out, ", \"line\": %u, \"module\": ", l->v[i].line);
        put_string(out, l->v[i].module);
        fprintf(out,
                ", \"samples\": %llu, \"self_seconds\": ", (unsigned long long)l->v[i].samples);
        put_seconds(out, (double)l->v[i].samples, g->rate);
        fputc('}', out);
    }
    fputs(l->n ? "\n  ]" : "]", out);
}

static void print_threads(FILE *out, const struct callgraph *g, const struct cgdata_thread *t,
                          size_t n)
{
    fputs("  \"threads\": [", out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s\n    {\"tid\": %u, \"samples\": %llu, \"sampled_seconds\": ", i ? "," : "",
                t[i].tid, (unsigned long long)t[i].samples);
        put_seconds(out, (double)t[i].samples, g->rate);
        fprintf(out, ", \"cpu_seconds\": %.9g, \"ended\": %s}", t[i].cpu_ns / 1e9,
                t[i].flags & 1 ? "true" : "false");
    }
    fputs(n ? "\n  ],\n" : "],\n", out);
}

void json_print(FILE *out, const struct callgraph *g, const char *prog, uint64_t lost_calls,
                const struct cgdata_thread *threads, size_t nthreads, const struct stacks *stacks,
                const struct src_lines *lines, const struct src_sites *sites,
                const struct cgdata *cd, struct linemap *lm)
{
    fprintf(out, "{\n  \"schema\": \"cgprof-report\",\n  \"version\": %d,\n", JSON_SCHEMA_VERSION);
    fputs("  \"program\": ", out);
    put_string(out, prog);
    fprintf(out, ",\n  \"rate\": %.9g,\n  \"dimension\": ", g->rate);
    put_string(out, g->dimen[0] ? g->dimen : "seconds");
    fputs(",\n  \"event\": ", out);
    if (g->event[0])
        put_string(out, g->event);
    else
        fputs("null", out);
    fprintf(out, ",\n  \"times\": \"%s\"", g->measured ? "measured" : "estimated");
    fputs(",\n  \"total_seconds\": ", out);
    put_seconds(out, g->total_time, g->rate);
    fprintf(out, ",\n  \"lost_calls\": %llu,\n", (unsigned long long)lost_calls);
    if (cd && cd->runtime.present)
        fprintf(
            out,
            "  \"runtime\": {\"helper_cpu_seconds\": %.9g, \"write_cpu_seconds\": %.9g, "
            "\"start_cpu_seconds\": %.9g, \"before_cpu_seconds\": %.9g, \"late_seconds\": %.9g, "
            "\"writes\": %llu, "
            "\"samples\": %llu},\n",
            cd->runtime.helper_cpu_ns / 1e9, cd->runtime.write_cpu_ns / 1e9,
            cd->runtime.start_cpu_ns / 1e9, cd->runtime.before_cpu_ns / 1e9,
            cd->runtime.late_ns / 1e9, (unsigned long long)cd->runtime.writes,
            (unsigned long long)cd->runtime.samples);
    print_threads(out, g, threads, nthreads);
    print_functions(out, g);
    print_cycles(out, g);
    print_arcs(out, g, sites);
    if (stacks)
        print_stacks(out, g, stacks, lm);
    if (lines)
        print_lines(out, g, lines);
    fputs("\n}\n", out);
}

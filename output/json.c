/* Printer of the analyzed profile as JSON: flat data, call graph with
 * cycles, and the time propagated along each arc (docs/json-schema.md). */
#include "json.h"

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
        fprintf(out, ", \"index\": %d, \"calls\": %llu, \"self_calls\": %llu", n->index,
                (unsigned long long)n->ncalls, (unsigned long long)n->self_calls);
        fputs(", \"self_seconds\": ", out);
        put_seconds(out, n->self_time, g->rate);
        fputs(", \"child_seconds\": ", out);
        put_seconds(out, n->child_time, g->rate);
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
        fprintf(out,
                "%s\n    {\"number\": %d, \"index\": %d, \"calls\": %llu, \"internal_calls\": %llu",
                c ? "," : "", h->cyc_num, h->index, (unsigned long long)h->ncalls,
                (unsigned long long)h->self_calls);
        fputs(", \"self_seconds\": ", out);
        put_seconds(out, h->self_time, g->rate);
        fputs(", \"child_seconds\": ", out);
        put_seconds(out, h->child_time, g->rate);
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

static void print_arcs(FILE *out, const struct callgraph *g, int last)
{
    char b1[32], b2[32];
    fputs("  \"arcs\": [", out);
    for (size_t i = 0; i < g->narcs; i++) {
        const struct cg_arc *a = &g->arcs[i];
        fputs(i ? ",\n    {\"caller\": " : "\n    {\"caller\": ", out);
        put_string(out, node_name(g, a->parent, b1, sizeof b1));
        fputs(", \"callee\": ", out);
        put_string(out, node_name(g, a->child, b2, sizeof b2));
        fprintf(out, ", \"count\": %llu", (unsigned long long)a->count);
        fputs(", \"self_seconds\": ", out);
        put_seconds(out, a->time, g->rate);
        fputs(", \"child_seconds\": ", out);
        put_seconds(out, a->child_time, g->rate);
        int pc = g->nodes[a->parent].cyc_num, cc = g->nodes[a->child].cyc_num;
        if (pc && pc == cc && a->parent != a->child)
            fputs(", \"within_cycle\": true", out);
        fputc('}', out);
    }
    fputs(g->narcs ? "\n  ]" : "]", out);
    fputs(last ? "\n" : ",\n", out);
}

/* A cgprof profile's samples by source line. */
static void print_lines(FILE *out, const struct callgraph *g, const struct src_lines *l)
{
    fputs("  \"lines\": [", out);
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
    fputs(l->n ? "\n  ]\n" : "]\n", out);
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
                const struct cgdata_thread *threads, size_t nthreads, const struct src_lines *lines)
{
    fprintf(out, "{\n  \"schema\": \"cgprof-report\",\n  \"version\": %d,\n", JSON_SCHEMA_VERSION);
    fputs("  \"program\": ", out);
    put_string(out, prog);
    fprintf(out, ",\n  \"rate\": %.9g,\n  \"dimension\": ", g->rate);
    put_string(out, g->dimen[0] ? g->dimen : "seconds");
    fputs(",\n  \"total_seconds\": ", out);
    put_seconds(out, g->total_time, g->rate);
    fprintf(out, ",\n  \"lost_calls\": %llu,\n", (unsigned long long)lost_calls);
    print_threads(out, g, threads, nthreads);
    print_functions(out, g);
    print_cycles(out, g);
    print_arcs(out, g, lines == NULL);
    if (lines)
        print_lines(out, g, lines);
    fputs("}\n", out);
}

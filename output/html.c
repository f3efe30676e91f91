/* HTML export (cgprof export -f html): one self-contained page that works
 * offline.  The profile goes in as JSON (#cgprof-data); the page's own
 * code and style (output/html/page.js, page.css, embedded into cgprof at
 * build time by html_assets.S) draw a flame graph, the flat profile and a
 * call-graph view from it.
 *
 * The JSON: prog, event, timed, rate, total and stacks (whether the
 * profile had them); f, the functions, each [name, self, total, calls,
 * recursive calls, cycle], an inlined function (--inline) with a 7th
 * element 1 and its calls null; t, the stacks merged by function as triples
 * (parent, function, self) with parents first (-1: outermost); a, the
 * calls as quadruples (caller, callee, count, cost).  Calls not counted
 * (code without -pg, calls seen only in the stacks) are null, shown blank
 * as the report leaves them.  Costs are samples
 * (events for a counting event).  A function's total and a call's cost
 * are measured from the stacks when the profile has them, else gprof's
 * estimates (the call graph's propagated time). */
#include "export.h"
#include "linemap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern const char cgprof_html_js[], cgprof_html_css[];

static void put_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
            fprintf(out, "\\u%04x", *p); /* nothing in it can end the script */
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

static void put_html_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", out);
        else if (*s == '>')
            fputs("&gt;", out);
        else if (*s == '&')
            fputs("&amp;", out);
        else
            fputc(*s, out);
    }
}

/* A count as JSON: whole samples print without a fraction. */
static void put_num(FILE *out, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        fprintf(out, "%.0f", v);
    else
        fprintf(out, "%.4f", v);
}

struct hw {
    FILE *out;
    const struct ex_model *m;
    int *idx; /* function (inlined ones after slot nsyms) -> position in f, or -1 */
    int truncated;
    double *self, *incl;
    struct ex_moved *moved; /* ex_inline_calls */
    size_t nmoved;
};

/* The -pg calls of CALLER to CALLEE that W's moved list gives to inlined
 * functions (CALLER an inlined one: those given to it). */
static uint64_t moved_calls(const struct hw *w, int caller, int callee, int to_inlined)
{
    uint64_t c = 0;
    for (size_t i = 0; i < w->nmoved; i++)
        if ((to_inlined ? w->moved[i].inlined : w->moved[i].caller) == caller &&
            w->moved[i].callee == callee)
            c += w->moved[i].count;
    return c;
}

/* Self samples on one source line (the first function seen there). */
struct hline {
    const char *file;
    unsigned line;
    int func;
    double count;
};

static int hline_by_place(const void *a, const void *b)
{
    const struct hline *x = a, *y = b;
    if (x->file != y->file)
        return (uintptr_t)x->file < (uintptr_t)y->file ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

static int hline_by_count(const void *a, const void *b)
{
    const struct hline *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    int c = strcmp(x->file, y->file);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* "l": the source lines of the samples, most first (at most 2,000), as
 * [file, line, function, samples]; empty without DWARF. */
static void put_lines(struct hw *w)
{
    const struct ex_model *m = w->m;
    struct linemap lm;
    struct hline *v = malloc((m->nnodes + 1) * sizeof *v);
    size_t n = 0;
    fputs(",\n\"l\":[", w->out);
    if (!v || linemap_init(&lm, m->d, m->prog) != 0) {
        free(v);
        fputc(']', w->out);
        return;
    }
    for (size_t i = 0; i < m->nnodes; i++) {
        const struct ex_node *x = &m->nodes[i];
        const char *file;
        unsigned line;
        if (x->func >= 0 && x->count > 0 && w->idx[x->func] >= 0 &&
            linemap_find(&lm, x->pc, &file, &line))
            v[n++] = (struct hline){file, line, w->idx[x->func], x->count};
    }
    if (n > 1)
        qsort(v, n, sizeof *v, hline_by_place);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && v[k - 1].file == v[i].file && v[k - 1].line == v[i].line)
            v[k - 1].count += v[i].count;
        else
            v[k++] = v[i];
    }
    if (k > 1)
        qsort(v, k, sizeof *v, hline_by_count);
    for (size_t i = 0; i < k && i < 2000; i++) {
        fputs(i ? ",\n[" : "[", w->out);
        put_json_string(w->out, v[i].file);
        fprintf(w->out, ",%u,%d,", v[i].line, v[i].func);
        put_num(w->out, v[i].count);
        fputc(']', w->out);
    }
    fputc(']', w->out);
    free(v);
    linemap_free(&lm);
}

/* The start of function F's entry in the page's "f" list, K entries on:
 * its name, self and inclusive samples; the caller ends it. */
static void put_func_head(const struct hw *w, FILE *out, size_t f, int k)
{
    fputs(k ? ",\n[" : "[", out);
    put_json_string(out, ex_name(w->m, (int)f));
    fputc(',', out);
    put_num(out, w->self[f]);
    fputc(',', out);
    put_num(out, w->incl[f]);
}

static void put_data(struct hw *w, const struct ex_fnode *t, size_t nt, const struct ex_edge *e,
                     size_t ne)
{
    FILE *out = w->out;
    const struct ex_model *m = w->m;
    const struct callgraph *g = m->g;
    fputs("{\"prog\":", out);
    put_json_string(out, m->prog);
    fputs(",\"event\":", out);
    put_json_string(out, m->event);
    fprintf(out, ",\"timed\":%d,\"rate\":%.9g,\"total\":", m->timed, m->rate);
    put_num(out, m->total);
    fprintf(out, ",\"stacks\":%d,\n\"f\":[", m->has_stacks);
    int k = 0;
    for (size_t f = 0; f < g->nsyms; f++) {
        if (w->idx[f] < 0)
            continue;
        const struct cg_node *n = &g->nodes[f];
        put_func_head(w, out, f, k++);
        if (n->ncalls + n->self_calls) /* none counted: blank, as in the report */
            fprintf(out, ",%llu,%llu,%d]", (unsigned long long)n->ncalls,
                    (unsigned long long)n->self_calls, n->cyc_num);
        else
            fprintf(out, ",null,null,%d]", n->cyc_num);
    }
    if (w->truncated >= 0) {
        fputs(k++ ? ",\n[" : "[", out);
        put_json_string(out, "[truncated]");
        fputs(",0,0,null,null,0]", out);
    }
    /* ex_inline's inlined functions: no calls of their own; 1 marks them */
    for (size_t f = g->nsyms + 1; f < g->nsyms + 1 + m->ninl; f++) {
        if (w->idx[f] < 0)
            continue;
        put_func_head(w, out, f, k++);
        fputs(",null,null,0,1]", out);
    }
    fputs("],\n\"t\":[", out);
    for (size_t i = 0; i < nt; i++) {
        int f = t[i].func >= 0 ? w->idx[t[i].func] : w->truncated;
        fprintf(out, "%s%d,%d,", i ? "," : "", t[i].parent, f);
        put_num(out, t[i].self);
    }
    fputs("],\n\"a\":[", out);
    k = 0;
    for (size_t i = 0; i < g->narcs; i++) {
        const struct cg_arc *a = &g->arcs[i];
        if (w->idx[a->parent] < 0 || w->idx[a->child] < 0)
            continue;
        double cost = a->time + a->child_time;
        if (m->has_stacks) {
            cost = 0;
            for (size_t j = 0; j < ne; j++)
                if (e[j].caller == a->parent && e[j].callee == a->child)
                    cost = e[j].cost;
        }
        uint64_t count = a->count - moved_calls(w, a->parent, a->child, 0);
        if (count == 0 && cost == 0 && a->count) /* all made from inlined code */
            continue;
        fprintf(out, "%s%d,%d,%llu,", k++ ? "," : "", w->idx[a->parent], w->idx[a->child],
                (unsigned long long)count);
        put_num(out, cost);
    }
    /* the calls made from inlined code, by inlined function */
    for (size_t i = 0; i < w->nmoved; i++) {
        const struct ex_moved *v = &w->moved[i];
        size_t j = 0;
        while (j < i && !(w->moved[j].inlined == v->inlined && w->moved[j].callee == v->callee))
            j++;
        if (j < i || w->idx[v->inlined] < 0 || w->idx[v->callee] < 0)
            continue; /* printed with the first of them */
        double cost = 0;
        for (j = 0; j < ne; j++)
            if (e[j].caller == v->inlined && e[j].callee == v->callee)
                cost = e[j].cost;
        fprintf(out, "%s%d,%d,%llu,", k++ ? "," : "", w->idx[v->inlined], w->idx[v->callee],
                (unsigned long long)moved_calls(w, v->inlined, v->callee, 1));
        put_num(out, cost);
    }
    /* calls seen only in the stacks (no -pg arc): count null, not counted */
    for (size_t j = 0; j < ne; j++) {
        int from = e[j].caller >= 0 ? w->idx[e[j].caller] : w->truncated;
        size_t i = 0;
        while (i < g->narcs &&
               !(g->arcs[i].parent == e[j].caller && g->arcs[i].child == e[j].callee))
            i++;
        if (i < g->narcs || from < 0 || w->idx[e[j].callee] < 0 ||
            moved_calls(w, e[j].caller, e[j].callee, 1))
            continue;
        fprintf(out, "%s%d,%d,null,", k++ ? "," : "", from, w->idx[e[j].callee]);
        put_num(out, e[j].cost);
    }
    fputc(']', out);
    put_lines(w);
    fputc('}', out);
}

int ex_write_html(FILE *out, const struct ex_model *m, const struct ex_opts *o)
{
    const struct callgraph *g = m->g;
    size_t nf = g->nsyms + 1 + m->ninl; /* the inlined functions after slot nsyms */
    struct hw w = {out, m, calloc(nf, sizeof(int)), -1, calloc(nf, sizeof(double)), NULL, NULL, 0};
    struct ex_fnode *t = NULL;
    struct ex_edge *e = NULL;
    size_t nt = 0, ne = 0;
    int rc = -1;
    if (!w.idx || !w.self || ex_inclusive(m, &w.incl) != 0 || ex_func_tree(m, &t, &nt) != 0 ||
        (m->has_stacks && ex_edge_costs(m, &e, &ne) != 0))
        goto done;
    if (m->ninl) {
        struct linemap lm;
        if (linemap_init(&lm, m->d, m->prog) != 0)
            goto done;
        lm.flags = DWI_INLINE;
        int r = ex_inline_calls(m, &lm, &w.moved, &w.nmoved);
        linemap_free(&lm);
        if (r != 0)
            goto done;
    }
    for (size_t i = 0; i < m->nnodes; i++)
        if (m->nodes[i].func >= 0)
            w.self[m->nodes[i].func] += m->nodes[i].count;
    int k = 0;
    for (size_t f = 0; f < g->nsyms; f++) {
        const struct cg_node *n = &g->nodes[f];
        if (!m->has_stacks)
            w.incl[f] = w.self[f] + n->child_time;
        int used = !n->excluded && (w.self[f] > 0 || w.incl[f] > 0 || n->ncalls || n->self_calls ||
                                    n->first_child != CG_NONE);
        w.idx[f] = used ? k++ : -1;
    }
    for (size_t i = 0; i < nt; i++)
        if (t[i].func < 0)
            w.truncated = k;
    if (w.truncated >= 0)
        k++;
    w.idx[g->nsyms] = -1;
    for (size_t f = g->nsyms + 1; f < nf; f++)
        w.idx[f] = w.self[f] > 0 || w.incl[f] > 0 ? k++ : -1;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>cgprof: ",
          out);
    put_html_text(out, o->title ? o->title : m->prog);
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header><h1>cgprof: ",
            cgprof_html_css);
    put_html_text(out, o->title ? o->title : m->prog);
    fputs("</h1><span class=\"sum\" id=\"summary\"></span></header>\n"
          "<nav><button id=\"tab-flame\" class=\"on\">Flame graph</button>"
          "<button id=\"tab-flat\">Flat profile</button>"
          "<button id=\"tab-graph\">Call graph</button>"
          "<button id=\"tab-lines\">Source lines</button></nav>\n"
          "<section id=\"view-flame\">\n<div class=\"bar\"><input id=\"search\" "
          "placeholder=\"search (regular expression)\"><button id=\"reset\">reset zoom</button>"
          "<span id=\"matched\"></span><span id=\"zoomed\"></span></div>\n"
          "<svg id=\"flame\" xmlns=\"http://www.w3.org/2000/svg\"></svg>\n"
          "<div id=\"details\">hover over a frame for its numbers; click to zoom</div>\n"
          "</section>\n<section id=\"view-flat\" class=\"hidden\">\n"
          "<p class=\"note\">Click a column to sort; a name for its callers and callees.</p>\n"
          "<table id=\"flat\"></table>\n</section>\n"
          "<section id=\"view-graph\" class=\"hidden\">\n<div class=\"bar\">function: <select "
          "id=\"cg-func\"></select></div>\n<div id=\"cg-view\"></div>\n</section>\n"
          "<section id=\"view-lines\" class=\"hidden\">\n<p class=\"note\" id=\"lines-note\">"
          "Self samples by source line (from the DWARF of modules built with -g), most "
          "first.</p>\n<table id=\"lines\"></table>\n</section>\n"
          "<script id=\"cgprof-data\" type=\"application/json\">",
          out);
    put_data(&w, t, nt, e, ne);
    fprintf(out, "</script>\n<script>\n%s</script>\n</body>\n</html>\n", cgprof_html_js);
    rc = ferror(out) ? -1 : 0;
done:
    free(w.idx);
    free(w.self);
    free(w.incl);
    free(w.moved);
    free(t);
    free(e);
    return rc;
}

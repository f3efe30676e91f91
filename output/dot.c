/* Graphviz export (cgprof export -f dot): the call graph as a digraph.
 *
 * A node per function whose time with its callees is at least the
 * threshold (-t, % of the total): labelled with its name, self and total
 * time and calls; coloured from pale yellow (little) to red (all of it)
 * by total time, its font grown by self time.  An edge per call between
 * two kept functions: labelled with the exact call count and the time
 * spent in those calls (measured from the stacks when the profile has
 * them, else gprof's propagated estimate), its width by that time; edges
 * under the threshold are left out except within a cycle.  Each cycle is
 * a cluster box "cycle N". */
#include "escape.h"
#include "export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void put_label(FILE *out, const char *s)
{
    for (s = esc_text(s); *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        fputc(*s, out);
    }
}

static void put_time(FILE *out, const struct ex_model *m, double samples)
{
    if (m->timed)
        fprintf(out, "%.3fs", samples / m->rate);
    else
        fprintf(out, "%.0f", samples);
}

int ex_write_dot(FILE *out, const struct ex_model *m, const struct ex_opts *o)
{
    const struct callgraph *g = m->g;
    double *incl = NULL, *self = calloc(g->nsyms + 1, sizeof *self);
    struct ex_edge *e = NULL;
    size_t ne = 0;
    char *keep = calloc(g->nsyms + 1, 1);
    if (!self || !keep || ex_inclusive(m, &incl) != 0 ||
        (m->has_stacks && ex_edge_costs(m, &e, &ne) != 0)) {
        free(self);
        free(keep);
        free(incl);
        return -1;
    }
    for (size_t i = 0; i < m->nnodes; i++)
        if (m->nodes[i].func >= 0)
            self[m->nodes[i].func] += m->nodes[i].count;
    if (!m->has_stacks) /* gprof's estimate: self plus propagated */
        for (size_t f = 0; f < g->nsyms; f++)
            incl[f] = self[f] + g->nodes[f].child_time;
    double total = m->total > 0 ? m->total : 1, min = o->threshold / 100 * m->total;
    fprintf(out, "digraph \"cgprof\" {\n  label=\"");
    put_label(out, o->title ? o->title : m->prog);
    fprintf(out, " -- total ");
    put_time(out, m, m->total);
    fprintf(out, "\";\n  labelloc=t;\n  node [shape=box, style=filled, fontname=\"sans\"];\n"
                 "  edge [fontname=\"sans\", fontsize=10];\n");
    for (size_t f = 0; f < g->nsyms; f++) {
        const struct cg_node *n = &g->nodes[f];
        int active = n->ncalls || n->self_calls || self[f] > 0 || incl[f] > 0;
        keep[f] = active && !n->excluded && (incl[f] >= min || o->threshold == 0);
        if (!keep[f])
            continue;
        double share = incl[f] / total, sshare = self[f] / total;
        int r = 255, gg = (int)(240 - 200 * share), b = (int)(200 - 200 * share);
        fprintf(out, "  f%zu [label=\"", f);
        put_label(out, ex_name(m, (int)f));
        fprintf(out, "\\nself ");
        put_time(out, m, self[f]);
        fprintf(out, " (%.1f%%)\\ntotal ", 100 * sshare);
        put_time(out, m, incl[f]);
        fprintf(out, " (%.1f%%)", 100 * share);
        if (n->ncalls || n->self_calls)
            fprintf(out, "\\n%llu calls", (unsigned long long)(n->ncalls + n->self_calls));
        fprintf(out, "\", fillcolor=\"#%02x%02x%02x\", fontsize=%.1f];\n", r, gg < 0 ? 0 : gg,
                b < 0 ? 0 : b, 10 + 14 * sshare);
    }
    for (size_t c = 0; c < g->ncycles; c++) {
        const struct cg_node *h = &g->nodes[g->nsyms + c];
        fprintf(out, "  subgraph cluster_cycle%d {\n    label=\"cycle %d\"; style=dashed;\n",
                h->cyc_num, h->cyc_num);
        for (int mb = h->cyc_next; mb != CG_NONE; mb = g->nodes[mb].cyc_next)
            if (keep[mb])
                fprintf(out, "    f%d;\n", mb);
        fprintf(out, "  }\n");
    }
    for (size_t i = 0; i < g->narcs; i++) {
        const struct cg_arc *a = &g->arcs[i];
        if (!keep[a->parent] || !keep[a->child])
            continue;
        double t = a->time + a->child_time;
        if (m->has_stacks) {
            t = 0;
            for (size_t k = 0; k < ne; k++)
                if (e[k].caller == a->parent && e[k].callee == a->child)
                    t = e[k].cost;
        }
        int pc = g->nodes[a->parent].cyc_num, in_cycle = pc && pc == g->nodes[a->child].cyc_num;
        if (t < min && o->threshold > 0 && !in_cycle)
            continue;
        fprintf(out, "  f%d -> f%d [label=\"%llu calls\\n", a->parent, a->child,
                (unsigned long long)a->count);
        put_time(out, m, t);
        fprintf(out, "\", penwidth=%.2f%s];\n", 1 + 5 * t / total,
                in_cycle ? ", style=bold, color=\"#c00000\"" : "");
    }
    fprintf(out, "}\n");
    free(self);
    free(keep);
    free(incl);
    free(e);
    return ferror(out) ? -1 : 0;
}

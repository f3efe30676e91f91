/* Printers of the flat profile, call graph and function index in GNU gprof's text layout.
 *
 * With the brief option the output is meant to be byte-identical to
 * `gprof -b`: the same field widths, the same sort orders (including how
 * ties fall), the same quirks (an unused time unit prefix of 'T' when no
 * function has time per call).  Without it, each table is followed by a
 * short explanation of our own.
 *
 * Names are sorted as the symbol table spells them (mangled) and shown
 * demangled, as gprof does; the traditional layout (-T) shows them
 * mangled.  Its tables are the call graph first, then the flat profile,
 * with a wider descendants column and fixed-width index entries.
 */
#include "escape.h"
#include "gprof_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler: abi::__cxa_demangle, which has C linkage. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define LESSTHAN    (-1)
#define EQUALTO     0
#define GREATERTHAN 1

/* The printing context: output stream, model and options. */
struct pr {
    FILE *out;
    const struct callgraph *g;
    const struct gprof_text_opts *o;
    int first_output;
    char **shown; /* demangled name of each function, or NULL to show its own */
    int cw;       /* width of the children column: 7, or 11 when traditional */
};

/* Whether gprof's demangler takes NAME: "_Z..." or "_GLOBAL_.I_..." and
 * kin (static constructors and destructors). */
static int mangled_name(const char *name, size_t len)
{
    if (len >= 2 && name[0] == '_' && name[1] == 'Z')
        return 1;
    return len > 10 && strncmp(name, "_GLOBAL_", 8) == 0 && strchr("._$", name[8]) &&
           (name[9] == 'D' || name[9] == 'I') && name[10] == '_';
}

char *gprof_text_demangle(const char *name)
{
    size_t pre = strspn(name, ".$");
    const char *body = name + pre;
    /* a suffix stays as it is: "@VERSION", or " [module]" of a library */
    const char *at = strchr(body, '@'), *mod = strstr(body, " [");
    if (mod && (!at || mod < at))
        at = mod;
    size_t len = at ? (size_t)(at - body) : strlen(body);
    if (!mangled_name(body, len))
        return NULL;
    char *copy = strndup(body, len);
    int status = 0;
    char *d = copy ? __cxa_demangle(copy, NULL, NULL, &status) : NULL;
    free(copy);
    if (!d || (pre == 0 && !at))
        return d;
    size_t dlen = strlen(d), slen = at ? strlen(at) : 0;
    char *r = malloc(pre + dlen + slen + 1);
    if (r) {
        memcpy(r, name, pre);
        memcpy(r + pre, d, dlen);
        memcpy(r + pre + dlen, at ? at : "", slen + 1);
    }
    free(d);
    return r;
}

/* gprof -l: NAME (or SHOWN, which it replaces) followed by
 * " (file:line @ address)", the file without its directories. */
static char *with_line(char *shown, const char *name, const struct symtab_sym *s, uint64_t mask)
{
    const char *base = strrchr(s->file, '/');
    base = base ? base + 1 : s->file;
    char *r = NULL;
    if (asprintf(&r, "%s (%s:%u @ %llx)", shown ? shown : name, base, s->line,
                 (unsigned long long)(mask ? s->addr & mask : s->addr)) < 0)
        r = NULL;
    free(shown);
    return r;
}

/* The name node N is shown by, its control characters escaped. */
static const char *shown(const struct pr *p, const struct cg_node *n)
{
    size_t i = (size_t)(n - p->g->nodes);
    return esc_text(p->shown && i < p->g->nsyms && p->shown[i] ? p->shown[i] : n->name);
}

static const struct {
    char prefix;
    double scale;
} si_tab[] = {
    {'T', 1e-12}, {'G', 1e-09}, {'M', 1e-06}, {'K', 1e-03}, {' ', 1e-00}, {'m', 1e+03},
    {'u', 1e+06}, {'n', 1e+09}, {'p', 1e+12}, {'f', 1e+15}, {'a', 1e+18},
};
#define SI_LEN (sizeof si_tab / sizeof si_tab[0])

static void start_section(struct pr *p)
{
    if (p->first_output)
        p->first_output = 0;
    else
        fputs("\f\n", p->out);
}

/* ---- flat profile ---- */

/* A name with its cycle and index, as gprof's print_name shows it. */
static void print_name(struct pr *p, const struct cg_node *n)
{
    fputs(shown(p, n), p->out);
    if (n->cyc_num != 0)
        fprintf(p->out, " <cycle %d>", n->cyc_num);
    if (n->index != 0)
        fprintf(p->out, n->print_flag ? " [%d]" : " (%d)", n->index);
}

/* Flat order: self time down, calls down, then by name. */
static int cmp_time(int l, int r, const void *ctx)
{
    const struct cg_node *a = &((const struct callgraph *)ctx)->nodes[l];
    const struct cg_node *b = &((const struct callgraph *)ctx)->nodes[r];
    double diff = b->self_time - a->self_time;
    if (diff > 0.0)
        return 1;
    if (diff < 0.0)
        return -1;
    if (b->ncalls != a->ncalls)
        return b->ncalls > a->ncalls ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* The SI prefix that brings the largest time per call into [1, 1000);
 * gprof's table index, including its out-of-range quirks. */
static size_t flat_log_scale(const struct callgraph *g, const int *order)
{
    double top_time = 0.0;
    int found = 0;
    for (size_t i = 0; i < g->nsyms; i++) {
        const struct cg_node *n = &g->nodes[order[i]];
        if (n->ncalls == 0)
            continue;
        double t = (n->self_time + n->child_time) / (double)n->ncalls;
        if (t > top_time) {
            top_time = t;
            found = 1;
        }
    }
    size_t k = 0;
    if (found && top_time > 0.0) {
        top_time /= g->rate;
        for (k = 0; k < SI_LEN; k++) {
            double v = si_tab[k].scale * top_time;
            if (v >= 1.0 && v < 1000.0)
                break;
        }
    }
    return k < SI_LEN ? k : SI_LEN - 1;
}

/* Bytes per sample, as gprof computes it (the scale truncated first); a
 * profile of exact pcs covers one byte per sample. */
static long granularity(const struct callgraph *g)
{
    return g->hist_scale < 1 ? 1 : (long)g->hist_scale * 2L;
}

static void flat_header(struct pr *p, char prefix, double *total)
{
    const struct callgraph *g = p->g;
    char unit[16];
    snprintf(unit, sizeof unit, "%c%c/call", prefix, g->dimen_abbrev);
    if (p->o->bsd) {
        fprintf(p->out, "\ngranularity: each sample hit covers %ld byte(s)", granularity(g));
        if (*total > 0.0)
            fprintf(p->out, " for %.2f%% of %.2f %s\n\n", 100.0 / *total, *total / g->rate,
                    g->dimen);
    } else {
        fprintf(p->out, "\nEach sample counts as %g %s.\n", 1.0 / g->rate, g->dimen);
    }
    if (*total <= 0.0) {
        fputs(" no time accumulated\n\n", p->out);
        *total = 1.0;
    }
    fprintf(p->out, "%5.5s %10.10s %8.8s %8.8s %8.8s %8.8s  %-8.8s\n", "%  ", "cumulative",
            "self  ", "", "self  ", "total ", "");
    fprintf(p->out, "%5.5s %9.9s  %8.8s %8.8s %8.8s %8.8s  %-8.8s\n", "time", g->dimen, g->dimen,
            "calls", unit, unit, "name");
}

static void flat_line(struct pr *p, const struct cg_node *n, double scale, double total,
                      double *accum)
{
    double hz = p->g->rate;
    if (!p->o->show_zeros && n->ncalls == 0 && n->self_time == 0)
        return;
    *accum += n->self_time;
    fprintf(p->out, p->o->bsd ? "%5.1f %10.2f %8.2f" : "%6.2f %9.2f %8.2f",
            total > 0.0 ? 100 * n->self_time / total : 0.0, *accum / hz, n->self_time / hz);
    if (n->ncalls != 0)
        fprintf(p->out, " %8llu %8.2f %8.2f  ", (unsigned long long)n->ncalls,
                scale * n->self_time / hz / (double)n->ncalls,
                scale * (n->self_time + n->child_time) / hz / (double)n->ncalls);
    else
        fprintf(p->out, " %8.8s %8.8s %8.8s  ", "", "", "");
    if (p->o->bsd)
        print_name(p, n);
    else
        fputs(shown(p, n), p->out);
    fputc('\n', p->out);
}

static void flat_blurb(FILE *out)
{
    fputs("\n"
          " % time     share of all samples spent in the function itself\n"
          " cumulative running sum of the self seconds, down the table\n"
          " self       seconds sampled in the function itself (the sort key)\n"
          " calls      times the function was called; blank if never called\n"
          " self/call  self time per call, total/call with its callees' time added\n"
          " name       the function\n\n",
          out);
}

static void print_flat(struct pr *p)
{
    const struct callgraph *g = p->g;
    int *order = malloc((g->nsyms ? g->nsyms : 1) * sizeof *order);
    if (!order)
        return;
    for (size_t i = 0; i < g->nsyms; i++)
        order[i] = (int)i;
    cg_sort(order, g->nsyms, cmp_time, g);
    start_section(p);
    if (!p->o->bsd)
        fputs("Flat profile:\n", p->out);
    size_t k = p->o->bsd ? 5 : flat_log_scale(g, order); /* BSD: always ms/call */
    double total = g->total_time, accum = 0.0;
    flat_header(p, si_tab[k].prefix, &total);
    for (size_t i = 0; i < g->nsyms; i++)
        if (!g->nodes[order[i]].excluded)
            flat_line(p, &g->nodes[order[i]], si_tab[k].scale, total, &accum);
    if (!p->o->brief)
        flat_blurb(p->out);
    free(order);
}

/* ---- call graph ---- */

static int in_same_cycle(const struct callgraph *g, int a, int b)
{
    return g->nodes[a].cyc_num != 0 && g->nodes[b].cyc_num != 0 &&
           g->nodes[a].cyc_num == g->nodes[b].cyc_num;
}

/* Arc order: self calls least, then calls within a cycle (by count), then
 * others by propagated time, then count. */
static int cmp_arc(const struct callgraph *g, int l, int r)
{
    const struct cg_arc *a = &g->arcs[l], *b = &g->arcs[r];
    if (a->parent == a->child)
        return LESSTHAN;
    if (b->parent == b->child)
        return GREATERTHAN;
    int a_in = in_same_cycle(g, a->parent, a->child);
    int b_in = in_same_cycle(g, b->parent, b->child);
    if (a_in != b_in)
        return a_in ? LESSTHAN : GREATERTHAN;
    if (!a_in) {
        double at = a->time + a->child_time, bt = b->time + b->child_time;
        if (at != bt)
            return at < bt ? LESSTHAN : GREATERTHAN;
    }
    if (a->count != b->count)
        return a->count < b->count ? LESSTHAN : GREATERTHAN;
    return EQUALTO;
}

/* Insertion-sorts the arc list starting at FIRST (linked by next_parent if
 * PARENTS, else next_child) into OUT, as gprof does: parents ascending,
 * children descending, a new arc going before its equals.  Returns the
 * number of arcs. */
static size_t sort_arcs(const struct callgraph *g, int first, int parents, int *out)
{
    size_t n = 0;
    for (int a = first; a != CG_NONE;
         a = parents ? g->arcs[a].next_parent : g->arcs[a].next_child) {
        size_t pos = 0;
        while (pos < n) {
            int c = cmp_arc(g, a, out[pos]);
            if (parents ? c != GREATERTHAN : c != LESSTHAN)
                break;
            pos++;
        }
        memmove(out + pos + 1, out + pos, (n - pos) * sizeof *out);
        out[pos] = a;
        n++;
    }
    return n;
}

/* An arc within a cycle or to itself: its count alone (nothing for an
 * arc seen only in stacks, whose count is unknown). */
static void print_arc_count(struct pr *p, const struct cg_arc *a)
{
    if (a->uncounted) {
        fprintf(p->out, "%6.6s %5.5s %7.7s %*.*s %7.7s %7.7s     ", "", "", "", p->cw, p->cw, "",
                "", "");
        return;
    }
    fprintf(p->out, "%6.6s %5.5s %7.7s %*.*s %7llu %7.7s     ", "", "", "", p->cw, p->cw, "",
            (unsigned long long)a->count, "");
}

/* An arc into C: the time it carries, its count and all calls into C. */
static void print_arc_times(struct pr *p, const struct cg_arc *a, const struct cg_node *c)
{
    const struct callgraph *g = p->g;
    if (a->uncounted) { /* seen only in stacks: times measured, no count */
        fprintf(p->out, "%6.6s %5.5s %7.2f %*.2f %7.7s %-7.7s     ", "", "", a->time / g->rate,
                p->cw, a->child_time / g->rate, "", "");
        return;
    }
    fprintf(p->out, "%6.6s %5.5s %7.2f %*.2f %7llu/%-7llu     ", "", "", a->time / g->rate, p->cw,
            a->child_time / g->rate, (unsigned long long)a->count,
            (unsigned long long)g->nodes[c->cyc_head].ncalls);
}

static void print_parents(struct pr *p, int child, int *buf)
{
    const struct callgraph *g = p->g;
    const struct cg_node *c = &g->nodes[child];
    if (c->first_parent == CG_NONE) {
        fprintf(p->out, "%6.6s %5.5s %7.7s %*.*s %7.7s %7.7s     <spontaneous>\n", "", "", "",
                p->cw, p->cw, "", "", "");
        return;
    }
    size_t n = sort_arcs(g, c->first_parent, 1, buf);
    for (size_t i = 0; i < n; i++) {
        const struct cg_arc *a = &g->arcs[buf[i]];
        if (a->parent == child || (c->cyc_num != 0 && g->nodes[a->parent].cyc_num == c->cyc_num))
            print_arc_count(p, a);
        else
            print_arc_times(p, a, c);
        print_name(p, &g->nodes[a->parent]);
        fputc('\n', p->out);
    }
}

static void print_children(struct pr *p, int parent, int *buf)
{
    const struct callgraph *g = p->g;
    const struct cg_node *pn = &g->nodes[parent];
    size_t n = sort_arcs(g, pn->first_child, 0, buf);
    for (size_t i = 0; i < n; i++) {
        const struct cg_arc *a = &g->arcs[buf[i]];
        const struct cg_node *c = &g->nodes[a->child];
        if (a->child == parent || (c->cyc_num != 0 && c->cyc_num == pn->cyc_num))
            print_arc_count(p, a);
        else
            print_arc_times(p, a, c);
        print_name(p, c);
        fputc('\n', p->out);
    }
}

static void print_calls(struct pr *p, const struct cg_node *n, const char *after_self)
{
    fprintf(p->out, " %7llu", (unsigned long long)n->ncalls);
    if (n->self_calls != 0)
        fprintf(p->out, "+%-7llu%s", (unsigned long long)n->self_calls, after_self);
    else
        fprintf(p->out, " %7.7s%s", "", after_self);
}

static void print_primary(struct pr *p, const struct cg_node *n, double print_time)
{
    char buf[32];
    double hz = p->g->rate;
    snprintf(buf, sizeof buf, "[%d]", n->index);
    /* measured: the share of samples with the function on the stack (its
     * inclusive time, as the exports and --json give it), which for a
     * cycle member is more than its self and children (those outside the
     * cycle); estimated: gprof's self + children */
    double shown = p->g->measured ? n->incl_time : n->prop_self + n->prop_child;
    fprintf(p->out, "%-6.6s %5.1f %7.2f %*.2f", buf, 100 * shown / print_time, n->prop_self / hz,
            p->cw, n->prop_child / hz);
    if (n->ncalls + n->self_calls != 0)
        print_calls(p, n, " ");
    else
        fprintf(p->out, " %7.7s %7.7s ", "", "");
    print_name(p, n);
    fputc('\n', p->out);
}

/* Member order within a cycle: total time, then calls, both descending;
 * an insertion sort that puts a member after its equals. */
static size_t sort_members(const struct callgraph *g, const struct cg_node *h, int *out)
{
    size_t n = 0;
    for (int m = h->cyc_next; m != CG_NONE; m = g->nodes[m].cyc_next) {
        const struct cg_node *a = &g->nodes[m];
        double at = a->prop_self + a->prop_child;
        uint64_t ac = a->ncalls + a->self_calls;
        size_t pos = 0;
        for (; pos < n; pos++) {
            const struct cg_node *b = &g->nodes[out[pos]];
            double bt = b->prop_self + b->prop_child;
            uint64_t bc = b->ncalls + b->self_calls;
            if (at > bt || (at == bt && ac > bc))
                break;
        }
        memmove(out + pos + 1, out + pos, (n - pos) * sizeof *out);
        out[pos] = m;
        n++;
    }
    return n;
}

/* The calls of a cycle or of one of its members; blank, with measured
 * times, when no call was counted (a cycle found in the stacks of code
 * without -pg), rather than an invented 0. */
static void print_cycle_calls(struct pr *p, const struct cg_node *n)
{
    if (p->g->measured && n->ncalls + n->self_calls == 0)
        fprintf(p->out, " %7.7s %7.7s", "", "");
    else
        print_calls(p, n, "");
}

static void print_cycle(struct pr *p, const struct cg_node *h, double print_time, int *buf)
{
    char idx[32];
    double hz = p->g->rate;
    snprintf(idx, sizeof idx, "[%d]", h->index);
    fprintf(p->out, "%-6.6s %5.1f %7.2f %*.2f", idx,
            100 * (h->prop_self + h->prop_child) / print_time, h->prop_self / hz, p->cw,
            h->prop_child / hz);
    print_cycle_calls(p, h);
    fprintf(p->out, " <cycle %d as a whole> [%d]\n", h->cyc_num, h->index);
    size_t n = sort_members(p->g, h, buf);
    for (size_t i = 0; i < n; i++) {
        const struct cg_node *m = &p->g->nodes[buf[i]];
        fprintf(p->out, "%6.6s %5.5s %7.2f %*.2f", "", "", m->prop_self / hz, p->cw,
                m->prop_child / hz);
        print_cycle_calls(p, m);
        fputs("     ", p->out);
        print_name(p, m);
        fputc('\n', p->out);
    }
}

static void graph_header(struct pr *p, double *print_time)
{
    start_section(p);
    if (!p->o->bsd)
        fputs("\t\t\tCall graph\n\n", p->out);
    fprintf(p->out, "\ngranularity: each sample hit covers %ld byte(s)", granularity(p->g));
    if (*print_time > 0.0) {
        fprintf(p->out, " for %.2f%% of %.2f seconds\n\n", 100.0 / *print_time,
                *print_time / p->g->rate);
    } else {
        fputs(" no time propagated\n\n", p->out);
        *print_time = 1.0;
    }
    if (p->o->bsd) {
        fprintf(p->out, "%6.6s %5.5s %7.7s %11.11s %7.7s/%-7.7s     %-8.8s\n", "", "", "", "",
                "called", "total", "parents");
        fprintf(p->out, "%-6.6s %5.5s %7.7s %11.11s %7.7s+%-7.7s %-8.8s\t%5.5s\n", "index", "%time",
                "self", "descendants", "called", "self", "name", "index");
        fprintf(p->out, "%6.6s %5.5s %7.7s %11.11s %7.7s/%-7.7s     %-8.8s\n\n", "", "", "", "",
                "called", "total", "children");
    } else {
        fputs("index % time    self  children    called     name\n", p->out);
    }
}

/* The same for times measured from stacks (analysis/stacks.c). */
static void graph_blurb_measured(FILE *out)
{
    fputs("\n"
          "Times measured from the sampled call stacks.  Each entry is one function (or\n"
          "cycle): its callers above it, its callees below.  On the function's own line:\n"
          "[index], % of all samples whose stack holds the function (its inclusive time,\n"
          "each sample counted once however deep the recursion), the seconds sampled in\n"
          "the function itself and in its descendants, and calls from others (+ recursive\n"
          "calls).  On a caller's line: the time spent in the function and its\n"
          "descendants while called from that caller (self, children), and its calls /\n"
          "all calls.  On a callee's line: the same for the callee called from this\n"
          "function.  A blank called column: calls not counted (code built without -pg,\n"
          "such as libc's); the caller and callee were seen in the stacks.  Members of a\n"
          "cycle are shown with <cycle N>; calls among them show counts only, and a\n"
          "member's children are the time it spent in callees outside the cycle.\n\n",
          out);
}

static void graph_blurb(FILE *out)
{
    fputs("\n"
          "Each entry is one function (or cycle): its callers above it, its callees\n"
          "below.  On the function's own line: [index], % of all time spent in it and\n"
          "its descendants, its self and descendants' seconds, and calls from others\n"
          "(+ recursive calls).  On a caller's line: the part of the function's time\n"
          "charged to that caller, and its calls / all calls.  On a callee's line: the\n"
          "callee's time charged to this function, and calls from here / all its calls.\n"
          "Members of a cycle are shown with <cycle N>; calls among them carry no time.\n\n",
          out);
}

static int skip_entry(const struct pr *p, const struct cg_node *n)
{
    if (p->g->dense_index)
        return !n->has_entry;
    if (!n->print_flag)
        return 1;
    size_t i = (size_t)(n - p->g->nodes);
    if (p->o->line_syms && (i >= p->o->line_syms->n || !p->o->line_syms->syms[i].is_func))
        return 1; /* -l: entries only for functions (not for lines, nor cycles) */
    /* measured: every function another entry names as caller or callee
     * has its own entry, so each printed [index] leads somewhere */
    if (p->g->measured && (n->first_parent != CG_NONE || n->first_child != CG_NONE))
        return 0;
    return !p->o->show_zeros && n->ncalls == 0 && n->self_calls == 0 && n->prop_self == 0 &&
           n->prop_child == 0;
}

static void print_graph(struct pr *p)
{
    const struct callgraph *g = p->g;
    size_t total = g->nsyms + g->ncycles;
    int *buf = malloc((g->narcs + g->nsyms + 1) * sizeof *buf);
    if (!buf)
        return;
    double print_time = g->print_time;
    graph_header(p, &print_time);
    for (size_t i = 0; i < total; i++) {
        int id = g->by_total[i];
        const struct cg_node *n = &g->nodes[id];
        if (skip_entry(p, n))
            continue;
        if (!n->name) {
            print_cycle(p, n, print_time, buf);
        } else {
            print_parents(p, id, buf);
            print_primary(p, n, print_time);
            print_children(p, id, buf);
        }
        fputs(p->o->bsd ? "\n-----------------------------------------------\n\n"
                        : "-----------------------------------------------\n",
              p->out);
    }
    if (!p->o->brief) {
        if (g->measured)
            graph_blurb_measured(p->out);
        else
            graph_blurb(p->out);
    }
    free(buf);
}

/* ---- index ---- */

static int cmp_name(int l, int r, const void *ctx)
{
    const struct callgraph *g = ctx;
    return strcmp(g->nodes[l].name, g->nodes[r].name);
}

/* One index entry; returns the updated column count (gprof's reckoning,
 * which leaves out the blanks around the index). */
static int index_entry(struct pr *p, const struct cg_node *n, int col, int start)
{
    char buf[32];
    snprintf(buf, sizeof buf, n->print_flag ? "[%d]" : "(%d)", n->index);
    if (p->o->bsd) {
        char cyc[32];
        if (!n->name)
            snprintf(cyc, sizeof cyc, "<cycle %d>", n->cyc_num);
        fprintf(p->out, "%6.6s %-19.19s", buf, n->name ? esc_text(n->name) : cyc);
        return col;
    }
    col += (int)strlen(buf);
    for (; col < start + 5; ++col)
        fputc(' ', p->out);
    fprintf(p->out, " %s ", buf);
    if (n->name) {
        const char *name = shown(p, n);
        fputs(name, p->out);
        col += (int)strlen(name);
        if (n->file && !p->o->line_syms) {
            const char *file = esc_text(n->file);
            fprintf(p->out, " (%s)", file);
            col += (int)strlen(file) + 3;
        }
    } else {
        col += fprintf(p->out, "<cycle %d>", n->cyc_num);
    }
    return col;
}

static void print_index(struct pr *p)
{
    const struct callgraph *g = p->g;
    int *names = malloc((g->nsyms + g->ncycles + 1) * sizeof *names);
    if (!names)
        return;
    size_t nnames = 0, todo;
    for (size_t i = 0; i < g->nsyms; i++)
        if (p->o->show_zeros || g->nodes[i].ncalls != 0 || g->nodes[i].self_time != 0 ||
            (g->measured && g->nodes[i].print_flag && !skip_entry(p, &g->nodes[i])) ||
            (g->dense_index && g->nodes[i].has_entry))
            names[nnames++] = (int)i;
    cg_sort(names, nnames, cmp_name, g);
    todo = nnames;
    for (size_t k = 0; k < g->ncycles; k++)
        names[todo++] = (int)(g->nsyms + k);
    fputs("\f\nIndex by function name\n\n", p->out);
    size_t rows = (todo + 2) / 3;
    int width = ((p->o->width > 0 ? p->o->width : 80) - 1) / 3; /* not the last column */
    for (size_t i = 0; i < rows; i++) {
        int col = 0, start = 0;
        for (size_t j = i; j < todo; j += rows) {
            col = index_entry(p, &g->nodes[names[j]], col, start);
            start += width;
        }
        fputc('\n', p->out);
    }
    free(names);
}

void gprof_text_print(FILE *out, const struct callgraph *g, const struct gprof_text_opts *o)
{
    struct pr p = {out, g, o, !o->after_info, NULL, o->bsd ? 11 : 7};
    if (((o->demangle && !o->bsd) || o->line_syms) && g->nsyms > 0) {
        p.shown = calloc(g->nsyms, sizeof *p.shown);
        for (size_t i = 0; p.shown && i < g->nsyms; i++) {
            p.shown[i] = o->demangle && !o->bsd ? gprof_text_demangle(g->nodes[i].name) : NULL;
            if (o->line_syms && i < o->line_syms->n && o->line_syms->syms[i].file)
                p.shown[i] = with_line(p.shown[i], g->nodes[i].name, &o->line_syms->syms[i],
                                       o->line_addr_mask);
        }
    }
    if (o->bsd) {
        if (o->graph)
            print_graph(&p);
        if (o->flat)
            print_flat(&p);
    } else {
        if (o->flat)
            print_flat(&p);
        if (o->graph)
            print_graph(&p);
    }
    if (o->graph)
        print_index(&p);
    for (size_t i = 0; p.shown && i < g->nsyms; i++)
        free(p.shown[i]);
    free(p.shown);
}

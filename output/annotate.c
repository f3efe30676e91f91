/* gprof -A: source files printed with the execution count of each function's (or line's) start.
 *
 * Each symbol with a source position marks its line; several symbols on
 * one line are added up.  A line that starts a function shows the
 * function's calls, "count -> " right-aligned in 16 columns ("##### -> "
 * below -m); with -x every line after one with a count shows the last
 * count too.  Each file ends with its "Top N Lines" and a summary.  Files
 * come in the reverse of the order gprof first meets them: function
 * symbols in symbol-table order, then line symbols by address -- gprof
 * keeps its source files in a list it prepends to.  With -y each file
 * goes to FILE-ann in the current directory instead.
 */
#include "annotate.h"
#include "callgraph.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 16

/* A line's entry: the first symbol on it (its blocks, and its address,
 * which gprof zeroes once a second symbol joins), and the calls of all. */
struct entry {
    int used;
    int is_func;
    unsigned line;
    uint64_t ncalls;
    uint64_t addr;
    const struct bb_slots *bb;
};

struct sfile {
    const char *name;
    unsigned num_lines;
    uint64_t ncalls;
    struct entry *lines;
};

static const struct bb_slots no_bbs;

struct state {
    const struct annotate_opts *o;
    unsigned long last_count; /* gprof keeps it from line to line, file to file */
    long executable, executed;
    int first_file, printed;
};

static int cmp_order(int a, int b, const void *ctx)
{
    const struct symtab *pos = ctx;
    size_t x = pos->syms[a].order, y = pos->syms[b].order;
    return x < y ? -1 : x > y;
}

/* gprof's annotation of LINE (1-based) of F into BUF (WIDTH wide): the
 * function's calls where one starts, then the line's block counts; with
 * -x repeated counts are left out and a line without one repeats the
 * last count. */
static void annotation(struct state *s, const struct sfile *f, unsigned line, char *buf)
{
    const struct entry *e = line <= f->num_lines ? &f->lines[line - 1] : NULL;
    memset(buf, ' ', WIDTH);
    buf[WIDTH] = '\0';
    if (!e || !e->used)
        return;
    s->executable++;
    const struct bb_slots *bb = e->bb ? e->bb : &no_bbs;
    int all = s->o->all_lines, set = 0;
    char tmp[BB_PER_SYM * 24 + 64];
    size_t len = 0;
    unsigned long n = 0, last_print = (unsigned long)-1;
    tmp[0] = '\0';
    if (e->is_func) {
        n = e->ncalls;
        len += (size_t)sprintf(tmp + len, "%lu", n);
        s->last_count = last_print = n;
        set = 1;
    } else if (all && bb->addr[0] && bb->addr[0] > e->addr) {
        len += (size_t)sprintf(tmp + len, "%lu", s->last_count);
        n = last_print = s->last_count;
        set = 1;
    }
    for (int i = 0; i < BB_PER_SYM && bb->addr[i]; i++) {
        s->last_count = bb->calls[i];
        if (!set) {
            n = 0;
            set = 1;
        }
        n += s->last_count;
        if (all && s->last_count == last_print)
            continue;
        if (len > 0)
            tmp[len++] = ',';
        len += (size_t)sprintf(tmp + len, "%lu", s->last_count);
        last_print = s->last_count;
    }
    if (all && len == 0) {
        len += (size_t)sprintf(tmp + len, "%lu", s->last_count);
        n = s->last_count;
        set = 1;
    }
    if (!set)
        return;
    s->executed++;
    if (n < s->o->min_calls)
        len = (size_t)sprintf(tmp, "#####");
    strcpy(tmp + len, " -> ");
    len += 4;
    if (len >= WIDTH)
        memcpy(buf, tmp, WIDTH);
    else
        memcpy(buf + WIDTH - len, tmp, len);
}

/* gprof's search for a source: its path, else each -I directory with the
 * path (relative ones), else each with the base name. */
static FILE *open_source(const struct annotate_opts *o, const char *name, const char *prog)
{
    FILE *f = fopen(name, "rb");
    const char *base = strrchr(name, '/');
    for (int pass = name[0] == '/' ? 1 : 0; !f && pass < 2; pass++) {
        const char *tail = pass ? (base ? base + 1 : NULL) : name;
        for (size_t i = 0; tail && !f && i < o->ndirs; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", o->dirs[i], tail);
            f = fopen(path, "rb");
        }
    }
    if (!f) {
        if (errno == ENOENT)
            fprintf(stderr, "%s: could not locate `%s'\n", prog, name);
        else
            fprintf(stderr, "%s: %s: %s\n", prog, name, strerror(errno));
    }
    return f;
}

/* Top N Lines order: more calls first, then by line; empty lines last. */
static int cmp_calls(int a, int b, const void *ctx)
{
    const struct entry *l = ctx;
    if (a < 0 || !l[a].used)
        return 1;
    if (b < 0 || !l[b].used)
        return -1;
    if (l[a].ncalls != l[b].ncalls)
        return l[a].ncalls < l[b].ncalls ? 1 : -1;
    return (int)l[a].line - (int)l[b].line;
}

static void summary(struct state *s, FILE *out, const struct sfile *f)
{
    if (s->o->table_len > 0) {
        fprintf(out, "\n\nTop %d Lines:\n\n     Line      Count\n\n", s->o->table_len);
        int *idx = malloc((f->num_lines ? f->num_lines : 1) * sizeof *idx);
        if (idx) {
            for (unsigned i = 0; i < f->num_lines; i++)
                idx[i] = (int)i;
            cg_sort(idx, f->num_lines, cmp_calls, f->lines);
            unsigned n =
                (unsigned)s->o->table_len < f->num_lines ? (unsigned)s->o->table_len : f->num_lines;
            for (unsigned i = 0; i < n; i++) {
                const struct entry *e = &f->lines[idx[i]];
                if (!e->used || e->ncalls == 0)
                    break;
                fprintf(out, "%9u %10llu\n", e->line, (unsigned long long)e->ncalls);
            }
            free(idx);
        }
    }
    fprintf(out, "\nExecution Summary:\n\n");
    fprintf(out, "%9ld   Executable lines in this file\n", s->executable);
    fprintf(out, "%9ld   Lines executed\n", s->executed);
    fprintf(out, "%9.2f   Percent of the file executed\n",
            s->executable ? 100.0 * (double)s->executed / (double)s->executable : 100.0);
    fprintf(out, "\n%9llu   Total number of line executions\n", (unsigned long long)f->ncalls);
    fprintf(out, "%9.2f   Average executions per line\n",
            s->executable ? (double)f->ncalls / (double)s->executable : 0.0);
}

static void annotate_file(struct state *s, FILE *out, const struct sfile *f, const char *prog)
{
    FILE *in = open_source(s->o, f->name, prog);
    if (!in)
        return;
    FILE *o = out;
    if (s->o->to_files) {
        const char *base = strrchr(f->name, '/');
        char path[4096];
        snprintf(path, sizeof path, "%s-ann", base ? base + 1 : f->name);
        if (!(o = fopen(path, "w"))) {
            fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
            fclose(in);
            return;
        }
    } else {
        if (!s->first_file)
            fputc('\n', o);
        s->first_file = 0;
        if (s->printed)
            fputs("\f\n", o);
        s->printed = 1;
        fprintf(o, "*** File %s:\n", f->name);
    }
    s->executable = s->executed = 0;
    char buf[WIDTH + 1];
    unsigned line = 1;
    int c, at_start = 1;
    while ((c = getc(in)) != EOF) {
        if (at_start) {
            annotation(s, f, line++, buf);
            fputs(buf, o);
        }
        at_start = c == '\n';
        putc(c, o);
    }
    fclose(in);
    summary(s, o, f);
    if (o != out)
        fclose(o);
}

int annotate_print(FILE *out, const struct symtab *pos, const uint64_t *ncalls,
                   const struct bb_slots *bbs, const struct annotate_opts *o, const char *prog)
{
    int *by_order = malloc((pos->n ? pos->n : 1) * sizeof *by_order);
    struct sfile *files = calloc(pos->n ? pos->n : 1, sizeof *files);
    size_t nfiles = 0;
    int rc = by_order && files ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < pos->n; i++)
        by_order[i] = (int)i;
    if (rc == 0)
        cg_sort(by_order, pos->n, cmp_order, pos);
    /* the files, as first met; f_of[i] is symbol i's */
    size_t *f_of = rc == 0 ? malloc((pos->n ? pos->n : 1) * sizeof *f_of) : NULL;
    if (!f_of)
        rc = -1;
    for (size_t k = 0; rc == 0 && k < pos->n; k++) {
        const struct symtab_sym *s = &pos->syms[by_order[k]];
        if (!s->file)
            continue;
        size_t j = 0;
        while (j < nfiles && strcmp(files[j].name, s->file) != 0)
            j++;
        if (j == nfiles)
            files[nfiles++].name = s->file;
        f_of[by_order[k]] = j;
        if (s->line > files[j].num_lines)
            files[j].num_lines = s->line;
    }
    for (size_t j = 0; rc == 0 && j < nfiles; j++)
        if (!(files[j].lines =
                  calloc(files[j].num_lines ? files[j].num_lines : 1, sizeof *files[j].lines)))
            rc = -1;
    for (size_t i = 0; rc == 0 && i < pos->n; i++) {
        const struct symtab_sym *s = &pos->syms[i];
        if (!s->file || s->line == 0)
            continue;
        struct sfile *f = &files[f_of[i]];
        struct entry *e = &f->lines[s->line - 1];
        f->ncalls += ncalls[i];
        if (!e->used) {
            *e = (struct entry){1, s->is_func, s->line, ncalls[i], s->addr, bbs ? &bbs[i] : NULL};
        } else {
            e->ncalls += ncalls[i];
            e->addr = 0;
        }
    }
    struct state st = {o, 0, 0, 0, 1, o->printed_before};
    for (size_t j = nfiles; rc == 0 && j-- > 0;)
        if (files[j].num_lines && (o->show_zeros || files[j].ncalls != 0))
            annotate_file(&st, out, &files[j], prog);
    for (size_t j = 0; files && j < nfiles; j++)
        free(files[j].lines);
    free(files);
    free(f_of);
    free(by_order);
    return rc;
}

/* gprof's order for -C: by file and line when both have a file, else
 * by address (not a total order; the merge sort settles it as gprof's). */
static int cmp_exec(int a, int b, const void *ctx)
{
    const struct symtab_sym *l = &((const struct symtab *)ctx)->syms[a];
    const struct symtab_sym *r = &((const struct symtab *)ctx)->syms[b];
    if (l->file && r->file) {
        int c = strcmp(l->file, r->file);
        if (c)
            return c;
        if (l->line != r->line)
            return (int)l->line - (int)r->line;
    }
    return l->addr < r->addr ? -1 : l->addr > r->addr;
}

void annotate_exec_counts(FILE *out, const struct symtab *pos, const uint64_t *ncalls,
                          const struct bb_slots *bbs, int show_zeros, int printed_before)
{
    if (printed_before)
        fputs("\f\n", out);
    int *idx = malloc((pos->n ? pos->n : 1) * sizeof *idx);
    if (!idx)
        return;
    for (size_t i = 0; i < pos->n; i++)
        idx[i] = (int)i;
    cg_sort(idx, pos->n, cmp_exec, pos);
    for (size_t k = 0; k < pos->n; k++) {
        const struct symtab_sym *s = &pos->syms[idx[k]];
        const char *file = s->file ? s->file : "<unknown>";
        if (ncalls[idx[k]] > 0 || show_zeros)
            fprintf(out, "%s:%u: (%s:0x%llx) %llu executions\n", file, s->line, s->name,
                    (unsigned long long)s->addr, (unsigned long long)ncalls[idx[k]]);
        for (int j = 0; bbs && j < BB_PER_SYM && bbs[idx[k]].addr[j]; j++)
            if (bbs[idx[k]].calls[j] > 0 || show_zeros)
                fprintf(out, "%s:%u: (%s:0x%llx) %llu executions\n", file, s->line, s->name,
                        (unsigned long long)bbs[idx[k]].addr[j],
                        (unsigned long long)bbs[idx[k]].calls[j]);
    }
    free(idx);
}

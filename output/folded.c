/* Folded stacks (cgprof export -f folded): one line per distinct stack,
 * outermost function first, "main;mid;leaf COUNT", the format of
 * flamegraph.pl's stackcollapse scripts, which speedscope and inferno
 * read too.  COUNT is in samples (events for a counting event); a
 * profile without stacks gives one-frame lines, each function's own
 * samples. */
#include "escape.h"
#include "export.h"

#include <math.h>
#include <stdlib.h>

/* A name as one frame: ';' separates frames, and control characters
 * (a newline ends the line) are written as \xHH. */
static void put_frame(FILE *out, const char *s)
{
    for (s = esc_text(s); *s; s++)
        fputc(*s == ';' ? ':' : *s, out);
}

static void put_path(FILE *out, const struct ex_model *m, const struct ex_fnode *t, int i)
{
    if (t[i].parent >= 0) {
        put_path(out, m, t, t[i].parent);
        fputc(';', out);
    }
    put_frame(out, ex_name(m, t[i].func));
}

int ex_write_folded(FILE *out, const struct ex_model *m)
{
    struct ex_fnode *t;
    size_t n;
    if (ex_func_tree(m, &t, &n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        double c = llround(t[i].self);
        if (c <= 0)
            continue;
        put_path(out, m, t, (int)i);
        fprintf(out, " %.0f\n", c);
    }
    free(t);
    return ferror(out) ? -1 : 0;
}

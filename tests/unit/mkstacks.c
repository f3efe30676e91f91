/* mkstacks: makes a cgprof profile with a STACKS record of known stacks,
 * for the export tests (t0500), from a profile recorded from a real -pg
 * program (its modules, arcs and event stay as recorded).
 *
 *   mkstacks IN OUT <SPEC
 *
 * SPEC has one stack a line, "COUNT outer;...;leaf", function names of
 * the main executable (clones such as "f.part.0" and PLT stubs such as
 * "free@plt" too), outermost first; "[truncated]" as the first frame
 * stands for frames cut at the depth limit.  OUT gets SAMPLES at the
 * leaves' pcs and a STACKS tree whose node counts are exactly SPEC's, and
 * TOTALS to match; the arcs from outside the executable (libc's call of
 * main) are left out, as SPEC's stacks start in it.  A leaf frame's address is inside its function
 * (entry
 * + 2), a caller's is where a return address minus one would be (entry +
 * 4), as the runtime writes them. */
#include "cgdata.h"
#include "symtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 4096

struct node {
    uint32_t parent, module;
    uint64_t addr, count;
};

static struct node nodes[MAXN];
static size_t nn;

static uint32_t find_or_add(uint32_t parent, uint32_t module, uint64_t addr)
{
    for (size_t i = 0; i < nn; i++)
        if (nodes[i].parent == parent && nodes[i].module == module && nodes[i].addr == addr)
            return (uint32_t)i;
    if (nn == MAXN) {
        fprintf(stderr, "mkstacks: too many nodes\n");
        exit(1);
    }
    nodes[nn] = (struct node){parent, module, addr, 0};
    return (uint32_t)nn++;
}

static uint64_t sym_addr(const struct symtab *st, const char *name)
{
    for (size_t i = 0; i < st->n; i++)
        if (strcmp(st->syms[i].name, name) == 0)
            return st->syms[i].addr;
    fprintf(stderr, "mkstacks: no function %s\n", name);
    exit(1);
}

static void put(FILE *f, const void *p, size_t n)
{
    if (fwrite(p, 1, n, f) != n) {
        perror("mkstacks");
        exit(1);
    }
}

static void put32(FILE *f, uint32_t v)
{
    put(f, &v, 4);
}

static void put64(FILE *f, uint64_t v)
{
    put(f, &v, 8);
}

static void record(FILE *f, uint32_t tag, uint64_t size)
{
    put32(f, tag);
    put32(f, 0);
    put64(f, size);
}

int main(int argc, char **argv)
{
    char err[512];
    struct cgdata d;
    struct symtab st;
    if (argc != 3) {
        fprintf(stderr, "usage: mkstacks IN OUT <SPEC\n");
        return 2;
    }
    if (cgdata_read(&d, argv[1], err, sizeof err) != 0) {
        fprintf(stderr, "mkstacks: %s\n", err);
        return 1;
    }
    const struct cgdata_module *main_mod = NULL;
    for (size_t i = 0; i < d.nmodules; i++)
        if (d.modules[i].flags & CGDATA_MOD_MAIN)
            main_mod = &d.modules[i];
    if (!main_mod || symtab_load_flags(&st, main_mod->path, SYMTAB_PLT | SYMTAB_ANY_NAME, err,
                                       sizeof err) != 0) {
        fprintf(stderr, "mkstacks: no executable: %s\n", main_mod ? err : "");
        return 1;
    }
    char line[4096];
    uint64_t total = 0, cut = 0;
    while (fgets(line, sizeof line, stdin)) {
        char *sp = strchr(line, ' ');
        if (!sp)
            continue;
        *sp = '\0';
        uint64_t count = strtoull(line, NULL, 10);
        char *frames = sp + 1;
        frames[strcspn(frames, "\n")] = '\0';
        uint32_t parent = CGDATA_NO_PARENT;
        for (char *save, *fn = strtok_r(frames, ";", &save); fn; fn = strtok_r(NULL, ";", &save)) {
            int leaf = save == NULL || *save == '\0';
            if (strcmp(fn, "[truncated]") == 0) {
                parent = find_or_add(parent, CGDATA_CUT_MODULE, 0);
                cut += count;
                continue;
            }
            parent = find_or_add(parent, main_mod->id, sym_addr(&st, fn) + (leaf ? 2 : 4));
        }
        nodes[parent].count += count;
        total += count;
    }
    FILE *out = fopen(argv[2], "wb");
    if (!out) {
        perror(argv[2]);
        return 1;
    }
    put(out, d.buf, 16);
    for (size_t pos = 16; pos + 16 <= d.len;) {
        uint32_t tag;
        uint64_t size;
        memcpy(&tag, d.buf + pos, 4);
        memcpy(&size, d.buf + pos + 8, 8);
        /* the runtime's own samples, arcs, totals and stacks go; END comes last */
        if (tag != 3 && tag != 4 && tag != 5 && tag != 8 && tag != 255)
            put(out, d.buf + pos, 16 + size);
        pos += 16 + size;
    }
    size_t narcs = 0;
    for (size_t i = 0; i < d.narcs; i++)
        narcs += d.arcs[i].from_module == main_mod->id;
    record(out, 4, 8 + 32 * narcs);
    put64(out, narcs);
    for (size_t i = 0; i < d.narcs; i++)
        if (d.arcs[i].from_module == main_mod->id) {
            put32(out, d.arcs[i].from_module);
            put32(out, d.arcs[i].self_module);
            put64(out, d.arcs[i].from_addr);
            put64(out, d.arcs[i].self_addr);
            put64(out, d.arcs[i].count);
        }
    size_t nleaves = 0;
    for (size_t i = 0; i < nn; i++)
        nleaves += nodes[i].count > 0;
    record(out, 3, 8 + 24 * nleaves);
    put64(out, nleaves);
    for (size_t i = 0; i < nn; i++)
        if (nodes[i].count) {
            put32(out, nodes[i].module);
            put32(out, 0);
            put64(out, nodes[i].addr);
            put64(out, nodes[i].count);
        }
    record(out, 8, 40 + 24 * nn);
    put32(out, 1);
    put32(out, 0);
    put64(out, nn);
    put64(out, 64);
    put64(out, cut);
    put64(out, 0); /* lost */
    for (size_t i = 0; i < nn; i++) {
        put32(out, nodes[i].parent);
        put32(out, nodes[i].module);
        put64(out, nodes[i].addr);
        put64(out, nodes[i].count);
    }
    record(out, 5, 40);
    put64(out, total);
    put64(out, 0);
    put64(out, d.total_calls);
    put64(out, 0);
    put64(out, 0);
    record(out, 255, 0); /* END */
    if (fclose(out) != 0) {
        perror(argv[2]);
        return 1;
    }
    symtab_free(&st);
    cgdata_free(&d);
    return 0;
}

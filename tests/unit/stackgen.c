/* stackgen: test helper that writes a cgprof profile with chosen stacks,
 * samples and call counts for a real program (built by tests/t0262), so
 * that the measured times the report should print are known exactly.
 *
 *   stackgen OUT [nostacks] <SPEC
 *
 * SPEC, one directive a line ('#' starts a comment):
 *   rate HZ                       samples per second (INFO), default 1000
 *   module ID FLAGS PATH          a MODULE record (FLAGS 1: the executable)
 *   sym ID NAME HEXADDR           NAME's link-time address in module ID
 *                                 (from nm), for the frames below
 *   arc FROM TO COUNT             a counted call arc (ARCS)
 *   stack COUNT FRAME... [cut]    COUNT samples with this stack, leaf
 *                                 first; "cut" marks frames dropped at the
 *                                 depth limit
 *   depth N                       the depth limit written in STACKS
 *   lost N FRAME                  N samples at FRAME whose stack was not
 *                                 kept: in SAMPLES, counted as lost in STACKS
 * A FRAME or arc end is NAME (module 1) or ID:NAME.  Each frame's address
 * is 1 byte into the function; the leaf's pc is the sample's.  SAMPLES
 * holds the leaves' counts, so STACKS and SAMPLES agree; with nostacks the
 * STACKS record is left out (the same profile as recorded without stacks).
 *
 * The writer here is deliberately separate from the runtime's: it follows
 * docs/profile-format.md and trusts its input, which the tests write.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN    4096
#define CUT_MOD 0xFFFFFFFEu
#define NO_PAR  0xFFFFFFFFu

struct sym {
    uint32_t mod;
    char name[128];
    uint64_t addr;
};
struct module {
    uint32_t id, flags;
    char path[512];
};
struct node {
    uint32_t parent, mod;
    uint64_t addr, count;
};
struct arc {
    uint32_t fm, tm;
    uint64_t fa, ta, count;
};

static struct sym syms[1 << 16];
static size_t nsyms;
static struct module mods[16];
static size_t nmods;
static struct node nodes[MAXN];
static size_t nnodes;
static struct arc arcs[MAXN];
static size_t narcs;
static uint64_t rate = 1000, depth = 1024, cut, lost;
static uint32_t lost_mod;
static uint64_t lost_addr;

static void die(const char *what, const char *arg)
{
    fprintf(stderr, "stackgen: %s: %s\n", what, arg);
    exit(2);
}

/* A frame named NAME or ID:NAME: its module and an address inside it. */
static void resolve(const char *spec, uint32_t *mod, uint64_t *addr)
{
    uint32_t m = 1;
    const char *colon = strchr(spec, ':');
    if (colon && colon - spec <= 2) {
        m = (uint32_t)atoi(spec);
        spec = colon + 1;
    }
    for (size_t i = 0; i < nsyms; i++)
        if (syms[i].mod == m && strcmp(syms[i].name, spec) == 0) {
            *mod = m;
            *addr = syms[i].addr + 1;
            return;
        }
    die("no such symbol", spec);
}

/* The node for (PARENT, MOD, ADDR), made if new. */
static uint32_t child(uint32_t parent, uint32_t mod, uint64_t addr)
{
    for (size_t i = 0; i < nnodes; i++)
        if (nodes[i].parent == parent && nodes[i].mod == mod && nodes[i].addr == addr)
            return (uint32_t)i;
    if (nnodes == MAXN)
        die("too many nodes", "stack");
    nodes[nnodes] = (struct node){parent, mod, addr, 0};
    return (uint32_t)nnodes++;
}

static void add_stack(char *rest)
{
    static char *tok[4096];
    int n = 0;
    uint64_t count = strtoull(strtok(rest, " \t\n"), NULL, 10);
    for (char *t; n < 4096 && (t = strtok(NULL, " \t\n"));)
        tok[n++] = t;
    uint32_t at = NO_PAR;
    int k = n - 1;
    if (k >= 0 && strcmp(tok[k], "cut") == 0) {
        at = child(NO_PAR, CUT_MOD, 0);
        cut += count;
        k--;
    }
    for (; k >= 0; k--) { /* outermost first */
        uint32_t m;
        uint64_t a;
        resolve(tok[k], &m, &a);
        at = child(at, m, a);
    }
    if (at == NO_PAR)
        die("empty stack", "stack");
    nodes[at].count += count;
}

static void parse(FILE *in)
{
    static char line[1 << 16];
    while (fgets(line, sizeof line, in)) {
        char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == '\0')
            continue;
        char word[16] = "";
        int used = 0;
        sscanf(p, "%15s %n", word, &used);
        char *rest = p + used;
        if (strcmp(word, "rate") == 0) {
            rate = strtoull(rest, NULL, 10);
        } else if (strcmp(word, "depth") == 0) {
            depth = strtoull(rest, NULL, 10);
        } else if (strcmp(word, "module") == 0) {
            struct module *m = &mods[nmods++];
            if (sscanf(rest, "%u %u %511s", &m->id, &m->flags, m->path) != 3)
                die("bad module line", rest);
        } else if (strcmp(word, "sym") == 0) {
            struct sym *s = &syms[nsyms];
            if (sscanf(rest, "%u %127s %lx", &s->mod, s->name, &s->addr) == 3 &&
                nsyms + 1 < sizeof syms / sizeof syms[0])
                nsyms++;
        } else if (strcmp(word, "arc") == 0) {
            char from[160], to[160];
            struct arc *a = &arcs[narcs++];
            if (sscanf(rest, "%159s %159s %lu", from, to, &a->count) != 3)
                die("bad arc line", rest);
            resolve(from, &a->fm, &a->fa);
            resolve(to, &a->tm, &a->ta);
            a->ta--; /* a callee's arc end is its entry */
        } else if (strcmp(word, "lost") == 0) {
            char at[160];
            if (sscanf(rest, "%lu %159s", &lost, at) != 2)
                die("bad lost line", rest);
            resolve(at, &lost_mod, &lost_addr);
        } else if (strcmp(word, "stack") == 0) {
            add_stack(rest);
        } else {
            die("unknown directive", word);
        }
    }
}

/* ---- writing ---- */

static unsigned char out[1 << 22];
static size_t len;

static void put(const void *p, size_t n)
{
    if (len + n > sizeof out)
        die("profile too large", "out");
    memcpy(out + len, p, n);
    len += n;
}
static void put32(uint32_t v)
{
    put(&v, 4);
}
static void put64(uint64_t v)
{
    put(&v, 8);
}

/* Starts a record; returns where its size goes. */
static size_t begin(uint32_t tag)
{
    put32(tag);
    put32(0);
    size_t at = len;
    put64(0);
    return at;
}
static void end(size_t at)
{
    while ((len - at - 8) % 8)
        out[len++] = 0;
    uint64_t size = len - at - 8;
    memcpy(out + at, &size, 8);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        die("usage", "stackgen OUT [nostacks] <SPEC");
    int stacks = !(argc > 2 && strcmp(argv[2], "nostacks") == 0);
    parse(stdin);
    put("\x89"
        "CGPROF\n",
        8);
    put32(1);
    put32(16);
    size_t r = begin(1); /* INFO */
    put64(4242);
    put64(rate);
    put64(1000000000 / rate);
    put32(0);
    put32(1);
    put32(3);
    put("cpu", 3);
    end(r);
    for (size_t i = 0; i < nmods; i++) {
        r = begin(2); /* MODULE */
        put32(mods[i].id);
        put32(mods[i].flags);
        put64(0);
        put64(0);
        put64(0);
        put32(0);
        put32((uint32_t)strlen(mods[i].path));
        put(mods[i].path, strlen(mods[i].path));
        end(r);
    }
    uint64_t total = 0, nleaves = 0;
    for (size_t i = 0; i < nnodes; i++)
        if (nodes[i].count) {
            nleaves++;
            total += nodes[i].count;
        }
    r = begin(3); /* SAMPLES: one per leaf, and the lost ones */
    put64(nleaves + (lost ? 1 : 0));
    if (lost) {
        put32(lost_mod);
        put32(0);
        put64(lost_addr);
        put64(lost);
        total += lost;
    }
    for (size_t i = 0; i < nnodes; i++)
        if (nodes[i].count) {
            put32(nodes[i].mod == CUT_MOD ? 0xFFFFFFFFu : nodes[i].mod);
            put32(0);
            put64(nodes[i].addr);
            put64(nodes[i].count);
        }
    end(r);
    r = begin(4); /* ARCS */
    put64(narcs);
    uint64_t calls = 0;
    for (size_t i = 0; i < narcs; i++) {
        put32(arcs[i].fm);
        put32(arcs[i].tm);
        put64(arcs[i].fa);
        put64(arcs[i].ta);
        put64(arcs[i].count);
        calls += arcs[i].count;
    }
    end(r);
    if (stacks) {
        r = begin(8); /* STACKS */
        put32(1);
        put32(0);
        put64(nnodes);
        put64(depth);
        put64(cut);
        put64(lost);
        for (size_t i = 0; i < nnodes; i++) {
            put32(nodes[i].parent);
            put32(nodes[i].mod);
            put64(nodes[i].addr);
            put64(nodes[i].count);
        }
        end(r);
    }
    r = begin(5); /* TOTALS */
    put64(total);
    put64(0);
    put64(calls);
    put64(0);
    put64(0);
    end(r);
    end(begin(255)); /* END */
    FILE *f = fopen(argv[1], "wb");
    if (!f || fwrite(out, 1, len, f) != len || fclose(f) != 0)
        die("cannot write", argv[1]);
    return 0;
}

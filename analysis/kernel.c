/* Kernel frames (cgprof record --kernel): the stacks of samples taken in
 * the kernel carry the kernel's own frames above the user frame that
 * entered it (read -> ksys_read -> vfs_read ...).  They are kept as
 * frames of no module at their kernel addresses (top 16 bits set), and
 * named from /proc/kallsyms of the boot that recorded them.
 *
 * By default the report leaves them out (cgdata_kernel_frames with KEEP
 * 0): a kernel frame's samples go back to the user frame it was entered
 * from, and the report is what it would be without --kernel.  With
 * `report --kernel` they stay, and the kernel's functions get their own
 * self time: each such sample moves, in SAMPLES, from its user pc to its
 * kernel leaf. */
#include "kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_kernel(const struct cgdata_stack_node *x)
{
    return CGDATA_IS_KERNEL(x->module, x->addr);
}

/* The nearest ancestor of node I that is not a kernel frame, or
 * CGDATA_NO_PARENT. */
static uint32_t user_frame(const struct cgdata *d, uint32_t i)
{
    while (i != CGDATA_NO_PARENT && is_kernel(&d->stacks[i]))
        i = d->stacks[i].parent;
    return i;
}

static int by_place(const void *a, const void *b)
{
    const struct cgdata_sample *x = a, *y = b;
    if (x->module != y->module)
        return x->module < y->module ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Moves the samples taken in the kernel from their user pcs to their
 * kernel leaves in D's SAMPLES. */
static int move_samples(struct cgdata *d)
{
    size_t extra = 0;
    for (size_t i = 0; i < d->nstacks; i++)
        extra += is_kernel(&d->stacks[i]) && d->stacks[i].count > 0;
    if (!extra)
        return 0;
    struct cgdata_sample *s = realloc(d->samples, (d->nsamples + extra) * sizeof *s);
    if (!s)
        return -1;
    d->samples = s;
    size_t n = d->nsamples;
    qsort(d->samples, n, sizeof *d->samples, by_place);
    for (size_t i = 0; i < d->nstacks; i++) {
        const struct cgdata_stack_node *x = &d->stacks[i];
        if (!is_kernel(x) || x->count == 0)
            continue;
        uint64_t c = 0; /* moved only from where it is: the total stays */
        uint32_t u = user_frame(d, (uint32_t)i);
        if (u != CGDATA_NO_PARENT) {
            struct cgdata_sample key = {d->stacks[u].module, d->stacks[u].addr, 0};
            struct cgdata_sample *at = bsearch(&key, d->samples, n, sizeof key, by_place);
            if (at) { /* the user pc the thread entered the kernel from */
                uint64_t take = at->count < x->count ? at->count : x->count;
                at->count -= take;
                c = take;
            }
        }
        if (c)
            d->samples[d->nsamples++] = (struct cgdata_sample){x->module, x->addr, c};
    }
    return 0;
}

/* Takes the kernel frames out of D's tree. */
static int drop_frames(struct cgdata *d)
{
    size_t n = d->nstacks, k = 0;
    uint32_t *map = malloc((n ? n : 1) * sizeof *map);
    if (!map)
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct cgdata_stack_node x = d->stacks[i];
        uint32_t p = x.parent == CGDATA_NO_PARENT ? CGDATA_NO_PARENT : map[x.parent];
        if (is_kernel(&x)) {
            uint32_t u = user_frame(d, (uint32_t)i);
            if (u != CGDATA_NO_PARENT) {
                /* its samples are the user frame's, as without --kernel */
                map[i] = map[u];
                d->stacks[map[u]].count += x.count;
                continue;
            }
            x.addr = 0; /* no user frame at all: "[unknown]" */
        }
        x.parent = p;
        map[i] = (uint32_t)k;
        d->stacks[k++] = x;
    }
    d->nstacks = k;
    free(map);
    return 0;
}

int cgdata_kernel_frames(struct cgdata *d, int keep)
{
    int any = 0;
    for (size_t i = 0; i < d->nstacks && !any; i++)
        any = is_kernel(&d->stacks[i]);
    if (!any)
        return 0;
    return keep ? move_samples(d) : drop_frames(d);
}

struct ksym {
    uint64_t addr;
    char *name;
};

static int by_ksym(const void *a, const void *b)
{
    const struct ksym *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_u64(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

int kernel_symbols(const struct cgdata *d, const char *kallsyms, const char *boot_id_file,
                   struct kernel_sym **out, size_t *nout, char *why, size_t whysz)
{
    *out = NULL;
    *nout = 0;
    why[0] = '\0';
    /* the kernel addresses the profile holds */
    size_t nk = 0;
    for (size_t i = 0; i < d->nstacks; i++)
        nk += is_kernel(&d->stacks[i]);
    for (size_t i = 0; i < d->nsamples; i++)
        nk += CGDATA_IS_KERNEL(d->samples[i].module, d->samples[i].addr);
    if (!nk)
        return 0;
    char boot[64] = "";
    FILE *f = boot_id_file ? fopen(boot_id_file, "r") : NULL;
    if (f) {
        if (!fgets(boot, sizeof boot, f))
            boot[0] = '\0';
        boot[strcspn(boot, "\n")] = '\0';
        fclose(f);
    }
    if (d->kernel.boot_id[0] && strcmp(boot, d->kernel.boot_id) != 0) {
        snprintf(why, whysz, "it was recorded in another boot of the kernel (boot id %s, now %s)",
                 d->kernel.boot_id, boot[0] ? boot : "unknown");
        return 0;
    }
    uint64_t *want = malloc(nk * sizeof *want);
    if (!want)
        return -1;
    size_t w = 0;
    for (size_t i = 0; i < d->nstacks; i++)
        if (is_kernel(&d->stacks[i]))
            want[w++] = d->stacks[i].addr;
    for (size_t i = 0; i < d->nsamples; i++)
        if (CGDATA_IS_KERNEL(d->samples[i].module, d->samples[i].addr))
            want[w++] = d->samples[i].addr;
    qsort(want, w, sizeof *want, by_u64);

    f = fopen(kallsyms, "r");
    if (!f) {
        snprintf(why, whysz, "%s cannot be read", kallsyms);
        free(want);
        return 0;
    }
    struct ksym *ks = NULL;
    size_t n = 0, cap = 0;
    char line[512];
    int zero = 1, fail = 0;
    while (!fail && fgets(line, sizeof line, f)) {
        unsigned long long a;
        char type, name[256], mod[128] = "";
        int got = sscanf(line, "%llx %c %255s [%127[^]]]", &a, &type, name, mod);
        if (got < 3)
            continue;
        if (a)
            zero = 0;
        if (type != 't' && type != 'T' && type != 'w' && type != 'W')
            continue;
        if (n == cap) {
            size_t c2 = cap ? cap * 2 : 65536;
            struct ksym *k2 = realloc(ks, c2 * sizeof *k2);
            if (!k2) {
                fail = 1;
                break;
            }
            ks = k2;
            cap = c2;
        }
        ks[n].addr = a;
        ks[n].name = NULL;
        /* the name, and its module's for a module's function */
        char full[400];
        snprintf(full, sizeof full, "%s [%s]", name, got == 4 ? mod : "kernel");
        ks[n].name = strdup(full);
        if (!ks[n].name)
            fail = 1;
        else
            n++;
    }
    fclose(f);
    if (!fail && (zero || n == 0)) {
        snprintf(why, whysz,
                 "%s shows no addresses to this user (kernel.kptr_restrict; as root they "
                 "are shown)",
                 kallsyms);
    } else if (!fail) {
        qsort(ks, n, sizeof *ks, by_ksym);
        /* the symbols holding the addresses wanted, each ending at the next */
        struct kernel_sym *o = calloc(w ? w : 1, sizeof *o);
        size_t no = 0;
        if (!o)
            fail = 1;
        for (size_t i = 0, j = 0; !fail && i < w; i++) {
            if (i && want[i] == want[i - 1])
                continue;
            while (j + 1 < n && ks[j + 1].addr <= want[i])
                j++;
            if (n == 0 || ks[j].addr > want[i])
                continue;
            if (no && o[no - 1].addr == ks[j].addr)
                continue;
            o[no].addr = ks[j].addr;
            o[no].end = j + 1 < n ? ks[j + 1].addr : ks[j].addr + 1;
            o[no].name = strdup(ks[j].name);
            if (!o[no].name)
                fail = 1;
            else
                no++;
        }
        *out = o;
        *nout = no;
    }
    for (size_t i = 0; i < n; i++)
        free(ks[i].name);
    free(ks);
    free(want);
    if (fail && *out) {
        kernel_symbols_free(*out, *nout);
        *out = NULL;
        *nout = 0;
    }
    return fail ? -1 : 0;
}

void kernel_symbols_free(struct kernel_sym *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i].name);
    free(s);
}

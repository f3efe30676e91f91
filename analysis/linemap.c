/* Source lines of any address of a profile (see linemap.h). */
#include "linemap.h"
#include "elffile.h"
#include "modmap.h"

#include <stdlib.h>
#include <string.h>

int linemap_init(struct linemap *lm, const struct cgdata *d, const char *prog)
{
    memset(lm, 0, sizeof *lm);
    lm->d = d;
    lm->prog = prog;
    lm->n = d ? d->nmodules : 1;
    lm->dw = calloc(lm->n + 1, sizeof *lm->dw);
    lm->state = calloc(lm->n + 1, 1);
    if (!lm->dw || !lm->state) {
        linemap_free(lm);
        return -1;
    }
    return 0;
}

void linemap_free(struct linemap *lm)
{
    for (size_t i = 0; lm->dw && i < lm->n; i++)
        if (lm->state[i] == 1)
            dwi_free(&lm->dw[i]);
    free(lm->dw);
    free(lm->state);
    memset(lm, 0, sizeof *lm);
}

struct load_ctx {
    struct dwi *dw;
    const char *path;
    unsigned flags;
};

static int load_dw(Elf *elf, void *ctx)
{
    struct load_ctx *c = ctx;
    char msg[512];
    return dwi_load(c->dw, elf, c->path, c->flags, msg, sizeof msg) < 0 ? -1 : 0;
}

const struct dwi *linemap_module(struct linemap *lm, size_t k)
{
    if (k >= lm->n)
        return NULL;
    if (lm->state[k] == 0) {
        const char *path = lm->prog;
        if (lm->d) {
            const struct cgdata_module *m = &lm->d->modules[k];
            const char *base = strrchr(m->path, '/');
            base = base ? base + 1 : m->path;
            /* the vDSO and our own runtime: no lines to give */
            path = (m->flags & CGDATA_MOD_VDSO) || m->image || strncmp(base, "libcgprof", 9) == 0
                       ? NULL
                       : m->path;
        }
        char err[512];
        struct load_ctx c = {&lm->dw[k], path, lm->flags};
        lm->state[k] = 2;
        if (path && elffile_with(path, load_dw, &c, err, sizeof err) == 0 && lm->dw[k].nrows)
            lm->state[k] = 1;
        else
            dwi_free(&lm->dw[k]);
    }
    return lm->state[k] == 1 ? &lm->dw[k] : NULL;
}

/* The line table holding PC, with *ADDR set to PC's address in it. */
static const struct dwi *module_of(struct linemap *lm, uint64_t pc, uint64_t *addr)
{
    size_t k = 0;
    *addr = pc;
    if (lm->d) {
        uint32_t module;
        if (modmap_addr(lm->d, pc, &module, addr) != 0)
            return NULL;
        while (k < lm->d->nmodules && lm->d->modules[k].id != module)
            k++;
        if (k == lm->d->nmodules)
            return NULL;
    }
    return linemap_module(lm, k);
}

size_t linemap_inline(struct linemap *lm, uint64_t pc, const struct dwi_inl **out, size_t max)
{
    uint64_t addr;
    const struct dwi *dw = module_of(lm, pc, &addr);
    return dw ? dwi_inline_chain(dw, addr, out, max) : 0;
}

int linemap_find(struct linemap *lm, uint64_t pc, const char **file, unsigned *line)
{
    uint64_t addr;
    const struct dwi *dw = module_of(lm, pc, &addr);
    const struct dwi_row *r = dw ? dwi_line(dw, addr) : NULL;
    if (!r || !r->line || r->file >= dw->nfiles)
        return 0;
    *file = dw->files[r->file];
    *line = r->line;
    return 1;
}

/* Sampled call stacks, deduplicated as they are taken: each thread keeps a
 * call-path tree whose nodes are (caller node, frame) and whose leaves
 * count samples, so a stack seen a thousand times costs one count, and a
 * profile stays small however long the run.
 *
 * A tree has one writer at a time: its thread's signal handler (the thread
 * itself never touches it), or the sampler thread for the stacks it takes
 * from perf ring buffers and blocked threads.  Nodes live in chunks that
 * are never moved, published by a release store of the node count, so the
 * profile writer reads a tree while it grows.  The lookup index beside
 * them is private to the writer of the tree and rebuilt, twice the size,
 * when half full.  Like the arc tables, trees outlive their threads: a
 * released tree is adopted by the next thread that needs one.
 *
 * At write time the trees are merged into one (cg_stacks_merge) and
 * written as the STACKS record (docs/profile-format.md).
 */
#include "unwind.h"
#include "writer.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#define CHUNK_NODES 4096u
#define MAX_CHUNKS  4096u /* 16M nodes per tree */
#define NO_PARENT   UINT32_MAX

struct cg_stree {
    struct cg_stree *next; /* registry; never removed */
    int in_use;            /* atomic */
    uint32_t n;            /* nodes published (atomic) */
    uint64_t cut, lost;    /* samples cut at the depth limit; samples not kept */
    uint32_t *index;       /* node id + 1, or 0; private to the writer of the tree */
    uint64_t index_cap;
    struct cg_snode *chunks[MAX_CHUNKS];
    uintptr_t scratch[CG_STACK_MAX];
};

int cg_stacks_on = 1;
int cg_stacks_sync = 3;
int cg_kernel_frames;
static struct cg_stree *trees; /* atomic head */

static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

struct cg_stree *cg_stree_acquire(void)
{
    for (struct cg_stree *t = __atomic_load_n(&trees, __ATOMIC_ACQUIRE); t; t = t->next) {
        int zero = 0;
        if (!__atomic_load_n(&t->in_use, __ATOMIC_RELAXED) &&
            __atomic_compare_exchange_n(&t->in_use, &zero, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return t;
    }
    struct cg_stree *t = map(sizeof *t);
    if (!t)
        return NULL;
    t->in_use = 1;
    t->next = __atomic_load_n(&trees, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&trees, &t->next, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    return t;
}

void cg_stree_release(struct cg_stree *t)
{
    if (t)
        __atomic_store_n(&t->in_use, 0, __ATOMIC_RELEASE);
}

uintptr_t *cg_stree_scratch(struct cg_stree *t)
{
    return t->scratch;
}

static struct cg_snode *node(const struct cg_stree *t, uint32_t id)
{
    return &t->chunks[id / CHUNK_NODES][id % CHUNK_NODES];
}

static uint64_t hash(uint32_t parent, uintptr_t pc)
{
    return ((uint64_t)pc ^ ((uint64_t)parent << 29) ^ parent) * CG_HASH_MUL;
}

/* A new index of CAP slots holding every node. */
static int reindex(struct cg_stree *t, uint64_t cap)
{
    uint32_t *idx = map(cap * sizeof *idx);
    if (!idx)
        return -1;
    for (uint32_t id = 0; id < t->n; id++) {
        const struct cg_snode *x = node(t, id);
        uint64_t h = hash(x->parent, x->pc) & (cap - 1);
        while (idx[h])
            h = (h + 1) & (cap - 1);
        idx[h] = id + 1;
    }
    if (t->index)
        munmap(t->index, t->index_cap * sizeof *t->index);
    t->index = idx;
    t->index_cap = cap;
    return 0;
}

/* The node (parent, pc), added if new; NO_PARENT if memory ran out. */
static uint32_t child(struct cg_stree *t, uint32_t parent, uintptr_t pc)
{
    if (!t->index && reindex(t, 1024) != 0)
        return NO_PARENT;
    uint64_t mask = t->index_cap - 1, h = hash(parent, pc) & mask;
    for (uint32_t e; (e = t->index[h]) != 0; h = (h + 1) & mask) {
        const struct cg_snode *x = node(t, e - 1);
        if (x->pc == pc && x->parent == parent)
            return e - 1;
    }
    uint32_t id = t->n;
    if (id >= CHUNK_NODES * MAX_CHUNKS - 1)
        return NO_PARENT;
    if ((uint64_t)(id + 1) * 2 > t->index_cap) {
        if (reindex(t, t->index_cap * 2) != 0)
            return NO_PARENT;
        mask = t->index_cap - 1;
        h = hash(parent, pc) & mask;
        while (t->index[h])
            h = (h + 1) & mask;
    }
    if (!t->chunks[id / CHUNK_NODES]) {
        struct cg_snode *c = map(CHUNK_NODES * sizeof *c);
        if (!c)
            return NO_PARENT;
        __atomic_store_n(&t->chunks[id / CHUNK_NODES], c, __ATOMIC_RELEASE);
    }
    struct cg_snode *x = node(t, id);
    x->pc = pc;
    x->parent = parent;
    x->count = 0;
    __atomic_store_n(&t->n, id + 1, __ATOMIC_RELEASE);
    t->index[h] = id + 1;
    return id;
}

uint32_t cg_stree_path(struct cg_stree *t, const uintptr_t *frames, unsigned n, int cut)
{
    if (!t || n == 0)
        return NO_PARENT;
    uint32_t at = NO_PARENT;
    if (cut && (at = child(t, NO_PARENT, CG_FRAME_CUT)) == NO_PARENT)
        return NO_PARENT;
    for (unsigned i = n; i-- > 0;)
        if ((at = child(t, at, cg_pc_tag(frames[i]))) == NO_PARENT)
            return NO_PARENT;
    return at;
}

uint32_t cg_stree_add(struct cg_stree *t, const uintptr_t *frames, unsigned n, int cut,
                      uint64_t weight)
{
    if (!t)
        return NO_PARENT;
    uint32_t at = cg_stree_path(t, frames, n, cut);
    if (at == NO_PARENT) {
        if (cut && n)
            __atomic_add_fetch(&t->cut, weight, __ATOMIC_RELAXED);
        __atomic_add_fetch(&t->lost, weight, __ATOMIC_RELAXED);
        return NO_PARENT;
    }
    cg_stree_take(t, at, cut, weight);
    return at;
}

void cg_stree_take(struct cg_stree *t, uint32_t leaf, int cut, uint64_t weight)
{
    if (cut)
        __atomic_add_fetch(&t->cut, weight, __ATOMIC_RELAXED);
    cg_stree_count(t, leaf, weight);
}

/* Counts may come from another thread than the one adding nodes (the
 * sampler counts the stacks program threads walked themselves): added
 * atomically. */
void cg_stree_count(struct cg_stree *t, uint32_t leaf, uint64_t weight)
{
    if (leaf >= __atomic_load_n(&t->n, __ATOMIC_ACQUIRE)) {
        __atomic_add_fetch(&t->lost, weight, __ATOMIC_RELAXED);
        return;
    }
    __atomic_add_fetch(&node(t, leaf)->count, weight, __ATOMIC_RELAXED);
}

/* ---- in a thread's own signal handler ----------------------------------- */

void cg_stack_bounds_init(void)
{
    struct cg_tls *t = &cg_tls;
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return;
    void *addr;
    size_t size;
    if (pthread_attr_getstack(&a, &addr, &size) == 0) {
        t->stack_lo = (uintptr_t)addr;
        t->stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&a);
}

/* When a walk in this thread's handler must end: a quarter of the
 * sampling period from now.  A walk costs some 0.1-0.2 us a frame here;
 * 2,048 frames fit at 1 kHz, and at 20 kHz a 400-frame walk took longer
 * than the period -- the event's signals queued up until the user's
 * real-time signal queue was full, and the thread did nothing else.  0:
 * no sampling rate, no deadline. */
static uint64_t walk_deadline(void)
{
    if (!cg_hz)
        return 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 250000000u / cg_hz;
}

/* Walks this thread's stack from UCONTEXT into its tree's scratch: the
 * number of frames (0: no tree). */
static unsigned walk_uc(const ucontext_t *uc, int *cut)
{
    struct cg_tls *t = &cg_tls;
    *cut = 0;
    if (!t->stree) {
        t->stree = cg_stree_acquire();
        if (!t->stree)
            return 0;
    }
    struct cg_regs r = {cg_uc_pc(uc), cg_uc_sp(uc), cg_uc_fp(uc), 1, cg_uc_lr(uc), CG_RA_IN_REG};
    struct cg_mem m = {0, 0, NULL, 0, walk_deadline()};
    if (t->stack_lo <= r.sp && r.sp < t->stack_hi) {
        m.lo = r.sp;
        m.hi = t->stack_hi;
    }
    return cg_unwind(&r, &m, t->stree->scratch, CG_STACK_MAX, cut);
}

void cg_stack_sample_uc(void *ucontext, uint64_t weight)
{
    int cut;
    unsigned n = walk_uc(ucontext, &cut);
    if (cg_tls.stree)
        cg_stree_add(cg_tls.stree, cg_tls.stree->scratch, n, cut, weight);
}

uint32_t cg_stack_path_uc(void *ucontext, struct cg_stree **tree, const uintptr_t **frames,
                          unsigned *n, int *cut)
{
    *n = walk_uc(ucontext, cut);
    *tree = cg_tls.stree;
    *frames = *tree ? (*tree)->scratch : NULL;
    return *tree ? cg_stree_path(*tree, *frames, *n, *cut) : NO_PARENT;
}

/* In a fork child: the parent's stacks are the parent's.  Every tree's
 * counts are zeroed (nodes kept), and the trees of threads that do not
 * exist here are released. */
void cg_stacks_after_fork(void)
{
    cg_unwind_after_fork();
    for (struct cg_stree *t = trees; t; t = t->next) {
        for (uint32_t id = 0; id < t->n; id++)
            node(t, id)->count = 0;
        t->cut = t->lost = 0;
        if (t != cg_tls.stree)
            t->in_use = 0;
    }
}

/* ---- merging, for the writer ------------------------------------------- */

static struct {
    struct cg_snode *nodes;
    uint64_t cap, n; /* nodes allocated, used */
    uint32_t *index;
    uint64_t index_cap;
    uint64_t cut, lost;
} mg;

static uint64_t tree_nodes(void)
{
    uint64_t total = 0;
    for (struct cg_stree *t = __atomic_load_n(&trees, __ATOMIC_ACQUIRE); t; t = t->next)
        total += __atomic_load_n(&t->n, __ATOMIC_ACQUIRE);
    return total;
}

static uint32_t merged_child(uint32_t parent, uintptr_t pc)
{
    uint64_t mask = mg.index_cap - 1, h = hash(parent, pc) & mask;
    for (uint32_t e; (e = mg.index[h]) != 0; h = (h + 1) & mask)
        if (mg.nodes[e - 1].pc == pc && mg.nodes[e - 1].parent == parent)
            return e - 1;
    if (mg.n >= mg.cap)
        return NO_PARENT;
    uint32_t id = (uint32_t)mg.n++;
    mg.nodes[id].pc = pc;
    mg.nodes[id].parent = parent;
    mg.nodes[id].count = 0;
    mg.index[h] = id + 1;
    return id;
}

int cg_stacks_merge(void)
{
    memset(&mg, 0, sizeof mg);
    if (!cg_stacks_on)
        return 0;
    /* a tree may grow meanwhile: nodes past its count then are left out */
    mg.cap = tree_nodes() + 1;
    mg.index_cap = 1024;
    while (mg.index_cap < mg.cap * 2)
        mg.index_cap *= 2;
    mg.nodes = map(mg.cap * sizeof *mg.nodes);
    mg.index = map(mg.index_cap * sizeof *mg.index);
    uint32_t *remap = NULL;
    uint64_t remap_cap = 0;
    if (!mg.nodes || !mg.index)
        goto fail;
    for (struct cg_stree *t = __atomic_load_n(&trees, __ATOMIC_ACQUIRE); t; t = t->next) {
        uint32_t n = __atomic_load_n(&t->n, __ATOMIC_ACQUIRE);
        mg.cut += __atomic_load_n(&t->cut, __ATOMIC_RELAXED);
        mg.lost += __atomic_load_n(&t->lost, __ATOMIC_RELAXED);
        if (n > remap_cap) {
            if (remap)
                munmap(remap, remap_cap * sizeof *remap);
            remap_cap = n;
            remap = map(remap_cap * sizeof *remap);
            if (!remap)
                goto fail;
        }
        for (uint32_t id = 0; id < n; id++) {
            const struct cg_snode *x = node(t, id);
            uint32_t parent = x->parent == NO_PARENT ? NO_PARENT : remap[x->parent];
            uint32_t m = merged_child(parent, x->pc);
            remap[id] = m;
            if (m != NO_PARENT)
                mg.nodes[m].count += __atomic_load_n(&x->count, __ATOMIC_RELAXED);
        }
    }
    if (remap)
        munmap(remap, remap_cap * sizeof *remap);
    return 0;
fail:
    cg_stacks_merged_free();
    return -1;
}

void cg_stacks_merged_free(void)
{
    if (mg.nodes)
        munmap(mg.nodes, mg.cap * sizeof *mg.nodes);
    if (mg.index)
        munmap(mg.index, mg.index_cap * sizeof *mg.index);
    memset(&mg, 0, sizeof mg);
}

const struct cg_snode *cg_stacks_merged(uint64_t *n, uint64_t *cut, uint64_t *lost)
{
    *n = mg.n;
    *cut = mg.cut;
    *lost = mg.lost;
    return mg.nodes;
}

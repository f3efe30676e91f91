/* Layout of cgprof's own profile format, version 1 (docs/profile-format.md):
 * modules with build-ids, the event, samples and arcs by (module, address),
 * totals and lost counts.  Async-signal-safe, like all of the writer. */
#include "writer.h"
#include "unwind.h"

#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

enum {
    TAG_INFO = 1,
    TAG_MODULE = 2,
    TAG_SAMPLES = 3,
    TAG_ARCS = 4,
    TAG_TOTALS = 5,
    TAG_IMAGE = 6,
    TAG_THREADS = 7,
    TAG_STACKS = 8,
    TAG_RUN = 9,
    TAG_NOTES = 10,
    TAG_RUNTIME = 16,
    TAG_KERNEL = 17,
    TAG_END = 255, /* always last: a file without it was cut short */
};

#define NO_MODULE UINT32_MAX

static void put32(struct out *o, uint32_t v)
{
    cg_put(o, &v, 4);
}

static void put64(struct out *o, uint64_t v)
{
    cg_put(o, &v, 8);
}

static void pad8(struct out *o)
{
    static const char zero[8];
    if (o->len % 8)
        cg_put(o, zero, 8 - o->len % 8);
}

/* A record: tag, flags, payload size (filled in afterwards). */
static size_t begin(struct out *o, uint32_t tag)
{
    put32(o, tag);
    put32(o, 0);
    size_t at = o->len;
    put64(o, 0);
    return at;
}

static void end(struct out *o, size_t at)
{
    pad8(o);
    uint64_t size = o->len - at - 8;
    if (at + 8 <= o->cap)
        memcpy(o->buf + at, &size, 8);
}

static void put_str(struct out *o, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    put32(o, n);
    cg_put(o, s, n);
}

static void put_info(struct out *o, uint64_t samples)
{
    size_t at = begin(o, TAG_INFO);
    const struct cg_event *ev = cg_event;
    int timed = !ev || ev->kind != CG_EV_PERF || ev->is_time;
    uint64_t hz = cg_sample_rate(samples);
    put64(o, (uint64_t)getpid());
    put64(o, timed ? hz : 0); /* samples per second */
    /* per sample: ns, or events -- 0 at a rate, where each has its own */
    put64(o, timed                                      ? 1000000000u / hz
             : cg_sampler_at_rate(ev, cg_hz, cg_period) ? 0
             : cg_period                                ? cg_period
                                                        : ev->period);
    put32(o, ev ? (uint32_t)ev->kind : 0);
    put32(o, (uint32_t)timed);
    put_str(o, ev ? ev->name : "none");
    end(o, at);
}

/* The vDSO's whole ELF image: its section headers (which name its
 * symbols' sections) lie past its loaded segment, within its pages. */
static uint64_t vdso_size(const struct cg_module *m)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)m->lo;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t mapped = (m->hi - m->lo + page - 1) / page * page;
    uint64_t len = m->hi - m->lo;
    uint64_t sh_end = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && sh_end > len && sh_end <= mapped)
        len = sh_end;
    return len;
}

static void put_modules(struct out *o, unsigned n)
{
    unsigned have;
    const struct cg_module *m = cg_modules(&have);
    if (n > have)
        n = have;
    for (unsigned i = 0; i < n; i++) {
        size_t at = begin(o, TAG_MODULE);
        put32(o, i);
        put32(o, m[i].flags);
        put64(o, m[i].bias);
        put64(o, m[i].lo);
        put64(o, m[i].hi);
        put32(o, m[i].build_id_len);
        put32(o, (uint32_t)strlen(m[i].path));
        cg_put(o, m[i].build_id, m[i].build_id_len);
        cg_put(o, m[i].path, strlen(m[i].path));
        /* when it was mapped: load and unload generations */
        put32(o, __atomic_load_n(&m[i].load_gen, __ATOMIC_RELAXED));
        put32(o, __atomic_load_n(&m[i].unload_gen, __ATOMIC_RELAXED));
        end(o, at);
        if (m[i].flags & CG_MOD_VDSO) {
            /* the vDSO is no file: its image goes into the profile */
            uint64_t len = vdso_size(&m[i]);
            at = begin(o, TAG_IMAGE);
            put32(o, i);
            put32(o, 0);
            put64(o, len);
            cg_put(o, (const void *)m[i].lo, len);
            end(o, at);
        }
    }
}

/* (module, address): link-time address within a known module, else the
 * pc.  KEY is a pc as the tables keep it, with its generation. */
static void locate(uintptr_t key, uint32_t *mod, uint64_t *addr)
{
    int i = cg_module_at(key);
    uintptr_t pc = key >> CG_GEN_SHIFT == 0xFFFF ? key : key & CG_PC_MASK;
    unsigned n;
    const struct cg_module *m = cg_modules(&n);
    *mod = i < 0 ? NO_MODULE : (uint32_t)i;
    *addr = i < 0 ? pc : pc - m[i].bias;
}

static void put_samples(struct out *o, const struct merged *s)
{
    size_t at = begin(o, TAG_SAMPLES);
    put64(o, s->n);
    for (uint64_t i = 0; i < s->cap; i++) {
        if (!s->arcs[i].self)
            continue;
        uint32_t mod;
        uint64_t addr;
        locate(s->arcs[i].from, &mod, &addr);
        put32(o, mod);
        put32(o, 0);
        put64(o, addr);
        put64(o, s->arcs[i].count);
    }
    end(o, at);
}

/* One ARCS entry: FROM and SELF named in generation GEN. */
static void put_arc_entry(struct out *o, uintptr_t from, uintptr_t self, unsigned gen,
                          uint64_t count)
{
    uint32_t fm, sm;
    uint64_t fa, sa;
    uintptr_t g = (uintptr_t)(gen < CG_GEN_MAX ? gen : CG_GEN_MAX) << CG_GEN_SHIFT;
    locate(from <= CG_PC_MASK ? from | g : from, &fm, &fa);
    locate(self <= CG_PC_MASK ? self | g : self, &sm, &sa);
    put32(o, fm);
    put32(o, sm);
    put64(o, fa);
    put64(o, sa);
    put64(o, count);
}

/* Each arc, its count split at the counts noted when code it touches was
 * unmapped (write.c, cg_arcs_freeze): each part named by the modules
 * mapped then, the rest by those mapped now.  With PUT 0, only counts the
 * entries. */
static uint64_t arc_entries(struct out *o, const struct merged *a, uint64_t nnoted, int put)
{
    uint64_t n = 0;
    const struct cg_frozen_arc *noted = cg_arcs_frozen(&(uint64_t){0});
    unsigned now = __atomic_load_n(&cg_mod_gen, __ATOMIC_RELAXED);
    for (uint64_t i = 0; i < a->cap; i++) {
        const struct cg_slot *s = &a->arcs[i];
        if (!s->self)
            continue;
        uint64_t done = 0; /* the part of the count already put */
        for (uint64_t k = 0; k < nnoted; k++) {
            if (noted[k].from != s->from || noted[k].self != s->self)
                continue;
            uint64_t upto = noted[k].count < s->count ? noted[k].count : s->count;
            if (upto > done) {
                if (put)
                    put_arc_entry(o, s->from, s->self, noted[k].gen - 1, upto - done);
                n++;
                done = upto;
            }
        }
        if (s->count > done || done == 0) {
            if (put)
                put_arc_entry(o, s->from, s->self, now, s->count - done);
            n++;
        }
    }
    return n;
}

static void put_arcs(struct out *o, const struct merged *a, uint64_t nnoted)
{
    size_t at = begin(o, TAG_ARCS);
    put64(o, arc_entries(o, a, nnoted, 0));
    arc_entries(o, a, nnoted, 1);
    end(o, at);
}

/* The merged call-path tree (stacks.c) as the STACKS record. */
static void put_stacks(struct out *o)
{
    uint64_t n, cut, lost;
    const struct cg_snode *nodes = cg_stacks_merged(&n, &cut, &lost);
    if (!nodes)
        return;
    size_t at = begin(o, TAG_STACKS);
    put32(o, 1); /* layout version */
    put32(o, 0);
    put64(o, n);
    put64(o, CG_STACK_MAX);
    put64(o, cut);
    put64(o, lost);
    for (uint64_t i = 0; i < n; i++) {
        uint32_t mod;
        uint64_t addr;
        if (nodes[i].pc == CG_FRAME_CUT) {
            mod = NO_MODULE - 1;
            addr = 0;
        } else {
            locate(nodes[i].pc, &mod, &addr);
        }
        put32(o, nodes[i].parent);
        put32(o, mod);
        put64(o, addr);
        put64(o, nodes[i].count);
    }
    end(o, at);
}

/* record --kernel: whether kernel frames could be taken, and the boot
 * they belong to (kernel addresses are named from that boot's
 * /proc/kallsyms; open and read are async-signal-safe). */
static void put_kernel(struct out *o)
{
    char id[64];
    ssize_t n = 0;
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        n = read(fd, id, sizeof id);
        close(fd);
    }
    while (n > 0 && (id[n - 1] == '\n' || id[n - 1] == ' '))
        n--;
    if (n < 0)
        n = 0;
    size_t at = begin(o, TAG_KERNEL);
    put32(o, 1u | (cg_sampler_kernel_denied() || !cg_event || cg_event->kind == CG_EV_CPU ||
                           cg_event->kind == CG_EV_ITIMER
                       ? 0u
                       : 2u));
    put32(o, (uint32_t)n);
    cg_put(o, id, (size_t)n);
    end(o, at);
}

/* Notes: what the runtime could not do, said once each in the profile (the
 * report prints them).  Lines end in '\n'; the text is complete before the
 * length that covers it is published, so a writer in another thread reads
 * whole lines.  Callers serialize among themselves (libcalls.c: lc_lock). */
static char notes[4096];
static size_t notes_len; /* atomic */

void cg_note(const char *a, const char *b, const char *c)
{
    char line[512];
    size_t n = 0;
    for (const char *s = a; s && *s && n < sizeof line - 1; s++)
        line[n++] = *s;
    for (const char *s = b; s && *s && n < sizeof line - 1; s++)
        line[n++] = *s;
    for (const char *s = c; s && *s && n < sizeof line - 1; s++)
        line[n++] = *s;
    line[n++] = '\n';
    size_t len = __atomic_load_n(&notes_len, __ATOMIC_ACQUIRE);
    for (size_t at = 0; at < len;) { /* said once */
        const char *nl = memchr(notes + at, '\n', len - at);
        size_t l = nl ? (size_t)(nl - (notes + at)) + 1 : len - at;
        if (l == n && memcmp(notes + at, line, n) == 0)
            return;
        at += l;
    }
    if (len + n > sizeof notes)
        return;
    memcpy(notes + len, line, n);
    __atomic_store_n(&notes_len, len + n, __ATOMIC_RELEASE);
}

static void put_notes(struct out *o)
{
    size_t len = __atomic_load_n(&notes_len, __ATOMIC_ACQUIRE);
    if (!len)
        return;
    size_t at = begin(o, TAG_NOTES);
    put64(o, len);
    cg_put(o, notes, len);
    end(o, at);
}

void cg_layout_cgprof(struct out *o, const struct merged *arcs, const struct merged *samples,
                      uint64_t lost_calls, const struct frozen *fz)
{
    static const char magic[8] = {'\x89', 'C', 'G', 'P', 'R', 'O', 'F', '\n'};
    cg_put(o, magic, 8);
    put32(o, 1);  /* version */
    put32(o, 16); /* header size */
    put_info(o, samples->total);
    size_t run_at = begin(o, TAG_RUN);
    cg_put(o, cg_run_id, sizeof cg_run_id);
    end(o, run_at);
    put_modules(o, fz->nmods);
    put_samples(o, samples);
    put_arcs(o, arcs, fz->narcs_noted);
    unsigned nthr;
    const struct cg_thread_rec *thr = cg_thread_recs(&nthr);
    if (nthr > fz->nthreads)
        nthr = fz->nthreads;
    size_t at = begin(o, TAG_THREADS);
    put64(o, nthr);
    for (unsigned i = 0; i < nthr; i++) {
        put32(o, (uint32_t)thr[i].tid);
        /* CPU while it was sampled: what its samples stand for */
        put32(o, thr[i].flags | CG_THREAD_FROM_BASE);
        put64(o, __atomic_load_n(&thr[i].samples, __ATOMIC_RELAXED));
        put64(o, thr[i].cpu_ns > thr[i].base_ns ? thr[i].cpu_ns - thr[i].base_ns : 0);
    }
    end(o, at);
    put_stacks(o);
    if (cg_kernel_frames)
        put_kernel(o);
    put_notes(o);
    int err[2];
    at = begin(o, TAG_TOTALS);
    put64(o, samples->total);
    put64(o, cg_samples_lost());
    put64(o, arcs->total);
    put64(o, lost_calls);
    put64(o, cg_unsampled_threads + cg_sampler_unsampled(err));
    end(o, at);
    /* what the runtime itself cost, none of it in the samples above */
    struct cg_runtime_cost c;
    cg_runtime_cost(&c);
    at = begin(o, TAG_RUNTIME);
    put64(o, c.helper_cpu_ns);
    put64(o, c.write_cpu_ns);
    put64(o, c.writes + 1); /* this one included */
    put64(o, c.samples);
    put64(o, c.start_cpu_ns);
    put64(o, c.before_cpu_ns);
    put64(o, c.late_ns);
    end(o, at);
    end(o, begin(o, TAG_END));
}

/* Threads: every thread is sampled from its start and hands its arc table
 * on when it ends.
 *
 * pthread_create is interposed so a thread gets its CPU timer before it
 * runs a single instruction of its own, whether or not it ever calls a
 * profiled function.  A thread we did not see start (created by a raw
 * clone, or before we were loaded) is picked up at its first mcount.  A
 * pthread key's destructor tells us when a thread ends.
 */
#include "rt.h"
#include "unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void on_thread_exit(void *arg)
{
    (void)arg;
    cg_thread_timer_stop();
    cg_thread_rec_end();
    cg_samples_thread_exit();
    cg_arcs_thread_exit();
    cg_altstack_exit();
    cg_tls.key_set = 0;
}

static void make_key(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
}

void cg_thread_track(void)
{
    struct cg_tls *t = &cg_tls;
    /* signal-driven sources count into the thread's record itself; the
     * sampler thread keeps the records of the threads it samples */
    if (!cg_event || cg_event->kind == CG_EV_CPU || cg_event->kind == CG_EV_ITIMER)
        cg_thread_rec_self();
    cg_thread_timer_start();
    if (!t->key_set) {
        pthread_once(&key_once, make_key);
        t->key_set = 1;
        pthread_setspecific(exit_key, (void *)1);
    }
}

struct start {
    void *(*fn)(void *);
    void *arg;
};

static void *thread_start(void *p)
{
    struct start s = *(struct start *)p;
    free(p);
    cg_stack_bounds_init();
    cg_altstack_init();
    cg_sampler_thread_open(); /* sampled from here on, however short it is */
    if (cg_tls.rec)           /* (wall charges its waiting time before its first sample here) */
        cg_tls.rec->entry = (uintptr_t)s.fn;
    cg_sampler_expect(-1);
    cg_sampler_thread_created();
    cg_thread_track();
    cg_sampler_thread_begin();
    return s.fn(s.arg);
}

/* glibc's pthread_create.  Dynamic: the next definition (libc.so's).
 * Static (libcgprof.a in a -static program, where dlsym(RTLD_NEXT) finds
 * nothing): libc.a's, under its internal name.  A weak reference alone
 * would not bring that member of libc.a into the link; the reference to
 * __nptl_threads_events, defined in the same member (and exported by
 * libc.so for libthread_db), does. */
extern int __pthread_create_2_1(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)
    __attribute__((weak));
extern unsigned int __nptl_threads_events;
unsigned int *volatile cg_pull_pthread_create CG_HIDDEN = &__nptl_threads_events;

cg_create_fn cg_real_pthread_create(void)
{
    static cg_create_fn real;
    if (!real)
        real = (cg_create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (!real)
        real = __pthread_create_2_1;
    return real;
}

__attribute__((visibility("default"))) int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                                                          void *(*fn)(void *), void *arg)
{
    cg_create_fn real = cg_real_pthread_create();
    if (!real)
        return EAGAIN; /* cannot happen: one of the two is always there */
    if (cg_inert)
        return real(th, attr, fn, arg);
    struct start *s = malloc(sizeof *s);
    if (!s)
        return real(th, attr, fn, arg); /* still runs; sampled from its first call */
    s->fn = fn;
    s->arg = arg;
    cg_sampler_expect(1);
    int rc = real(th, attr, thread_start, s);
    if (rc != 0) {
        cg_sampler_expect(-1);
        free(s);
    }
    return rc;
}

/* clone() without CLONE_THREAD makes a new process that fork's handlers
 * never see.  Interposed so that such a child is profiled as a forked one:
 *
 * - without CLONE_VM (its own copy of memory, as after fork): the child
 *   first resets what it copied (the parent's counts, timers, sampler),
 *   as the fork handler does, then runs its function, and writes its own
 *   profile NAME.PID when the function returns -- glibc's clone ends the
 *   child with the exit system call, past every exit handler -- and ends
 *   the whole process then (our sampler thread would outlive that exit);
 * - with CLONE_VM (our memory, shared): nothing of ours can run in it
 *   safely; its calls land in this process's tables, and its CPU time
 *   cannot be sampled, which the profile says (a thread not sampled).
 *
 * Threads (CLONE_THREAD) pass through untouched: the sampler finds them.
 * Only in libcgprof.so, like privileges.c. */
#include "rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

typedef int (*clone_fn)(int (*)(void *), void *, int, void *, ...);

struct child {
    int (*fn)(void *);
    void *arg;
};

/* The child's first and last steps around its function. */
static int child_start(void *p)
{
    struct child c = *(struct child *)p; /* the child's own copy */
    cg_after_fork_child();
    int rc = c.fn(c.arg);
    cg_write_final(CG_END_EXIT);
    /* glibc ends the child with the exit system call, which ends one
     * thread: with our sampler thread started above it would not end the
     * process.  The process ends as it would have alone, with RC. */
    syscall(SYS_exit_group, rc);
    return rc;
}

__attribute__((visibility("default"))) int clone(int (*fn)(void *), void *stack, int flags,
                                                 void *arg, ...)
{
    static clone_fn real;
    if (!real)
        real = (clone_fn)dlsym(RTLD_NEXT, "clone");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    va_list ap;
    va_start(ap, arg);
    pid_t *ptid = va_arg(ap, pid_t *);
    void *tls = va_arg(ap, void *);
    pid_t *ctid = va_arg(ap, pid_t *);
    va_end(ap);
    if ((flags & CLONE_THREAD) || cg_inert)
        return real(fn, stack, flags, arg, ptid, tls, ctid);
    if (flags & CLONE_VM) {
        cg_count_unsampled_vm_child();
        return real(fn, stack, flags, arg, ptid, tls, ctid);
    }
    struct child *c = malloc(sizeof *c);
    if (!c)
        return real(fn, stack, flags, arg, ptid, tls, ctid);
    c->fn = fn;
    c->arg = arg;
    int rc = real(child_start, stack, flags, c, ptid, tls, ctid);
    int saved = errno;
    free(c); /* the child has its own copy of memory */
    errno = saved;
    return rc;
}

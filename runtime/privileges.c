/* The calls by which a program gives up the rights its profile's path
 * needs -- a new user (setuid and its relatives) or a new root (chroot) --
 * interposed so that, just before, the profile's directory and file are
 * opened and kept (write.c, cg_output_keep): the profile written at exit
 * then still reaches them.  Each wrapper then calls the real function and
 * returns what it returns, errno included.
 *
 * Only in libcgprof.so: in a -static program libc.a's own definitions
 * stand, and such a program that drops its rights can lose its profile
 * (docs/runtime.md). */
#include "rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

/* The next definition of NAME (libc's), found once. */
static void *next(void **cache, const char *name)
{
    void *fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = dlsym(RTLD_NEXT, name);
        __atomic_store_n(cache, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

#define WRAP1(name, type)                                                                          \
    API int name(type a)                                                                           \
    {                                                                                              \
        static void *real;                                                                         \
        int (*fn)(type) = (int (*)(type))next(&real, #name);                                       \
        if (!fn) {                                                                                 \
            errno = ENOSYS;                                                                        \
            return -1;                                                                             \
        }                                                                                          \
        cg_output_keep();                                                                          \
        return fn(a);                                                                              \
    }
#define WRAP2(name, type)                                                                          \
    API int name(type a, type b)                                                                   \
    {                                                                                              \
        static void *real;                                                                         \
        int (*fn)(type, type) = (int (*)(type, type))next(&real, #name);                           \
        if (!fn) {                                                                                 \
            errno = ENOSYS;                                                                        \
            return -1;                                                                             \
        }                                                                                          \
        cg_output_keep();                                                                          \
        return fn(a, b);                                                                           \
    }
#define WRAP3(name, type)                                                                          \
    API int name(type a, type b, type c)                                                           \
    {                                                                                              \
        static void *real;                                                                         \
        int (*fn)(type, type, type) = (int (*)(type, type, type))next(&real, #name);               \
        if (!fn) {                                                                                 \
            errno = ENOSYS;                                                                        \
            return -1;                                                                             \
        }                                                                                          \
        cg_output_keep();                                                                          \
        return fn(a, b, c);                                                                        \
    }

WRAP1(setuid, uid_t)
WRAP1(seteuid, uid_t)
WRAP2(setreuid, uid_t)
WRAP3(setresuid, uid_t)
WRAP1(setgid, gid_t)
WRAP1(setegid, gid_t)
WRAP2(setregid, gid_t)
WRAP3(setresgid, gid_t)
WRAP1(chroot, const char *)

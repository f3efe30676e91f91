/* Kernel frames of a cgprof profile (record --kernel): see kernel.c. */
#ifndef CGPROF_KERNEL_H
#define CGPROF_KERNEL_H

#include "cgdata.h"

#include <stddef.h>
#include <stdint.h>

/* A kernel function holding some address of the profile: [addr, end). */
struct kernel_sym {
    uint64_t addr, end;
    char *name; /* "vfs_read [kernel]", "fn [module]" */
};

/* The kernel functions holding D's kernel addresses, from KALLSYMS
 * (/proc/kallsyms) when D was recorded in the boot BOOT_ID_FILE names
 * (/proc/sys/kernel/random/boot_id).  When they cannot be named, none,
 * and why in WHY (empty otherwise).  0, or -1 (out of memory). */
int kernel_symbols(const struct cgdata *d, const char *kallsyms, const char *boot_id_file,
                   struct kernel_sym **out, size_t *nout, char *why, size_t whysz);
void kernel_symbols_free(struct kernel_sym *s, size_t n);

#endif

/* Library calls (runtime/libcalls.c on x86-64: calls from -pg modules
 * through their PLT, counted by patched call sites) are not counted on
 * AArch64 yet: the call-site rewriting is x86-64 code.  Asked for by
 * CGPROF_LIBCALLS, it is said once in the profile's notes. */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

void cg_libcalls_init(void)
{
    const char *e = getenv("CGPROF_LIBCALLS");
    if (e && strcmp(e, "0") != 0)
        cg_note("library calls are not counted on ", CG_ARCH_NAME, " (CGPROF_LIBCALLS ignored)");
}

void cg_libcalls_rescan(void) {}

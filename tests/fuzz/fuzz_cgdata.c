/* libFuzzer target for the cgprof profile reader (analysis/cgdata.c).
 *
 * Build: make fuzz, then build/fuzz_cgdata tests/fuzz/corpus-cgdata
 *
 * Every input either reads cleanly or gets a message that names the file;
 * a read profile must be self-consistent: every sample's module is one the
 * file holds.  Anything else aborts.
 */
#include "cgdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cgdata d;
    char err[512];
    int rc = cgdata_read_buffer(&d, "f", data, size, err, sizeof err);
    if (rc != 0 && strncmp(err, "f: ", 3) != 0) {
        fprintf(stderr, "fuzz_cgdata: message without the file name: %s\n", err);
        abort();
    }
    for (size_t i = 0; rc == 0 && i < d.nsamples; i++)
        if (d.samples[i].module != CGDATA_NO_MODULE && !cgdata_module(&d, d.samples[i].module))
            abort();
    for (size_t i = 0; rc == 0 && i < d.nmodules; i++)
        if (d.modules[i].image && (d.modules[i].image < d.buf ||
                                   d.modules[i].image + d.modules[i].image_len > d.buf + d.len))
            abort();
    cgdata_free(&d);
    return 0;
}

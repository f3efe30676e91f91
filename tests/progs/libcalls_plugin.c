/* libcalls_plugin: a -pg module that libcalls_dl.c dlopens; it calls
 * strlen, malloc and free a known number of times (tests/t0600-libcalls.sh). */
#include <stdlib.h>
#include <string.h>

static const char *volatile wordp = "plugin";

size_t lc_plugin_strlen(long n)
{
    size_t sum = 0;
    for (long i = 0; i < n; i++)
        sum += strlen(wordp);
    return sum;
}

long lc_plugin_malloc(long n)
{
    long ok = 0;
    for (long i = 0; i < n; i++) {
        char *volatile p = malloc(16);
        ok += p != NULL;
        free(p);
    }
    return ok;
}

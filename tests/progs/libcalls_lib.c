/* libcalls_lib: a -pg shared library that calls strlen a known number of
 * times, and hands out a pointer to it taken in a module that only calls it
 * through the PLT otherwise (tests/t0600-libcalls.sh). */
#include <string.h>

static char word[] = "library";
static const char *volatile wordp = word;

size_t lc_lib_strlen(long n)
{
    size_t sum = 0;
    for (long i = 0; i < n; i++)
        sum += strlen(wordp);
    return sum;
}

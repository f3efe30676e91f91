/* CHECK(cond): the unit tests' assertion -- reports the failed condition
 * with its place and counts it in `failures`, which main returns. */
#ifndef CGPROF_TEST_CHECK_H
#define CGPROF_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#endif

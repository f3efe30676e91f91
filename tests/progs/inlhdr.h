/* inlhdr.h: a static inline helper in a header, as real programs have
 * them (see inlhdr.c). */
#ifndef INLHDR_H
#define INLHDR_H

static inline __attribute__((always_inline)) double hdr_sum(long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += (double)(i % 11) * 0.75;
    return s;
}

#endif

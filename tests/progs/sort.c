/* sort.c: most of its time in glibc's qsort, whose merge sort is a local
 * function of libc (msort_with_tmp), named only by libc's debug symbols. */
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    size_t n = 1 << 20;
    int *v = malloc(n * sizeof *v);
    if (!v)
        return 1;
    unsigned long long sum = 0;
    for (int r = 0; r < rounds; r++) {
        unsigned x = 12345u + (unsigned)r;
        for (size_t i = 0; i < n; i++)
            v[i] = (int)(x = x * 1103515245u + 12345u);
        qsort(v, n, sizeof *v, by_value);
        sum += (unsigned)v[n / 2];
    }
    printf("%llu\n", sum);
    free(v);
    return 0;
}

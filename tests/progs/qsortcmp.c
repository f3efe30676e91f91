/* qsortcmp.c: main sorts strings with glibc's qsort, whose comparison
 * calls back into the program (by_text), which calls libc's memcmp on
 * long common prefixes: most samples fall in memcmp, a leaf of libc
 * without a frame record, under by_text, under qsort's own frames, under
 * main.  A stack walked by frame records alone loses by_text (memcmp's
 * return address is only in the link register); .eh_frame keeps it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN 2048

static int by_text(const void *a, const void *b)
{
    int c = memcmp(*(char *const *)a, *(char *const *)b, LEN);
    return (c > 0) - (c < 0); /* (not a tail call: by_text stays on the stack) */
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    size_t n = 2000;
    char **v = malloc(n * sizeof *v);
    if (!v)
        return 1;
    for (size_t i = 0; i < n; i++) {
        if (!(v[i] = malloc(LEN)))
            return 1;
        memset(v[i], 'a', LEN);
    }
    unsigned x = 12345u;
    unsigned long sum = 0;
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < n; i++) { /* differ only in the last 4 bytes */
            x = x * 1103515245u + 12345u;
            memcpy(v[i] + LEN - 4, &x, 4);
        }
        qsort(v, n, sizeof *v, by_text);
        sum += (unsigned char)v[n / 2][LEN - 1];
    }
    printf("%lu\n", sum);
    return 0;
}

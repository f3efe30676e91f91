/* demo.c: the bundled demo -- a small word-frequency counter with a hash
 * table, a sort and a recursive helper, so the profile has something to
 * show: a hot leaf, a shared callee, recursion and a cycle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

#define NBUCKET 4096

struct word {
    char text[16];
    int count;
    struct word *next;
};

static struct word *table[NBUCKET];
static unsigned long seed = 12345;

NOINLINE static unsigned next_random(void)
{
    seed = seed * 6364136223846793005ul + 1442695040888963407ul;
    return (unsigned)(seed >> 33);
}

NOINLINE static unsigned hash(const char *s)
{
    unsigned h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

NOINLINE static void make_word(char *buf)
{
    int len = 2 + next_random() % 5;
    for (int i = 0; i < len; i++)
        buf[i] = (char)('a' + next_random() % 6);
    buf[len] = '\0';
}

NOINLINE static int same_word(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

NOINLINE static void add_word(const char *s)
{
    unsigned b = hash(s) % NBUCKET;
    for (struct word *w = table[b]; w; w = w->next)
        if (same_word(w->text, s)) {
            w->count++;
            return;
        }
    struct word *w = calloc(1, sizeof *w);
    strcpy(w->text, s);
    w->count = 1;
    w->next = table[b];
    table[b] = w;
}

static int by_count(const void *a, const void *b)
{
    const struct word *x = *(struct word *const *)a, *y = *(struct word *const *)b;
    return y->count - x->count;
}

/* is_even/is_odd: a mutual recursion, which the call graph shows as a cycle */
static int is_odd(int n);
NOINLINE static int is_even(int n)
{
    return n == 0 ? 1 : is_odd(n - 1);
}
NOINLINE static int is_odd(int n)
{
    return n == 0 ? 0 : is_even(n - 1);
}

int main(void)
{
    char buf[16];
    for (int i = 0; i < 2000000; i++) {
        make_word(buf);
        add_word(buf);
    }
    struct word *all[NBUCKET * 4];
    int n = 0;
    for (int b = 0; b < NBUCKET; b++)
        for (struct word *w = table[b]; w && n < NBUCKET * 4; w = w->next)
            all[n++] = w;
    qsort(all, (size_t)n, sizeof all[0], by_count);
    int evens = 0;
    for (int i = 0; i < n; i++)
        evens += is_even(all[i]->count % 64);
    printf("%d distinct words; most frequent: %s (%d); %d even counts\n", n, all[0]->text,
           all[0]->count, evens);
    return 0;
}

/* nocfi.c: main calls work through libnocfi.so's through(), which has no
 * unwind information (nocfilib.c): every sample in work has the stack
 * main;through;work. */
#include <stdio.h>
#include <stdlib.h>

int through(int (*f)(int), int n);

static int work(int n)
{
    volatile unsigned x = (unsigned)n;
    for (long i = 0; i < 20000000; i++)
        x = x * 1103515245u + 12345u;
    return (int)(x & 1);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5, s = 0;
    for (int r = 0; r < rounds; r++)
        s += through(work, r);
    printf("%d\n", s);
    return 0;
}

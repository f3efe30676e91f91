/* evilname.c: a function whose symbol name, once the test has turned each
 * '#' of it into a newline in the binary, would forge a callgrind function
 * "fake" with 999999 samples and extra lines in any text output if
 * printed raw (t0506).  The loop gives it samples to show. */
#include <stdio.h>

__attribute__((noinline)) int evil(int n) __asm__("\"evil#fn=(99) fake#0 999999#\"");

__attribute__((noinline)) int evil(int n)
{
    volatile int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

int main(void)
{
    int t = 0;
    for (int k = 0; k < 300; k++)
        t += evil(1000000);
    printf("%d\n", t);
    return 0;
}

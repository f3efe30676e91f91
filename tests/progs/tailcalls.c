/* tailcalls.c: static arcs that never run (gprof -c): never() is called
 * from three places the run does not reach, one of them a tail branch
 * (B, not BL, on AArch64 at -O2); tailer() reaches tailee() by a tail
 * branch too, so its arc is only in the text.  On AArch64, condjump()
 * reaches never() by a conditional branch, which is not a call to gprof. */
#include <stdio.h>

int never(int x);
#ifdef __aarch64__
int condjump(int x);
__asm__(".text\n.globl condjump\n.type condjump, %function\n.p2align 2\n"
        "condjump:\n\tcmp w0, #7\n\tb.eq never\n\tret\n.size condjump, .-condjump\n");
#else
static int condjump(int x)
{
    return x == 7 ? never(x) : x;
}
#endif

__attribute__((noinline)) int never(int x)
{
    return x * 3 + 1;
}

__attribute__((noinline)) int tailee(int x)
{
    volatile int s = x;
    for (int i = 0; i < 1000; i++)
        s += i;
    return s;
}

__attribute__((noinline)) int tailer(int x)
{
    if (x < 0)
        return never(x) + 1;
    return tailee(x);
}

__attribute__((noinline)) int cond(int x)
{
    if (x > 1000000)
        return never(x);
    return x;
}

int main(int argc, char **argv)
{
    long t = 0;
    (void)argv;
    for (int i = 0; i < 20000; i++)
        t += tailer(i) + cond(i) + condjump(i + 8);
    if (argc > 5)
        t += never(argc);
    printf("%ld\n", t);
    return 0;
}

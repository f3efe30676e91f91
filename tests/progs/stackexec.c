/* stackexec N: 400 frames deep, spins (a thread whose stack is deeper
 * than perf's copies: it walks its own, on the runtime's signal at every
 * sample), then execs itself from there with N - 1, down to 0, which
 * prints "done 0".  No signal of the runtime's may reach the next image,
 * whose default action for it is to end the process. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile unsigned long sink;
static char **args;
static int left;

__attribute__((noinline)) long rec(long d)
{
    volatile long pad[6];
    pad[0] = d;
    if (d <= 1) {
        for (long i = 0; i < 60000000; i++)
            sink += (unsigned long)i;
        if (left > 0) {
            char n[16];
            snprintf(n, sizeof n, "%d", left - 1);
            char *next[] = {args[0], n, NULL};
            execv(args[0], next);
            perror("exec");
            exit(3);
        }
        return 1;
    }
    return rec(d - 1) + pad[0];
}

int main(int argc, char **argv)
{
    args = argv;
    left = argc > 1 ? atoi(argv[1]) : 5;
    rec(400);
    printf("done %d\n", left);
    return 0;
}

/* Call-heavy micro-benchmark: recursive Fibonacci, one mcount per call. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline, noipa)) static long fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 34;
    printf("fib(%d) = %ld\n", n, fib(n));
    return 0;
}

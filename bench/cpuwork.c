/* cpuwork.c: a fixed amount of CPU work with few calls, for measuring what
 * sampling alone costs. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static unsigned long mix(unsigned long n)
{
    unsigned long x = 88172645463325252ul;
    for (unsigned long i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 300000000ul;
    printf("%lu\n", mix(n));
    return 0;
}

/* usehidden.c: spends nearly all its time in libhidden.so's local
 * hidden_work (see libhidden.c); argv[1] is the loop count. */
#include <stdlib.h>

void hidden_entry(long n);

int main(int argc, char **argv)
{
    hidden_entry(argc > 1 ? atol(argv[1]) : 200000000L);
    return 0;
}

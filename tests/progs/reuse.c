/* reuse: dlopen(A), work in it, dlclose(A), dlopen(B) -- B is usually
 * mapped where A was -- work in it.  usage: reuse A.so B.so [SCALE]
 * work_a is called 3 times for 3/4 of the run's CPU time, work_b 5 times
 * for 1/4.  Prints "same" if B's code is where A's was, else "moved". */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    long scale = argc > 3 ? atol(argv[3]) : 1;
    void *a = dlopen(argv[1], RTLD_NOW);
    if (!a)
        return fprintf(stderr, "%s\n", dlerror()), 1;
    void (*wa)(long) = (void (*)(long))dlsym(a, "work_a");
    for (int i = 0; i < 3; i++)
        wa(30000000 * scale); /* 3 x 3/9: 3/4 of all */
    void *where = (void *)wa;
    dlclose(a);
    void *b = dlopen(argv[2], RTLD_NOW);
    if (!b)
        return fprintf(stderr, "%s\n", dlerror()), 1;
    void (*wb)(long) = (void (*)(long))dlsym(b, "work_b");
    for (int i = 0; i < 5; i++)
        wb(6000000 * scale); /* 5 x 1/15 of A's: 1/4 of all */
    puts((void *)wb == where ? "same" : "moved");
    return 0;
}

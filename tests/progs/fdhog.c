/* fdhog.c: opens /dev/null until the descriptor limit (EMFILE) and keeps
 * every descriptor open, so that nothing else can be opened; prints how
 * many it opened.  Build with -pg (and -pthread).
 *   fdhog            then returns: a profile must still be written at
 *                    exit (the runtime holds one descriptor in reserve)
 *   fdhog threads N  then starts N threads one after another, each joined
 *                    before the next; each does nothing and ends at once,
 *                    before a sampler could look at it: none can open its
 *                    perf event, and each must still be counted unsampled.
 *                    Prints "threads N" too. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int hog(void)
{
    int n = 0;
    while (open("/dev/null", O_RDONLY) >= 0)
        n++;
    return errno == EMFILE ? n : -1;
}

static void *nothing(void *arg)
{
    return arg;
}

int main(int argc, char **argv)
{
    int n = hog();
    printf("opened %d\n", n);
    if (argc == 3 && strcmp(argv[1], "threads") == 0) {
        int k = atoi(argv[2]), made = 0;
        for (int i = 0; i < k; i++) {
            pthread_t t;
            if (pthread_create(&t, NULL, nothing, NULL) == 0 && pthread_join(t, NULL) == 0)
                made++;
        }
        printf("threads %d\n", made);
    }
    return 0;
}

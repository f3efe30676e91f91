/* fdhog.c: opens /dev/null until the descriptor limit (EMFILE), keeps
 * every descriptor open and returns: a profile must still be written at
 * exit (the runtime holds one descriptor in reserve for it).  Prints how
 * many it opened.  Build with -pg. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

__attribute__((noinline)) int hog(void)
{
    int n = 0;
    while (open("/dev/null", O_RDONLY) >= 0)
        n++;
    return errno == EMFILE ? n : -1;
}

int main(void)
{
    printf("opened %d\n", hog());
    return 0;
}

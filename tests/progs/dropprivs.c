/* dropprivs: gives up the rights its profile's path needs before it ends.
 * usage: dropprivs setuid UID | chroot DIR
 * Calls f() 300 times before and 700 times after (f 1000 in all), then
 * returns 0; prints "dropped" once the call succeeded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) void f(void) { sink++; }

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    for (int i = 0; i < 300; i++)
        f();
    if (strcmp(argv[1], "setuid") == 0) {
        uid_t u = (uid_t)atol(argv[2]);
        if (setgid(u) != 0 || setuid(u) != 0) {
            perror("setuid");
            return 1;
        }
    } else if (strcmp(argv[1], "chroot") == 0) {
        if (chroot(argv[2]) != 0 || chdir("/") != 0) {
            perror("chroot");
            return 1;
        }
    } else {
        return 2;
    }
    puts("dropped");
    for (int i = 0; i < 700; i++)
        f();
    return 0;
}

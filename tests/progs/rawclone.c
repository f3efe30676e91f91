/* rawclone: a child process made by clone() without CLONE_THREAD.
 * usage: rawclone fork|vm
 * The parent calls f() 10 times; the child, made by clone(SIGCHLD) ("fork":
 * its own memory) or clone(CLONE_VM|SIGCHLD) ("vm": the parent's memory),
 * calls g() 100 times and spins 60 ms of its own CPU, then returns 7 from
 * its function; the parent waits and exits with the child's status. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

static volatile long sink;

__attribute__((noinline)) void f(void) { sink++; }
__attribute__((noinline)) void g(void) { sink += 2; }

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void spin(double ms)
{
    double end = cpu_ms() + ms;
    while (cpu_ms() < end)
        for (int i = 0; i < 100000; i++)
            sink += i;
}

static int child(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++)
        g();
    spin(60);
    return 7;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    for (int i = 0; i < 10; i++)
        f();
    size_t size = 1 << 20;
    char *stack = malloc(size);
    int flags = SIGCHLD | (strcmp(argv[1], "vm") == 0 ? CLONE_VM : 0);
    pid_t pid = clone(child, stack + size, flags, NULL);
    if (pid < 0) {
        perror("clone");
        return 1;
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return 1;
    printf("child %d\n", WEXITSTATUS(st));
    return WEXITSTATUS(st) == 7 ? 0 : 1;
}

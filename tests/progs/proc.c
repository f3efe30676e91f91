/* proc.c: process-level events the runtime must survive, one per mode:
 *   fork        main->f 10, fork; child: main->g 7; parent: main->h 5
 *   exec        main->f 3, then exec /bin/true
 *   threadexit  a thread calls f 5 times, then exit(3) while main waits
 *   lastthread  a thread calls f 4 times; main ends with pthread_exit
 *   deep        recursion 100,000 frames deep: main->rec 1, rec->rec 100000
 *   dump        main->f 1000, raise(SIGUSR1), keep the dumped file as
 *               gmon.dump, then main->f 500 more
 *   moncontrol  main->f 5 with profiling off (moncontrol(0)), then 3 on
 *   chdir DIR   main->f 3, then changes directory to DIR and returns
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noipa))
#endif

void moncontrol(int mode); /* glibc's, or libcgprof's; no header declares it */

static volatile long sink;

NOINLINE void f(void)
{
    sink++;
}

NOINLINE void g(void)
{
    sink += 2;
}

NOINLINE void h(void)
{
    sink += 3;
}

NOINLINE long rec(long n)
{
    long r = n > 0 ? rec(n - 1) + 1 : 0;
    sink += r;
    return r;
}

NOINLINE void *exiter(void *arg)
{
    for (int i = 0; i < 5; i++)
        f();
    exit(3);
    return arg;
}

NOINLINE void *worker(void *arg)
{
    for (int i = 0; i < 4; i++)
        f();
    sink++;
    return arg;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    pthread_t th;
    if (strcmp(mode, "fork") == 0) {
        for (int i = 0; i < 10; i++)
            f();
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 7; i++)
                g();
            printf("child %d\n", (int)getpid());
            return 0;
        }
        int st;
        waitpid(pid, &st, 0);
        for (int i = 0; i < 5; i++)
            h();
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    if (strcmp(mode, "exec") == 0) {
        for (int i = 0; i < 3; i++)
            f();
        execl("/bin/true", "true", (char *)NULL);
        return 1;
    }
    if (strcmp(mode, "threadexit") == 0) {
        pthread_create(&th, NULL, exiter, NULL);
        pthread_join(th, NULL);
        return 0;
    }
    if (strcmp(mode, "lastthread") == 0) {
        pthread_create(&th, NULL, worker, NULL);
        pthread_exit(NULL);
    }
    if (strcmp(mode, "deep") == 0)
        return rec(100000) == 100000 ? 0 : 1;
    if (strcmp(mode, "dump") == 0) {
        for (int i = 0; i < 1000; i++)
            f();
        raise(SIGUSR1);
        if (rename("gmon.out", "gmon.dump") != 0)
            return 1;
        for (int i = 0; i < 500; i++)
            f();
        return 0;
    }
    if (strcmp(mode, "moncontrol") == 0) {
        moncontrol(0);
        for (int i = 0; i < 5; i++)
            f();
        moncontrol(1);
        for (int i = 0; i < 3; i++)
            f();
        return 0;
    }
    if (strcmp(mode, "chdir") == 0 && argc == 3) {
        for (int i = 0; i < 3; i++)
            f();
        return chdir(argv[2]) == 0 ? 0 : 1;
    }
    fprintf(stderr, "usage: proc fork|exec|threadexit|lastthread|deep|dump|moncontrol|chdir DIR\n");
    return 2;
}

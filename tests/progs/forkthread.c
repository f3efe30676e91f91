/* forkthread.c: a threaded process forks, and the child starts a thread
 * of its own: what cgprof's runtime does in every forked child (its
 * helper).  qemu-user 7.2 fails an assertion in the child here, without
 * cgprof; t0700 runs it first to know whether fork can be tested. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void *idle(void *p)
{
    usleep(200000);
    return p;
}

int main(void)
{
    pthread_t t, u;
    if (pthread_create(&t, NULL, idle, NULL) != 0)
        return 1;
    pid_t c = fork();
    if (c == 0)
        _exit(pthread_create(&u, NULL, idle, NULL) == 0 && pthread_join(u, NULL) == 0 ? 0 : 1);
    int st = 0;
    if (c < 0 || waitpid(c, &st, 0) != c)
        return 1;
    pthread_join(t, NULL);
    printf("child %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "failed");
    return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

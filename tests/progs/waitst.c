/* waitst [-t] PROG [ARGS...]: runs a command and prints how it ended, as
 * its parent sees it: "exit N" or "signal N core" / "signal N nocore";
 * with -t, then "cpu MS", the CPU time it used.  Exits 0. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int times = argc > 1 && strcmp(argv[1], "-t") == 0;
    argv += times;
    argc -= times;
    if (argc < 2) {
        fprintf(stderr, "usage: waitst PROG [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid)
        return 2;
    if (WIFEXITED(st))
        printf("exit %d\n", WEXITSTATUS(st));
    else
        printf("signal %d %s\n", WTERMSIG(st), WCOREDUMP(st) ? "core" : "nocore");
    if (times)
        printf("cpu %.0f\n", (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
                                 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
    return 0;
}

/* waitst: runs a command and prints how it ended, as its parent sees it:
 * "exit N" or "signal N core" / "signal N nocore".  Exits 0. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
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
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 2;
    if (WIFEXITED(st))
        printf("exit %d\n", WEXITSTATUS(st));
    else
        printf("signal %d %s\n", WTERMSIG(st), WCOREDUMP(st) ? "core" : "nocore");
    return 0;
}

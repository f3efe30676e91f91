/* tree: a process tree with known call counts.  The parent calls f() 10
 * times and forks three children; child i (1..3) calls g() 100*i times;
 * child 3 then execs this program again as "leaf", which calls h() 7
 * times.  Every process spins 50 ms of CPU.  Totals: f 10, g 600, h 7. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;

NOINLINE void f(void) { sink++; }
NOINLINE void g(void) { sink += 2; }
NOINLINE void h(void) { sink += 3; }

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOINLINE void spin(double ms)
{
    double end = cpu_ms() + ms;
    while (cpu_ms() < end)
        for (int i = 0; i < 200000; i++)
            sink += i;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "leaf") == 0) {
        for (int i = 0; i < 7; i++)
            h();
        spin(50);
        return 0;
    }
    for (int i = 0; i < 10; i++)
        f();
    for (int c = 1; c <= 3; c++) {
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 100 * c; i++)
                g();
            spin(50);
            if (c == 3) {
                execl("/proc/self/exe", argv[0], "leaf", (char *)NULL);
                return 1;
            }
            return 0;
        }
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
            return 1;
    }
    spin(50);
    return 0;
}

/* spin.c: CPU time with a known total.
 *   spin threads N MS   N threads each burn MS ms of their own CPU time in
 *                       burn(); prints the process CPU time in seconds
 *   spin one MS         burn MS ms in a six-byte loop (spin_tight), so a
 *                       couple of histogram bins take every sample
 *   spin fork MS1 MS2   burn MS1 ms, fork; the child burns MS2 ms in
 *                       burn_child and prints "child PID CPU" (its own CPU
 *                       time), the parent then prints "parent CPU"
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;
static double budget;

__attribute__((noinline)) void burn(void)
{
    double end = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) + budget;
    do {
        for (unsigned long i = 0; i < 200000; i++)
            sink += i ^ (i >> 3);
    } while (cpu_seconds(CLOCK_THREAD_CPUTIME_ID) < end);
}

__attribute__((noinline)) void spin_tight(void)
{
    double end = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) + budget;
    do {
        unsigned long n = 50000000;
        __asm__ volatile("1: sub $1, %0\n\tjnz 1b" : "+r"(n));
    } while (cpu_seconds(CLOCK_THREAD_CPUTIME_ID) < end);
}

__attribute__((noinline)) void burn_child(void)
{
    double end = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) + budget;
    do {
        for (unsigned long i = 0; i < 200000; i++)
            sink += i ^ (i >> 5);
    } while (cpu_seconds(CLOCK_THREAD_CPUTIME_ID) < end);
}

static void *thread_main(void *arg)
{
    burn();
    return arg;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "threads") == 0) {
        int n = atoi(argv[2]);
        budget = atoi(argv[3]) / 1000.0;
        pthread_t th[64];
        for (int i = 0; i < n && i < 64; i++)
            pthread_create(&th[i], NULL, thread_main, NULL);
        for (int i = 0; i < n && i < 64; i++)
            pthread_join(th[i], NULL);
    } else if (argc == 3 && strcmp(argv[1], "one") == 0) {
        budget = atoi(argv[2]) / 1000.0;
        spin_tight();
    } else if (argc == 4 && strcmp(argv[1], "fork") == 0) {
        budget = atoi(argv[2]) / 1000.0;
        burn();
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            budget = atoi(argv[3]) / 1000.0;
            burn_child();
            printf("child %d %.3f\n", (int)getpid(), cpu_seconds(CLOCK_PROCESS_CPUTIME_ID));
            return 0;
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 1;
        printf("parent ");
    } else {
        fprintf(stderr, "usage: spin threads N MS | spin one MS | spin fork MS1 MS2\n");
        return 2;
    }
    printf("%.3f\n", cpu_seconds(CLOCK_PROCESS_CPUTIME_ID));
    return 0;
}

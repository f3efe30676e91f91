/* systime.c: CPU time in the kernel, then in user code.  writer() spends
 * its time in pwrite system calls (64 KiB into a file, N times), user()
 * in a plain loop; each measures its own thread CPU time, user and system
 * together, and the program prints "writer S user S" in seconds. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 16];

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void writer(int fd, int n)
{
    for (int i = 0; i < n; i++)
        if (pwrite(fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf)
            exit(1);
}

__attribute__((noinline)) static void user(long n)
{
    volatile double x = 0;
    for (long i = 0; i < n; i++)
        x += i * 0.5;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 60000;
    int fd = open("systime.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 1;
    memset(buf, 1, sizeof buf);
    double t0 = cpu();
    writer(fd, n);
    double t1 = cpu();
    user(100000000);
    double t2 = cpu();
    close(fd);
    unlink("systime.tmp");
    printf("writer %.3f user %.3f\n", t1 - t0, t2 - t1);
    return 0;
}

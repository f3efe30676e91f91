/* kread.c: time in the kernel under a known user frame: readzero() reads
 * /dev/zero 4,000 times a MiB (the kernel's read_zero clears the buffer),
 * then burn() spends about as much CPU in user code. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile double sink;

__attribute__((noinline)) void readzero(int fd, char *buf)
{
    for (int i = 0; i < 4000; i++)
        if (read(fd, buf, 1 << 20) < 0)
            exit(1);
}

__attribute__((noinline)) void burn(void)
{
    double x = 0;
    for (long i = 0; i < 100000000; i++)
        x += (double)i * 0.5;
    sink = x;
}

int main(void)
{
    int fd = open("/dev/zero", O_RDONLY);
    char *buf = malloc(1 << 20);
    if (fd < 0 || !buf)
        return 1;
    readzero(fd, buf);
    burn();
    puts("done");
    return 0;
}

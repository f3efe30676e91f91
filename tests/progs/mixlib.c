/* mixlib.c: time spread over the executable (own_work), a linked shared
 * library (lib_work in libwork.so), a dlopen'ed one (plugin_work in
 * plugin.so) and libc (memmove).  usage: mixlib PLUGIN_PATH [SCALE]
 * Prints its result, then each module's share of the CPU time the four
 * parts took, as it measured them itself (its thread's CPU clock around
 * each call; copy_work, nearly all memmove, counts as libc's):
 *   shares mixlib M libwork.so L plugin.so P libc.so.6 C */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void lib_work(long n);

static volatile double sink;
static char buf_a[1 << 20], buf_b[1 << 20];

__attribute__((noinline)) void own_work(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i & 7) * 1.5;
    sink += x;
}

__attribute__((noinline)) void copy_work(int n)
{
    for (int i = 0; i < n; i++) {
        memmove(buf_a, buf_b + (i & 15), sizeof buf_a - 16);
        sink += buf_a[i & 1023];
    }
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    long scale = argc > 2 ? atol(argv[2]) : 1;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    void (*plugin_work)(long) = (void (*)(long))dlsym(h, "plugin_work");
    double part[4] = {0}, t;
    for (int r = 0; r < 40; r++) {
        t = cpu_s();
        own_work(2000000 * scale);
        part[0] += cpu_s() - t;
        t = cpu_s();
        lib_work(1500000 * scale);
        part[1] += cpu_s() - t;
        t = cpu_s();
        plugin_work(1000000 * scale);
        part[2] += cpu_s() - t;
        t = cpu_s();
        copy_work(15 * (int)scale);
        part[3] += cpu_s() - t;
    }
    dlclose(h);
    double all = part[0] + part[1] + part[2] + part[3];
    printf("%f\n", (double)sink);
    printf("shares mixlib %.2f libwork.so %.2f plugin.so %.2f libc.so.6 %.2f\n",
           100 * part[0] / all, 100 * part[1] / all, 100 * part[2] / all, 100 * part[3] / all);
    return 0;
}

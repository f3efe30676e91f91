/* mixlib.c: time spread over the executable (own_work), a linked shared
 * library (lib_work in libwork.so), a dlopen'ed one (plugin_work in
 * plugin.so) and libc (memmove).  usage: mixlib PLUGIN_PATH [SCALE] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    for (int r = 0; r < 40; r++) {
        own_work(2000000 * scale);
        lib_work(1500000 * scale);
        plugin_work(1000000 * scale);
        copy_work(15 * (int)scale);
    }
    dlclose(h);
    printf("%f\n", (double)sink);
    return 0;
}

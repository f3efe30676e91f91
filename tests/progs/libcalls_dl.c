/* libcalls_dl: dlopens a -pg plugin (libcalls_plugin.c) by path while a
 * thread makes library calls, calls it, closes it, opens it again and calls
 * it again (tests/t0600-libcalls.sh).  Known counts, with N = argv[1]:
 *   lc_plugin_strlen -> strlen  N (first load, RTLD_NOW) + 2N (second, RTLD_LAZY)
 *   lc_plugin_malloc -> malloc, free  N each (second load)
 *   spin -> getpid  100000 (a thread running through both loads)
 * argv[2]: the plugin's path.  With argv[3] = "bare", opens it by its bare
 * name instead (found through the executable's RUNPATH only) and calls it;
 * with "once", loads it once (RTLD_LAZY) and calls strlen and malloc N times
 * each, no thread (for ltrace, which follows no second load).
 * Exit status 42 when every result is as expected. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *spin(void *arg)
{
    static int done;
    long s = 0;
    for (int i = 0; i < 100000; i++)
        s += getpid();
    return s != 0 ? arg : &done;
}

static int run(const char *path, int mode, long n, long strlens, int with_malloc)
{
    void *h = dlopen(path, mode);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    size_t (*f)(long) = (size_t(*)(long))dlsym(h, "lc_plugin_strlen");
    long (*g)(long) = (long (*)(long))dlsym(h, "lc_plugin_malloc");
    if (!f || !g || f(strlens) != 6 * (size_t)strlens || (with_malloc && g(n) != n))
        return 1;
    return dlclose(h) != 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    long n = atol(argv[1]);
    if (argc > 3 && strcmp(argv[3], "bare") == 0)
        return run("libcalls_plugin.so", RTLD_NOW, n, n, 0) ? 1 : 42;
    if (argc > 3 && strcmp(argv[3], "once") == 0)
        return run(argv[2], RTLD_LAZY, n, n, 1) ? 1 : 42;
    pthread_t t;
    void *ok;
    if (pthread_create(&t, NULL, spin, NULL) != 0)
        return 3;
    int bad = run(argv[2], RTLD_NOW, n, n, 0) || run(argv[2], RTLD_LAZY, n, 2 * n, 1);
    if (pthread_join(t, &ok) != 0 || ok)
        return 4;
    return bad ? 1 : 42;
}

/* stackchain: call stacks known by construction.
 *
 * main calls a() and x() in turns; a calls b, b calls leaf(3 units), x
 * calls leaf(1 unit): 3/4 of leaf's time is under main;a;b;leaf and 1/4
 * under main;x;leaf.  A thread runs t_entry -> t_mid -> t_leaf.  main
 * also sorts with qsort, whose comparator (cmp) runs inside libc, and
 * calls plugin_work in a dlopen'ed library (argv[2], if given) through
 * call_plugin.  Every call is followed by work of its own, so no call is
 * a tail call and every frame stays on the stack.  argv[1] scales the
 * work.  It prints "ab_real F": the fraction of the real time in a() and
 * x() spent in a() -- the truth for -e wall, which also counts the time a
 * thread waits for a CPU (3/4 on an idle machine). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

NOINLINE void leaf(long units)
{
    for (long i = 0; i < units * 20000; i++)
        sink += (unsigned long)i;
}

NOINLINE void b(void)
{
    leaf(3);
    sink++;
}

NOINLINE void a(void)
{
    b();
    sink++;
}

NOINLINE void x(void)
{
    leaf(1);
    sink++;
}

NOINLINE void t_leaf(void)
{
    for (long i = 0; i < 20000; i++)
        sink += (unsigned long)i;
}

NOINLINE void t_mid(long n)
{
    for (long i = 0; i < n; i++)
        t_leaf();
    sink++;
}

NOINLINE void *t_entry(void *arg)
{
    t_mid((long)arg);
    sink++;
    return NULL;
}

NOINLINE int cmp(const void *p, const void *q)
{
    double u = *(const double *)p, v = *(const double *)q;
    for (int i = 0; i < 30; i++)
        sink += (unsigned long)i;
    return (u > v) - (u < v);
}

NOINLINE void sorter(long n)
{
    double *v = malloc((size_t)n * sizeof *v);
    if (!v)
        exit(2);
    for (long i = 0; i < n; i++)
        v[i] = (double)((i * 7919) % n);
    qsort(v, (size_t)n, sizeof *v, cmp);
    free(v);
    sink++;
}

NOINLINE void call_plugin(void (*fn)(long), long n)
{
    fn(n);
    sink++;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    pthread_t th;
    if (pthread_create(&th, NULL, t_entry, (void *)(n * 2)) != 0)
        return 2;
    double in_a = 0, in_x = 0;
    for (long i = 0; i < n; i++) {
        double t0 = now();
        a();
        double t1 = now();
        x();
        in_a += t1 - t0;
        in_x += now() - t1;
    }
    sorter(n * 50);
    if (argc > 2) {
        void *h = dlopen(argv[2], RTLD_NOW);
        void (*fn)(long) = h ? (void (*)(long))dlsym(h, "plugin_work") : NULL;
        if (!fn) {
            fprintf(stderr, "stackchain: %s\n", dlerror());
            return 2;
        }
        call_plugin(fn, n);
    }
    pthread_join(th, NULL);
    printf("ab_real %.4f\n", in_a + in_x > 0 ? in_a / (in_a + in_x) : 0.75);
    return 0;
}

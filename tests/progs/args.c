/* args.c: every argument register survives the entry stub, on the first
 * call of an arc (slow path) and the later ones (fast path): six integer
 * and eight double arguments, a varargs call (al = vector count), and a
 * struct returned in memory.  Exits 0 when every result is right. */
#include <stdarg.h>
#include <stdio.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noipa))
#endif

NOINLINE long ints(long a, long b, long c, long d, long e, long f)
{
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f;
}

NOINLINE double dbls(double a, double b, double c, double d, double e, double f, double g, double h)
{
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

NOINLINE double mixed(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (i % 2) ? va_arg(ap, double) : (double)va_arg(ap, int);
    va_end(ap);
    return s;
}

struct big {
    long v[6];
};

NOINLINE struct big make(long a, long b, long c, long d, long e)
{
    struct big r = {{a, b, c, d, e, a + b + c + d + e}};
    return r;
}

int main(void)
{
    int bad = 0;
    for (int round = 0; round < 3; round++) {
        long k = round;
        bad += ints(1 + k, 2, 3, 4, 5, 6 + k) != 91 + 7 * k;
        bad += dbls(1, 2, 3, 4, 5, 6, 7, 8 + k) != 204 + 8.0 * k;
        bad += mixed(4, 1, 2.5, 3, 4.5) != 11.0;
        struct big r = make(1, 2, 3, 4, 5 + k);
        bad += r.v[5] != 15 + k || r.v[0] != 1 || r.v[4] != 5 + k;
    }
    printf("%s\n", bad ? "wrong" : "right");
    return bad != 0;
}

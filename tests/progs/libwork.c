/* libwork.c: a shared library linked into mixlib (see mixlib.c). */
volatile double libwork_sink;

__attribute__((noinline)) void lib_work(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i * 3 + 1) * 0.5;
    libwork_sink += x;
}

/* reuselib.c: built twice, as liba.so (-DWORK=work_a) and libb.so
 * (-DWORK=work_b): the same code under two names, so that the second,
 * dlopen'ed after the first was dlclose'd, is mapped where it was. */
volatile double reuse_sink;

__attribute__((noinline)) void WORK(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i ^ 3) * 0.5;
    reuse_sink += x;
}

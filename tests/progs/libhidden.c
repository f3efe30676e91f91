/* libhidden.c: a shared library whose busy function is local, so that a
 * stripped copy (strip --strip-all keeps only .dynsym) names none of its
 * bytes.  The exported tiny() sits right before it: a reader that ignores
 * symbol sizes charges hidden_work's time to tiny.  See t0270. */
volatile double hidden_sink;

__attribute__((noinline)) void tiny(void)
{
    hidden_sink += 1;
}

static __attribute__((noinline)) void hidden_work(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i * 3 + 1) * 0.5;
    hidden_sink += x;
}

void hidden_entry(long n)
{
    tiny();
    hidden_work(n);
    hidden_sink += 2;
}

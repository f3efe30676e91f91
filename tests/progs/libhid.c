/* libhid.c: a shared library whose work is done by a local function;
 * built stripped (-s), so no symbol names it (see unnamed.c). */
volatile double libhid_sink;

__attribute__((noinline)) static double hidden_work(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i * 3 + 1) * 0.5;
    return x;
}

/* the one exported function: calls the local one */
void lib_entry(long n)
{
    libhid_sink += hidden_work(n);
}

/* called through its PLT stub many times over (unnamed.c) */
long lib_tiny(long i)
{
    return i ^ 5;
}

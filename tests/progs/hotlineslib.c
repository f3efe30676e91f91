/* hotlineslib.c: hotlines.c's library, built with -g: one hot loop on
 * the line marked LIBHOT. */
static volatile double sink;

void lib_spin(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++) x = x * 0.999996 + 4.5; /* LIBHOT */
    sink = x;
}

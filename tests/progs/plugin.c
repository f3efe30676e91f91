/* plugin.c: a shared library that mixlib loads with dlopen (see mixlib.c). */
volatile double plugin_sink;

__attribute__((noinline)) void plugin_work(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)(i ^ 5) * 0.25;
    plugin_sink += x;
}

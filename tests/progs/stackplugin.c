/* stackplugin: a library stackchain dlopens; plugin_work -> plugin_leaf. */
#define NOINLINE __attribute__((noinline))

volatile unsigned long plugin_sink;

NOINLINE void plugin_leaf(void)
{
    for (long i = 0; i < 40000; i++)
        plugin_sink += (unsigned long)i;
}

NOINLINE void plugin_work(long n)
{
    for (long i = 0; i < n; i++)
        plugin_leaf();
    plugin_sink++;
}

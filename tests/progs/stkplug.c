/* stkplug.c: the library tests/progs/stacks.c loads with dlopen in its
 * "plugin" mode: plug_mid() does work in proportion to its argument, as
 * mid() does in the program. */
volatile double plug_sink;

__attribute__((noinline)) void plug_mid(int units)
{
    for (long i = 0; i < (long)units * 1000; i++)
        plug_sink += (double)i * 0.5;
}

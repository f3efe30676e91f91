/* pglib.c: a shared library built with -pg, called by pgmain.c: calls
 * within it (lib_step -> lib_inner) and back into the executable through
 * a function pointer (lib_step -> the callback). */
__attribute__((noinline)) int lib_inner(int x)
{
    return x * 3 + 1;
}

int lib_step(int (*cb)(int), int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += lib_inner(i) + cb(i);
    return s;
}

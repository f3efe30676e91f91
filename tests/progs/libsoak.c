/* libsoak: a -pg library that soak.c dlopens and dlcloses every round. */
static volatile long sink;

__attribute__((noinline)) void lib_fn(void)
{
    sink++;
}

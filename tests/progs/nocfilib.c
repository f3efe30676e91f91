/* nocfilib.c: built without unwind tables (-fno-asynchronous-unwind-tables
 * -fno-unwind-tables): through() has no FDE, only its frame record, which
 * lies at the bottom of a 240-byte frame -- below its caller's stack
 * pointer, not at it.  A walk that crosses it by the record must find its
 * caller's frame some other way than "the record + 16" (nocfi.c). */
int through(int (*f)(int), int n)
{
    volatile char buf[200];
    buf[n & 127] = 1;
    int s = f(n);
    return s + buf[n & 127];
}

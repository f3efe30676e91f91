/* pgmain.c: 4 threads each call libpglib.so's lib_step 250 times (pglib.c),
 * which calls lib_inner 7 times and the executable's callback 7 times:
 * main's threads -> lib_step 1,000, lib_step -> lib_inner 7,000,
 * lib_step -> callback 7,000, exactly. */
#include <pthread.h>
#include <stdio.h>

int lib_step(int (*cb)(int), int n);

__attribute__((noinline)) int callback(int x)
{
    return x ^ 5;
}

static void *worker(void *p)
{
    long s = 0;
    for (int r = 0; r < 250; r++)
        s += lib_step(callback, 7);
    *(long *)p = s;
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    long s[4];
    for (int i = 0; i < 4; i++)
        if (pthread_create(&t[i], NULL, worker, &s[i]) != 0)
            return 1;
    long sum = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        sum += s[i];
    }
    printf("%ld\n", sum);
    return 0;
}

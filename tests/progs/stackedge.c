/* stackedge MODE N: code that is hard to unwind, run while sampled.
 *   deep     recursion N frames deep, spinning at the bottom
 *   jit      a loop in an anonymous executable page (no unwind info)
 *   badrbp   a loop with rbp pointing at unmapped memory
 *   coro     work on a coroutine stack of its own (swapcontext)
 *   altstack work in a SIGUSR1 handler running on a sigaltstack
 *   handler  work in a SIGUSR1 handler, on the thread's own stack
 * Each prints "done" and exits 0: the profile must not change that. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#define NOINLINE __attribute__((noinline))
volatile unsigned long sink;
static long units = 1000;

NOINLINE void spin(long n)
{
    for (long i = 0; i < n * 10000; i++)
        sink += (unsigned long)i;
}

NOINLINE long rec(long depth)
{
    if (depth <= 1) {
        spin(units);
        return 1;
    }
    long r = rec(depth - 1) + 1;
    sink++;
    return r;
}

static void jit(void)
{
    /* mov rcx, imm32; 1: dec rcx; jnz 1b; ret */
    static const unsigned char code[] = {0x48, 0xc7, 0xc1, 0x00, 0x00, 0x00, 0x00,
                                         0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3};
    unsigned char *p =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(2);
    memcpy(p, code, sizeof code);
    unsigned n = 100000000u;
    memcpy(p + 3, &n, 4);
    void (*fn)(void) = (void (*)(void))(void *)p;
    for (long i = 0; i < units / 200 + 1; i++)
        fn();
}

NOINLINE void badrbp(void)
{
    /* rbp saved, pointed at page 0x1000 (never mapped), loop, restored */
    __asm__ volatile("push %%rbp\n\t"
                     "mov $0x1000, %%rbp\n\t"
                     "mov %0, %%rcx\n"
                     "1:\n\t"
                     "dec %%rcx\n\t"
                     "jnz 1b\n\t"
                     "pop %%rbp"
                     :
                     : "r"(units * 200000)
                     : "rcx", "memory");
}

static ucontext_t main_ctx, coro_ctx;

static void coro_body(void)
{
    spin(units);
}

static void coro(void)
{
    size_t size = 256 * 1024;
    char *stack = malloc(size);
    if (!stack || getcontext(&coro_ctx) != 0)
        exit(2);
    coro_ctx.uc_stack.ss_sp = stack;
    coro_ctx.uc_stack.ss_size = size;
    coro_ctx.uc_link = &main_ctx;
    makecontext(&coro_ctx, coro_body, 0);
    if (swapcontext(&main_ctx, &coro_ctx) != 0)
        exit(2);
    free(stack);
}

static void on_usr1(int sig)
{
    (void)sig;
    spin(units / 20 + 1);
}

static void in_handler(int alt)
{
    if (alt) {
        stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16, .ss_flags = 0};
        if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0)
            exit(2);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = alt ? SA_ONSTACK : 0;
    sigaction(SIGUSR1, &sa, NULL);
    for (int i = 0; i < 20; i++)
        raise(SIGUSR1);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (argc > 2)
        units = atol(argv[2]);
    if (strcmp(argv[1], "deep") == 0)
        rec(units);
    else if (strcmp(argv[1], "jit") == 0)
        jit();
    else if (strcmp(argv[1], "badrbp") == 0)
        badrbp();
    else if (strcmp(argv[1], "coro") == 0)
        coro();
    else if (strcmp(argv[1], "altstack") == 0)
        in_handler(1);
    else if (strcmp(argv[1], "handler") == 0)
        in_handler(0);
    else
        return 2;
    puts("done");
    return 0;
}

# x86-64's part of the runtime (the Makefile includes runtime/arch/$(ARCH)/arch.mk):
# the entry stubs, library-call counting (call-site rewriting, with its
# x86-64 instruction-length decoder) and the dlopen interposer (shared
# runtime only)
RT_ARCH_SRC := runtime/libcalls.c runtime/arch/x86_64/insnlen.c
RT_ARCH_ASM := runtime/arch/x86_64/mcount.S runtime/arch/x86_64/libcalls.S
RT_ARCH_SO  := runtime/arch/x86_64/dlopen.S

# AArch64's part of the runtime: the entry stub (C), and library calls not
# counted (no call-site rewriting yet)
RT_ARCH_SRC := runtime/arch/aarch64/mcount.c runtime/arch/aarch64/libcalls.c
RT_ARCH_ASM :=
RT_ARCH_SO  :=

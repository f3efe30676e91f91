# AArch64's part of the runtime: the entry stub (mcount.S finds frompc,
# mcount_arc.c counts), and library calls not counted (no call-site
# rewriting yet)
RT_ARCH_SRC := runtime/arch/aarch64/mcount_arc.c runtime/arch/aarch64/libcalls.c
RT_ARCH_ASM := runtime/arch/aarch64/mcount.S
RT_ARCH_SO  :=

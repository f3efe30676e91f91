/* Trampolines for library calls (runtime/libcalls.c): count the call
 * (return address, target) in this thread's arc table, then jump to the
 * target, which returns straight to the caller.
 *
 * ABI notes (System V x86-64):
 *   - A hooked GOT entry (R_X86_64_JUMP_SLOT) points at one of the stubs
 *     below; the caller reached it by `call foo@plt` and the PLT's `jmp
 *     *GOT`, so on entry (%rsp) is the return address into the caller and
 *     the stack is exactly as the callee expects it.
 *   - Arguments may be live in rdi, rsi, rdx, rcx, r8, r9, xmm0-xmm7 (and
 *     ymm/zmm, see docs/libcalls.md), rax holds the vector-register count
 *     of a varargs call, r10 is preserved too.  r11 is scratch at every
 *     call (the PLT never uses it), so a stub passes its target slot in it
 *     and the common code uses it freely.
 *   - The target is reached by a jump, not a call: the callee sees the
 *     caller's return address and stack pointer, its return, a longjmp out
 *     of it and a call that never returns all work as without us.
 *
 * Each stub is 16 bytes: endbr64, `lea target_slot(%rip), %r11`, `jmp
 * common`.  Stub i's target slot is cg_lc_target[i].
 *
 * The fast path probes the thread's current arc slots with the hash of
 * table.c (archash.h), as mcount.S does: slots at
 * offset 0 of cg_tls, bmask at slots - 8 in the generation's header
 * (static assertions in arcs.c).
 * Were the hashes ever to differ, the probe would miss and the slow path
 * would count the call all the same: only speed would suffer.
 */

#define CG_LC_STUBS 8192

#include "../../archash.h"

	.text

/* The slow path: a new arc or a new thread.  rax rdx rsi rdi are pushed
 * (in that order) and rdx = from, rsi = self = the target.  Saves every
 * other argument register, calls cg_lc_slow_c(from, self) on an aligned
 * stack, restores everything and jumps to the target. */
	.type	cg_lc_slow, @function
	.p2align 4
cg_lc_slow:
	.cfi_startproc
	.cfi_def_cfa_offset 40
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbx, 0
	movq	%rsp, %rbx
	.cfi_def_cfa_register rbx
	andq	$-16, %rsp
	subq	$192, %rsp
	movq	%rsi, 128(%rsp)		/* the target */
	movq	%rcx, 136(%rsp)
	movq	%r8, 144(%rsp)
	movq	%r9, 152(%rsp)
	movq	%r10, 160(%rsp)
	movdqu	%xmm0, 0(%rsp)
	movdqu	%xmm1, 16(%rsp)
	movdqu	%xmm2, 32(%rsp)
	movdqu	%xmm3, 48(%rsp)
	movdqu	%xmm4, 64(%rsp)
	movdqu	%xmm5, 80(%rsp)
	movdqu	%xmm6, 96(%rsp)
	movdqu	%xmm7, 112(%rsp)
	movq	%rdx, %rdi
	call	cg_lc_slow_c
	movdqu	0(%rsp), %xmm0
	movdqu	16(%rsp), %xmm1
	movdqu	32(%rsp), %xmm2
	movdqu	48(%rsp), %xmm3
	movdqu	64(%rsp), %xmm4
	movdqu	80(%rsp), %xmm5
	movdqu	96(%rsp), %xmm6
	movdqu	112(%rsp), %xmm7
	movq	128(%rsp), %r11
	movq	136(%rsp), %rcx
	movq	144(%rsp), %r8
	movq	152(%rsp), %r9
	movq	160(%rsp), %r10
	movq	%rbx, %rsp
	.cfi_def_cfa_register rsp
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbx
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	jmp	*%r11
	.cfi_endproc
	.size	cg_lc_slow, .-cg_lc_slow

/* Common entry of the stubs: r11 = &cg_lc_target[i]. */
	.type	cg_lc_common, @function
	.p2align 4
cg_lc_common:
	.cfi_startproc
	cmpl	$0, cg_recording(%rip)
	je	9f
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	movq	(%r11), %rsi			/* self: the target */
	movq	32(%rsp), %rdx			/* from: the return address */
	movq	cg_tls@GOTTPOFF(%rip), %r11
	movq	%fs:0(%r11), %r11		/* slots */
	movq	-8(%r11), %rdi			/* bmask, in the slots' generation */
	imulq	$CG_ARC_MUL32, %rdx, %rax
	xorq	%rsi, %rax
	imulq	$CG_ARC_MUL32, %rax, %rax
	shrq	$27, %rax
	andq	%rdi, %rax			/* byte offset of the home slot */
	cmpq	%rsi, 8(%r11,%rax)
	jne	2f
	cmpq	%rdx, (%r11,%rax)
	jne	2f
1:	addq	$1, 16(%r11,%rax)
	movq	%rsi, %r11
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	jmp	*%r11
	.cfi_adjust_cfa_offset 32
2:	/* not this slot: probe on; an empty slot means a new arc */
	cmpq	$0, 8(%r11,%rax)
	je	cg_lc_slow
	addq	$32, %rax
	andq	%rdi, %rax
	cmpq	%rsi, 8(%r11,%rax)
	jne	2b
	cmpq	%rdx, (%r11,%rax)
	jne	2b
	jmp	1b
	.cfi_adjust_cfa_offset -32
9:	jmp	*(%r11)				/* not recording: straight on */
	.cfi_endproc
	.size	cg_lc_common, .-cg_lc_common

/* The stubs: CG_LC_STUBS of them, 16 bytes apart (libcalls.c computes
 * stub i's address as cg_lc_stubs + 16 * i). */
	.globl	cg_lc_stubs
	.hidden	cg_lc_stubs
	.type	cg_lc_stubs, @function
	.p2align 4
cg_lc_stubs:
	.cfi_startproc
	.set	.Li, 0
	.rept	CG_LC_STUBS
	.p2align 4
	endbr64
	leaq	cg_lc_target+8*.Li(%rip), %r11
	jmp	cg_lc_common
	.set	.Li, .Li+1
	.endr
	.cfi_endproc
	.size	cg_lc_stubs, .-cg_lc_stubs

	.section .note.GNU-stack,"",@progbits

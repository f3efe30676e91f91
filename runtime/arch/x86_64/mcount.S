/* Entry stubs for code built with -pg (mcount, _mcount) and -pg -mfentry
 * (__fentry__): count the arc in this thread's table, or hand it to C.
 *
 * ABI notes (System V x86-64):
 *   - Arguments of the profiled function may still be live in rdi, rsi,
 *     rdx, rcx, r8, r9 and xmm0-xmm7; rax carries the vector-register count
 *     of a varargs call.  All of them are preserved.  r10 and r11 are
 *     scratch here: r11 at any call site, and r10 -- the static chain of
 *     a nested function -- because gcc saves it around the call itself
 *     where it is live (HIT, below).
 *   - gcc -pg and clang -pg call mcount after the prologue, so rbp is the
 *     callee's frame pointer: (%rsp) is the return address into the callee
 *     (selfpc) and 8(%rbp) is the callee's return address into its caller
 *     (frompc).
 *   - -mfentry calls __fentry__ before the prologue: (%rsp) is selfpc and
 *     8(%rsp) is the return address into the caller (frompc).
 *
 * Fast path (here, in assembly; HIT for an arc in its home slot, in r10
 * and r11 alone, else FAST): hash (frompc, selfpc) the way
 * runtime/table.c does, probe the thread's current slot array (struct
 * cg_tls: slots at offset 0; the generation's header before the slots:
 * budget at -16, bmask at -8 -- checked by static assertions in arcs.c),
 * and add one to the slot's count with a single instruction, so that a
 * signal handler on the same thread cannot interleave with it.  One TLS
 * load gives the slots, and the mask comes from the same generation: a
 * signal handler that publishes a larger generation meanwhile leaves this
 * call counting into the old one, which the writer still sums.
 *
 * Slow path (cg_arc_slow, in C): a new arc or a new thread.  It may call
 * into libc, so every argument register, xmm0-xmm7 included, is saved
 * around it, on a realigned stack.
 */

	.text

/* The arc hash's multiplier, shared with table.c. */
#include "../../archash.h"

/* FAST from, self, slow: with rax and rdx already pushed (2 words), looks
 * the arc up and counts it, or jumps to `slow` with nothing pushed.  FROM
 * and SELF are memory operands, read again where needed rather than held
 * in registers, so that two registers and r11 suffice: each register
 * saved is a push and a pop on every call.
 * A slot is 32 bytes: from (0), self (8), count (16); self == 0 is empty.
 * r11 holds the generation's slots (one TLS load); its header before them
 * holds the probe budget (slots - 16) and bmask (slots - 8), so the slots
 * and their mask always come from one generation, whatever a signal
 * handler publishes meanwhile.  rax walks the slots as a byte offset:
 * bits 32 and up of the hash, times 32, masked by bmask = (nslots - 1) *
 * 32 -- which `shr $27` and `and bmask` give in two instructions. */
.macro FAST from, self, slow
	movq	cg_tls@GOTTPOFF(%rip), %r11
	movq	%fs:0(%r11), %r11		/* slots */
	imulq	$CG_ARC_MUL32, \from, %rax
	xorq	\self, %rax
	imulq	$CG_ARC_MUL32, %rax, %rax
	shrq	$27, %rax
	andq	-8(%r11), %rax			/* byte offset of the home slot */
	movq	\self, %rdx
	cmpq	%rdx, 8(%r11,%rax)
	jne	2f
	movq	\from, %rdx
	cmpq	%rdx, (%r11,%rax)
	jne	2f
1:	addq	$1, 16(%r11,%rax)
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_adjust_cfa_offset 16
2:	/* not this slot: probe on; an empty slot means a new arc.  Each
	 * slot looked at past the home slot counts down the generation's
	 * probe budget (at slots - 16); at zero, the slow path counts this
	 * call and lays the table out again, hottest arcs first. */
	cmpq	$0, 8(%r11,%rax)
	je	3f
	subq	$1, -16(%r11)
	jz	3f
	addq	$32, %rax
	andq	-8(%r11), %rax
	movq	\self, %rdx
	cmpq	%rdx, 8(%r11,%rax)
	jne	2b
	movq	\from, %rdx
	cmpq	%rdx, (%r11,%rax)
	jne	2b
	jmp	1b
3:	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	jmp	\slow
.endm

/* HIT from, self, probe: the arc in its home slot, counted with r10 and
 * r11 alone -- nothing pushed, nothing restored: 16 instructions, `ret`
 * included.  Anything else (another arc at home, an empty slot) goes to
 * `probe`, which saves two registers and starts again with FAST.
 * r10 is free at both stubs' call sites: gcc pushes and pops r10 around
 * its `call mcount` / `call __fentry__` in a nested function, whose static
 * chain it is (objdump of gcc -pg and -pg -mfentry output), clang's -pg
 * call is an ordinary call that clobbers every caller-saved register, and
 * glibc's own mcount clobbers r10 and r11 (it calls C). */
.macro HIT from, self, probe
	movq	cg_tls@GOTTPOFF(%rip), %r11
	movq	%fs:0(%r11), %r11		/* slots */
	imulq	$CG_ARC_MUL32, \from, %r10
	xorq	\self, %r10
	imulq	$CG_ARC_MUL32, %r10, %r10
	shrq	$27, %r10
	andq	-8(%r11), %r10			/* byte offset of the home slot */
	addq	%r10, %r11			/* the home slot */
	movq	\self, %r10
	cmpq	%r10, 8(%r11)
	jne	\probe
	movq	\from, %r10
	cmpq	%r10, (%r11)
	jne	\probe
	addq	$1, 16(%r11)
	ret
.endm

.macro PUSH2
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
.endm

/* The slow path, shared by both stubs, which jump here with rdi and rsi
 * pushed and loaded with frompc and selfpc.  It saves every other argument
 * register, xmm0-xmm7 included, and calls cg_arc_slow on a 16-byte aligned
 * stack: the stubs' callers give no alignment guarantee (gcc -O0 calls
 * mcount with rsp 0 mod 16, and __fentry__ runs before the prologue).
 * rbx, callee-saved, anchors the frame while rsp is realigned. */
	.type	cg_slow_common, @function
	.p2align 4
cg_slow_common:
	.cfi_startproc
	.cfi_def_cfa_offset 24
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbx, 0
	movq	%rsp, %rbx
	.cfi_def_cfa_register rbx
	andq	$-16, %rsp
	subq	$192, %rsp
	movq	%rax, 128(%rsp)
	movq	%rcx, 136(%rsp)
	movq	%rdx, 144(%rsp)
	movq	%r8, 152(%rsp)
	movq	%r9, 160(%rsp)
	movq	%r10, 168(%rsp)
	movdqu	%xmm0, 0(%rsp)
	movdqu	%xmm1, 16(%rsp)
	movdqu	%xmm2, 32(%rsp)
	movdqu	%xmm3, 48(%rsp)
	movdqu	%xmm4, 64(%rsp)
	movdqu	%xmm5, 80(%rsp)
	movdqu	%xmm6, 96(%rsp)
	movdqu	%xmm7, 112(%rsp)
	call	cg_arc_slow
	movdqu	0(%rsp), %xmm0
	movdqu	16(%rsp), %xmm1
	movdqu	32(%rsp), %xmm2
	movdqu	48(%rsp), %xmm3
	movdqu	64(%rsp), %xmm4
	movdqu	80(%rsp), %xmm5
	movdqu	96(%rsp), %xmm6
	movdqu	112(%rsp), %xmm7
	movq	128(%rsp), %rax
	movq	136(%rsp), %rcx
	movq	144(%rsp), %rdx
	movq	152(%rsp), %r8
	movq	160(%rsp), %r9
	movq	168(%rsp), %r10
	movq	%rbx, %rsp
	.cfi_def_cfa_register rsp
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbx
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size	cg_slow_common, .-cg_slow_common

	.globl	mcount
	.type	mcount, @function
	.p2align 4
mcount:
	.cfi_startproc
	cmpl	$0, cg_recording(%rip)
	je	9f
	HIT	8(%rbp), (%rsp), .Lmcount_probe
.Lmcount_probe:
	PUSH2
	FAST	8(%rbp), 16(%rsp), .Lmcount_slow
.Lmcount_slow:
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	movq	8(%rbp), %rdi		/* frompc */
	movq	16(%rsp), %rsi		/* selfpc */
	jmp	cg_slow_common
	.cfi_adjust_cfa_offset -16
9:	ret
	.cfi_endproc
	.size	mcount, .-mcount

	.globl	_mcount
	.type	_mcount, @function
	.set	_mcount, mcount

	.globl	__fentry__
	.type	__fentry__, @function
	.p2align 4
__fentry__:
	.cfi_startproc
	cmpl	$0, cg_recording(%rip)
	je	9f
	HIT	8(%rsp), (%rsp), .Lfentry_probe
.Lfentry_probe:
	PUSH2
	FAST	24(%rsp), 16(%rsp), .Lfentry_slow
.Lfentry_slow:
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	movq	24(%rsp), %rdi		/* frompc */
	movq	16(%rsp), %rsi		/* selfpc */
	jmp	cg_slow_common
	.cfi_adjust_cfa_offset -16
9:	ret
	.cfi_endproc
	.size	__fentry__, .-__fentry__

	.section .note.GNU-stack,"",@progbits

/* _mcount for AArch64 code built with -pg, gcc's or clang's.
 *
 * Both call it after the prologue has made the function's frame record
 * (x29 points at it: [x29] the caller's x29, [x29 + 8] the function's
 * return address), as an ordinary call: x30 is selfpc.  gcc also puts
 * the return address in x0 (mov x0, x30); clang passes nothing.  So
 * frompc is read from the frame record, where both keep it, and stripped
 * of what pointer authentication may have added to it (-mbranch-
 * protection signs it before saving it; XPACLRI, in the hint space, is a
 * no-op without pointer authentication).  The rest is C (mcount_arc.c),
 * reached by a tail branch: its return address is still selfpc.
 *
 * x16 holds selfpc meanwhile: x16 and x17 are free at any call (a PLT or
 * veneer may use them).  Neither compiler allows -pg without frame
 * records (gcc: "-pg and -fomit-frame-pointer are incompatible"; clang
 * keeps them in every function that calls).
 */
	.text
	.globl	_mcount
	.type	_mcount, %function
	.p2align 4
_mcount:
	.cfi_startproc
	mov	x16, x30
	.cfi_register x30, x16
	ldr	x30, [x29, #8]
	hint	#7			/* xpaclri */
	mov	x0, x30
	mov	x30, x16
	.cfi_restore x30
	b	cg_mcount_arc
	.cfi_endproc
	.size	_mcount, . - _mcount

	.section .note.GNU-stack, "", %progbits

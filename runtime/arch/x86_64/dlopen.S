/* dlopen, interposed so that the -pg modules it loads have their library
 * calls counted from the start (runtime/libcalls.c, invariant 6).
 *
 * ABI notes (System V x86-64): dlopen(file = rdi, mode = esi).  glibc's
 * dlopen reads its own return address to find its caller's namespace,
 * RPATH/RUNPATH and $ORIGIN, so this cannot be a C wrapper that calls it:
 * the caller would be libcgprof.  cg_dlopen_route(file, mode, caller)
 * says whether the caller matters.  If it does, it returns glibc's dlopen,
 * and this jumps there with the stack as the caller left it: dlopen sees
 * the caller's return address and returns straight to it.  If not (0),
 * this jumps to cg_dlopen_counted(file, mode), which calls glibc's dlopen
 * itself and hooks what it loaded before returning.  Shared runtime only
 * (in a -static program libc.a's dlopen stands).
 */
	.text
	.globl	dlopen
	.type	dlopen, @function
	.p2align 4
dlopen:
	.cfi_startproc
	endbr64
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp			/* the call below on a 16-byte boundary */
	.cfi_adjust_cfa_offset 8
	movq	24(%rsp), %rdx			/* the caller: our return address */
	call	cg_dlopen_route
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	testq	%rax, %rax
	jz	cg_dlopen_counted
	jmp	*%rax
	.cfi_endproc
	.size	dlopen, .-dlopen

	.section .note.GNU-stack,"",@progbits

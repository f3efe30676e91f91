/* The floor for overhead measurements: -pg entry points that return at
 * once, and glibc's profiling start/stop made no-ops, so a program pays
 * for the calls to mcount and nothing else. */
	.text
	.globl mcount, _mcount, __fentry__, __monstartup, _mcleanup
	.type mcount, @function
	.type _mcount, @function
	.type __fentry__, @function
	.type __monstartup, @function
	.type _mcleanup, @function
mcount:
_mcount:
__fentry__:
__monstartup:
_mcleanup:
	.cfi_startproc
	ret
	.cfi_endproc
	.size mcount, .-mcount
	.section .note.GNU-stack,"",@progbits

/* The arc hash's multiplier, shared by table.c (C) and the assembly fast
 * paths (mcount.S, libcalls.S): a 32-bit immediate, so that `imul $M`
 * needs no memory load, sign-extended to 64 bits by the instruction as by
 * CG_ARC_MUL in rt.h.  The home slot of (from, self) among 2^k slots is
 * bits 32 .. 32+k-1 of ((from * M) ^ self) * M: two multiplies mix both
 * keys into the high bits, and the first can read `from` straight from
 * memory.  Nothing here but #defines: the assembler includes it too. */
#ifndef CG_ARCHASH_H
#define CG_ARCHASH_H
#define CG_ARC_MUL32 (-0x61C8864F)
#endif

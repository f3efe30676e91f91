/* x86-64 instruction lengths, for the library-call site patching
 * (libcalls.c, docs/libcalls.md): the runtime needs to walk a function
 * instruction by instruction to find its `call *sym@GOTPCREL(%rip)` and
 * `jmp *sym@GOTPCREL(%rip)` at real instruction boundaries, and it cannot
 * link a disassembler (libc only).
 *
 * cg_insn_len(p, n) is the length of the instruction at p (at most n bytes
 * readable), or 0 when it is not one this decoder knows for sure: invalid
 * in 64-bit mode, 3DNow!, XOP, AMD's SSE4a extrq/insertq forms, ud0 and
 * ud1 (whether a ModRM follows differs between manuals), a relative jump
 * or call with a 66 prefix (Intel ignores it, AMD shortens the offset), a
 * prefix run past 15 bytes, or bytes past n.  A 0 makes the caller leave the whole
 * function alone, so a doubt costs a count, never a wrong patch.
 *
 * Invariant: every non-zero length equals capstone's for the same bytes
 * (tests/unit/insnlen_vs_capstone.c, run by t0600, over libc, libstdc++ and
 * the cgprof binary).
 */
#include "rt.h"

/* One-byte map: what follows the opcode. */
enum {
    X = 0, /* invalid in 64-bit mode, or not known: give up */
    N,     /* nothing */
    M,     /* ModRM */
    MB,    /* ModRM + imm8 */
    MZ,    /* ModRM + imm16/32 (operand size) */
    B,     /* imm8 (or rel8) */
    Z,     /* imm16/32 (or rel32) */
    W,     /* imm16 */
    WB,    /* imm16 + imm8 (enter) */
    V,     /* mov r, imm16/32/64 (B8-BF) */
    O,     /* moffs: address size (A0-A3) */
    G3,    /* F6/F7: ModRM, imm only for /0 and /1 (test) */
    T,     /* 0F: the two-byte map */
    P,     /* prefix (handled before the table) */
    VX,    /* C4/C5: VEX */
    EV,    /* 62: EVEX */
    XO,    /* 8F: pop r/m, or XOP (given up) */
    R,     /* 0F 20-23: mov to/from control and debug registers, ModRM
              always a register form whatever its mod */
};

/* clang-format off */
static const unsigned char one[256] = {
    /* 00 */ M,  M,  M,  M,  B,  Z,  X,  X,  M,  M,  M,  M,  B,  Z,  X,  T,
    /* 10 */ M,  M,  M,  M,  B,  Z,  X,  X,  M,  M,  M,  M,  B,  Z,  X,  X,
    /* 20 */ M,  M,  M,  M,  B,  Z,  P,  X,  M,  M,  M,  M,  B,  Z,  P,  X,
    /* 30 */ M,  M,  M,  M,  B,  Z,  P,  X,  M,  M,  M,  M,  B,  Z,  P,  X,
    /* 40 */ P,  P,  P,  P,  P,  P,  P,  P,  P,  P,  P,  P,  P,  P,  P,  P,
    /* 50 */ N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  N,
    /* 60 */ X,  X,  EV, M,  P,  P,  P,  P,  Z,  MZ, B,  MB, N,  N,  N,  N,
    /* 70 */ B,  B,  B,  B,  B,  B,  B,  B,  B,  B,  B,  B,  B,  B,  B,  B,
    /* 80 */ MB, MZ, X,  MB, M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  XO,
    /* 90 */ N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  X,  N,  N,  N,  N,  N,
    /* A0 */ O,  O,  O,  O,  N,  N,  N,  N,  B,  Z,  N,  N,  N,  N,  N,  N,
    /* B0 */ B,  B,  B,  B,  B,  B,  B,  B,  V,  V,  V,  V,  V,  V,  V,  V,
    /* C0 */ MB, MB, W,  N,  VX, VX, MB, MZ, WB, N,  W,  N,  N,  B,  X,  N,
    /* D0 */ M,  M,  M,  M,  X,  X,  X,  N,  M,  M,  M,  M,  M,  M,  M,  M,
    /* E0 */ B,  B,  B,  B,  B,  B,  B,  B,  Z,  Z,  X,  B,  N,  N,  N,  N,
    /* F0 */ P,  N,  P,  P,  N,  N,  G3, G3, N,  N,  N,  N,  N,  N,  M,  M,
};

/* Two-byte map (0F xx). */
static const unsigned char two[256] = {
    /* 00 */ M,  M,  M,  M,  X,  N,  N,  N,  N,  N,  X,  N,  X,  M,  N,  X,
    /* 10 */ M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,
    /* 20 */ R,  R,  R,  R,  X,  X,  X,  X,  M,  M,  M,  M,  M,  M,  M,  M,
    /* 30 */ N,  N,  N,  N,  N,  N,  X,  N,  T,  X,  T,  X,  X,  X,  X,  X,
    /* 40 */ M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,
    /* 50 */ M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,
    /* 60 */ M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,
    /* 70 */ MB, MB, MB, MB, M,  M,  M,  N,  M,  M,  X,  X,  M,  M,  M,  M,
    /* 80 */ Z,  Z,  Z,  Z,  Z,  Z,  Z,  Z,  Z,  Z,  Z,  Z,  Z,  Z,  Z,  Z,
    /* 90 */ M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,
    /* A0 */ N,  N,  N,  M,  MB, M,  X,  X,  N,  N,  N,  M,  MB, M,  M,  M,
    /* B0 */ M,  M,  M,  M,  M,  M,  M,  M,  M,  X,  MB, M,  M,  M,  M,  M,
    /* C0 */ M,  M,  MB, M,  MB, MB, MB, M,  N,  N,  N,  N,  N,  N,  N,  N,
    /* D0 */ M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,
    /* E0 */ M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,
    /* F0 */ M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  X,
};
/* clang-format on */

/* The bytes a ModRM (and its SIB and displacement) take, from p; 0 if
 * past END. */
static size_t modrm_len(const unsigned char *p, const unsigned char *end)
{
    if (p >= end)
        return 0;
    unsigned mod = p[0] >> 6, rm = p[0] & 7;
    size_t n = 1;
    if (mod == 3)
        return n;
    if (rm == 4) {
        if (p + 1 >= end)
            return 0;
        if (mod == 0 && (p[1] & 7) == 5)
            n += 4;
        n++;
    } else if (mod == 0 && rm == 5) {
        n += 4; /* rip-relative */
    }
    if (mod == 1)
        n += 1;
    else if (mod == 2)
        n += 4;
    return n;
}

/* Immediate bytes of a VEX/EVEX instruction of MAP (1: 0F, 2: 0F38,
 * 3: 0F3A) with opcode OP; -1 if not known. */
static int vex_imm(unsigned map, unsigned op)
{
    if (map == 3)
        return 1;
    if (map == 2)
        return 0;
    if (map == 1)
        return two[op] == MB ? 1 : (two[op] == X || two[op] == Z || two[op] == T) ? -1 : 0;
    return -1;
}

size_t cg_insn_len(const unsigned char *p, size_t avail)
{
    const unsigned char *s = p, *end = p + avail;
    int opsize16 = 0, addr32 = 0, rexw = 0, rep = 0;
    /* prefixes: legacy ones in any order, REX last (a REX followed by a
     * legacy prefix is ignored) */
    for (;; p++) {
        if (p >= end || p - s >= 15)
            return 0;
        unsigned c = *p;
        if (c >= 0x40 && c <= 0x4f) {
            rexw = (c & 8) != 0;
            if (p + 1 < end && one[p[1]] == P && !(p[1] >= 0x40 && p[1] <= 0x4f))
                rexw = 0;
            continue;
        }
        if (one[c] != P)
            break;
        rexw = 0;
        if (c == 0x66)
            opsize16 = 1;
        else if (c == 0x67)
            addr32 = 1;
        else if (c == 0xf2 || c == 0xf3)
            rep = (int)c;
    }
    unsigned op = *p++;
    size_t zsize = opsize16 && !rexw ? 2 : 4;
    size_t n, m;
    switch (one[op]) {
    case N:
        n = 0;
        break;
    case M:
        if (!(n = modrm_len(p, end)))
            return 0;
        break;
    case MB:
        if (!(n = modrm_len(p, end)))
            return 0;
        n += 1;
        break;
    case MZ:
        if (!(n = modrm_len(p, end)))
            return 0;
        n += zsize;
        break;
    case B:
        n = 1;
        break;
    case Z:
        if ((op == 0xe8 || op == 0xe9) && opsize16)
            return 0;
        n = (op == 0xe8 || op == 0xe9) ? 4 : zsize;
        break;
    case W:
        n = 2;
        break;
    case WB:
        n = 3;
        break;
    case V:
        n = rexw ? 8 : zsize;
        break;
    case O:
        n = addr32 ? 4 : 8;
        break;
    case G3:
        if (!(n = modrm_len(p, end)))
            return 0;
        if (((p[0] >> 3) & 7) < 2)
            n += op == 0xf6 ? 1 : zsize;
        break;
    case XO:
        if (p >= end || ((p[0] >> 3) & 7) != 0)
            return 0; /* XOP */
        if (!(n = modrm_len(p, end)))
            return 0;
        break;
    case T: {
        if (p >= end)
            return 0;
        unsigned op2 = *p++;
        if (op2 == 0x38 || op2 == 0x3a) {
            if (p >= end)
                return 0;
            p++; /* the third opcode byte */
            if (!(n = modrm_len(p, end)))
                return 0;
            n += op2 == 0x3a;
            break;
        }
        if (op2 == 0x78 && (opsize16 || rep == 0xf2))
            return 0; /* SSE4a extrq/insertq with two immediates */
        switch (two[op2]) {
        case N:
            n = 0;
            break;
        case M:
            if (!(n = modrm_len(p, end)))
                return 0;
            break;
        case MB:
            if (!(n = modrm_len(p, end)))
                return 0;
            n += 1;
            break;
        case Z:
            if (opsize16)
                return 0;
            n = 4; /* jcc rel32 */
            break;
        case R:
            n = 1;
            break;
        default:
            return 0;
        }
        break;
    }
    case VX: {
        /* C5 R.vvvv.L.pp (map 0F); C4 RXB.mmmmm W.vvvv.L.pp; then opcode */
        unsigned map;
        if (op == 0xc5) {
            if (p + 1 >= end)
                return 0;
            map = 1;
            p += 1;
        } else {
            if (p + 2 >= end)
                return 0;
            map = p[0] & 0x1f;
            p += 2;
        }
        unsigned vop = *p++;
        int imm = vex_imm(map, vop);
        if (imm < 0)
            return 0;
        if (map == 1 && vop == 0x77) { /* vzeroupper, vzeroall */
            n = 0;
            break;
        }
        if (!(n = modrm_len(p, end)))
            return 0;
        n += (size_t)imm;
        break;
    }
    case EV: {
        /* 62 P0 P1 P2 opcode ModRM: always a ModRM; disp8 is scaled, not longer */
        if (p + 3 >= end)
            return 0;
        unsigned map = p[0] & 7;
        if ((p[1] & 4) == 0)
            return 0; /* not EVEX */
        p += 3;
        unsigned vop = *p++;
        int imm;
        if (map == 5 || map == 6)
            imm = 0;
        else if ((imm = vex_imm(map, vop)) < 0)
            return 0;
        if (!(n = modrm_len(p, end)))
            return 0;
        n += (size_t)imm;
        break;
    }
    default:
        return 0;
    }
    m = (size_t)(p - s) + n;
    return m <= avail && m <= 15 ? m : 0;
}

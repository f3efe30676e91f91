#!/usr/bin/env python3
"""inline_compare.py: report --inline's self time per function against
perf's samples named by binutils' addr2line -i.

    inline_compare.py PERF_SCRIPT EXE REPORT [MIN_SHARE] [TOLERANCE]

PERF_SCRIPT: `perf script -F comm,tid,ip,sym,symoff,dso` of a `perf
record -g` (any call-graph mode) of the same run; EXE: the program (built with -g); REPORT: `cgprof report -b
-p --inline` of cgprof's profile.  perf's samples whose innermost user frame
is in EXE (kernel-mode samples count there, as cgprof charges them) are placed at SYMBOL+OFFSET (nm's address of the symbol, so a PIE
needs no load address) and named by the innermost function addr2line -i
gives there: the function whose code ran, inlined or not.  cgprof's flat
profile names the same code NAME [inlined] or NAME.  Both are taken as
shares of the samples in EXE's code; compiler clones (NAME.part.0, ...)
are compared under their source name, which is what addr2line names.
Every function at MIN_SHARE% (default 5) or more in perf must be within
TOLERANCE points (default 3) in cgprof.  Prints the table; exits 1 on a
mismatch.
"""
import os
import re
import subprocess
import sys


def base(name):
    name = name.replace(" [inlined]", "")
    return re.sub(r"\.(part|isra|constprop|cold|lto_priv)(\.\d+)*$", "", name)


def main():
    script, exe, report = sys.argv[1:4]
    min_share = float(sys.argv[4]) if len(sys.argv) > 4 else 5
    tol = float(sys.argv[5]) if len(sys.argv) > 5 else 3
    comm = os.path.basename(exe)
    syms = {}
    for l in subprocess.run(["nm", exe], capture_output=True, text=True).stdout.split("\n"):
        p = l.split()
        if len(p) == 3 and p[1] in "tTwW":
            syms.setdefault(p[2], int(p[0], 16))
    exe_path = os.path.realpath(exe)
    addrs = []
    # with call chains (perf record -g): a sample is a header line, then
    # its frames innermost first; a kernel-mode sample counts at its
    # innermost user frame, as cgprof charges it
    keep, done = False, True
    for l in open(script, errors="replace"):
        if not l.strip():
            keep, done = False, True
            continue
        if not l[0].isspace():
            keep, done = l.split()[0] == comm, False
            continue
        m = re.match(r"\s*[0-9a-f]+\s+(\S+)\+0x([0-9a-f]+)\s+\((.*)\)\s*$", l)
        if not keep or done or not m or "kernel.kallsyms" in m.group(3):
            continue
        done = True  # the innermost user frame
        if os.path.realpath(m.group(3)) == exe_path and m.group(1) in syms:
            addrs.append(syms[m.group(1)] + int(m.group(2), 16))
    uniq = sorted(set(addrs))
    out = subprocess.run(["addr2line", "-a", "-f", "-i", "-e", exe],
                         input="\n".join("%x" % a for a in uniq), capture_output=True,
                         text=True).stdout.split("\n")
    inner, cur = {}, None
    for l in out:
        if l.startswith("0x"):
            cur = int(l, 16)
        elif cur is not None and l and ":" not in l and cur not in inner:
            inner[cur] = l  # the innermost function comes first
    perf = {}
    for a in addrs:
        n = base(inner.get(a, "??"))
        perf[n] = perf.get(n, 0) + 1
    cg = {}
    for l in open(report):
        m = re.match(r"^\s*([\d.]+)\s+[\d.]+\s+[\d.]+\s+(?:\d+\s+[\d.]+\s+[\d.]+\s+)?(\S.*?)\s*$", l)
        if not m or (" [" in m.group(2) and not m.group(2).endswith(" [inlined]")):
            continue  # another module's function
        n = base(m.group(2))
        cg[n] = cg.get(n, 0) + float(m.group(1))
    pt, ct = sum(perf.values()), sum(cg.values())
    if pt < 500 or ct <= 0:
        print("too few samples: perf %d, cgprof %.2f%%" % (pt, ct))
        return 1
    bad = 0
    print("%-28s %8s %8s" % ("function", "perf %", "cgprof %"))
    for n in sorted(perf, key=lambda k: -perf[k]):
        p = 100.0 * perf[n] / pt
        if p < min_share:
            break
        c = 100.0 * cg.get(n, 0) / ct
        ok = abs(p - c) <= tol
        bad += not ok
        print("%-28s %8.2f %8.2f %s" % (n, p, c, "" if ok else "MISMATCH"))
    print("perf samples in %s: %d" % (comm, pt))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""perf_compare.py: cgprof's measured inclusive times against perf's.

    perf_compare.py PERF_SCRIPT CGPROF_FOLDED [MIN_SHARE] [TOLERANCE] [COMM]

PERF_SCRIPT is the text of `perf script -F comm,tid,ip,sym,dso --no-inline` of a
`perf record --call-graph dwarf` run of the same program; CGPROF_JSON is
`cgprof export -f folded` of a `cgprof record` run (equal to the report:
tests/export_same.py).  perf is the independent
truth: its own unwinder (libdw/libunwind on the copied stack), its own
symbol names.

Both sides are made comparable the way cgprof's report is defined:
  - samples whose innermost user frame is the profiler's own call counting
    (mcount, libcgprof) are left out, as cgprof leaves them out;
  - kernel frames are dropped (a kernel-mode sample counts for the user
    frames it came from, as cgprof charges it);
  - shares are of the time under `main` on each side, so the start-up,
    loader and exit work perf also sees (exec, ld.so) do not matter;
  - leaf functions perf cannot unwind out of are left out of both;
  - names of one address (aliases: glibc's weak snprintf and global
    __snprintf) are one function: each side's name is taken to the
    first, sorted, of the names binutils' nm gives the address in the dso
    perf named (perf prefers global names, gprof and cgprof others).

Every function at MIN_SHARE% or more of main's time in perf (default 5)
must be in cgprof under the same name, its share within TOLERANCE points
(default 4).  COMM: only perf's samples of that command.  Prints the table; exits 1 on a mismatch.
"""
import subprocess
import sys


def perf_samples(path, comm=None):
    """Each sample's user frames, innermost first, as (symbol, dso); only
    the samples of command COMM if given (the header's first word)."""
    samples, cur, in_sample, keep, dsos = [], [], False, True, set()
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if in_sample and keep:
                    samples.append(cur)
                cur, in_sample = [], False
                continue
            if not line.startswith("\t"):
                in_sample = True  # the sample's header (comm tid)
                keep = comm is None or line.split()[0] == comm
                continue
            parts = line.strip().split(None, 1)
            if len(parts) < 2:
                continue
            rest = parts[1]
            dso = ""
            if rest.endswith(")") and " (" in rest:
                rest, dso = rest.rsplit(" (", 1)
                dso = dso[:-1]
            if "kernel.kallsyms" in dso or dso.startswith("[") and dso != "[unknown]":
                continue  # kernel (and vdso-like) frames
            sym = rest.split("+0x")[0].strip()
            cur.append((sym, dso))
            dsos.add(dso)
    if in_sample and keep:
        samples.append(cur)
    return samples, dsos


def aliases(dsos):
    """Each function name defined at an address that has other names too,
    in any of DSOS (paths), to the first of those names, sorted."""
    canon = {}
    for dso in dsos:
        if not dso.startswith("/"):
            continue
        at = {}
        for flags in (["-D"], []):
            try:
                out = subprocess.run(["nm", "--defined-only"] + flags + [dso], capture_output=True,
                                     text=True).stdout
            except OSError:
                continue
            for line in out.splitlines():
                f = line.split()
                if len(f) == 3 and f[1] in "TtWi":
                    at.setdefault(int(f[0], 16), set()).add(f[2].split("@")[0])
        for names in at.values():
            if len(names) > 1:
                first = sorted(names)[0]
                for n in names:
                    canon.setdefault(n, first)
    return canon


def cgprof_samples(path):
    """Each folded stack of cgprof's export, innermost first, with its count."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, n = line.rsplit(" ", 1)
            frames = [x.split(" [")[0] for x in stack.split(";")]
            out.append((frames[::-1], int(n)))
    return out


def shares(samples, skip_leaves):
    """Inclusive shares of the samples under main, in % of those."""
    incl, under = {}, 0
    for frames, n in samples:
        if not frames or frames[0] in skip_leaves or "main" not in frames:
            continue
        under += n
        for s in set(frames):
            incl[s] = incl.get(s, 0) + n
    return {s: 100.0 * n / under for s, n in incl.items()} if under else {}, under


def main():
    perf_path, cg_path = sys.argv[1], sys.argv[2]
    min_share = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
    tol = float(sys.argv[4]) if len(sys.argv) > 4 else 4.0
    comm = sys.argv[5] if len(sys.argv) > 5 else None

    perf, own = [], 0
    psamples, dsos = perf_samples(perf_path, comm)
    canon = aliases(dsos)
    for frames in psamples:
        if not frames:
            continue
        leaf, leaf_dso = frames[0]
        if leaf in ("mcount", "_mcount", "__fentry__") or "libcgprof" in leaf_dso:
            own += 1
            continue
        perf.append(([canon.get(s, s) for s, _ in frames], 1))
    # perf's unwinder cannot step out of some functions (glibc's
    # _int_malloc here: one frame, nothing above): where more than a fifth
    # of perf's samples in a leaf function end without reaching main, that
    # function's samples are left out on both sides alike
    tried, failed = {}, {}
    for frames, _ in perf:
        tried[frames[0]] = tried.get(frames[0], 0) + 1
        if len(frames) == 1:
            failed[frames[0]] = failed.get(frames[0], 0) + 1
    skip = {f for f, n in failed.items() if n > tried[f] / 5}
    p_share, p_n = shares(perf, skip)
    c_share, c_n = shares([([canon.get(s, s) for s in f], n) for f, n in cgprof_samples(cg_path)], skip)
    if p_n < 500 or c_n < 500:
        print("too few samples under main: perf %d, cgprof %d" % (p_n, c_n))
        return 1
    print("under main: perf %d samples, cgprof %d (%d of perf's in the profiler's counting left "
          "out; leaves perf cannot unwind, left out of both: %s)"
          % (p_n, c_n, own, ", ".join(sorted(skip)) or "none"))
    print("%-32s %8s %8s" % ("function", "perf %", "cgprof %"))
    bad = 0
    for s, p in sorted(p_share.items(), key=lambda kv: -kv[1]):
        if p < min_share:
            break
        if s in ("[unknown]", "__libc_start_call_main", "__libc_start_main", "_start"):
            continue  # outside main, or unnamed in perf
        c = c_share.get(s)
        ok = c is not None and abs(c - p) <= tol
        print("%-32s %8.1f %8s%s" % (s, p, "-" if c is None else "%.1f" % c,
                                     "" if ok else ("   <-- not in cgprof's profile" if c is None else
                                                    "   <-- more than %g points apart" % tol)))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

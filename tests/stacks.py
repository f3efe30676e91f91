#!/usr/bin/env python3
"""stacks.py PROFILE: the sampled call stacks of a cgprof profile, folded.

An independent reader for the tests: it decodes the file by the layout in
docs/profile-format.md (not with cgprof's reader) and names frames with
binutils' nm (not with cgprof's symbolizer). Prints one line per distinct
stack, outermost frame first, `f1;f2;leaf COUNT`, after a header line
`# samples S stacked T cut C lost L nodes N`. Frames in a module without
a symbol table print as `[module]`, a cut stack's dropped frames as
`[cut]`. Exits 1 if the profile is inconsistent (the stacks and lost
samples do not add up to the samples, a parent after its child, ...).
"""
import bisect
import collections
import os
import struct
import subprocess
import sys

NO_MODULE, CUT_MODULE, NO_PARENT = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFF


def fail(msg):
    print("stacks.py: %s: %s" % (sys.argv[1], msg), file=sys.stderr)
    sys.exit(1)


def read(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89CGPROF\n":
        fail("not a cgprof profile")
    pos = struct.unpack_from("<I", data, 12)[0]
    mods, samples, stacks, hdr = {}, 0, None, None
    while pos < len(data):
        tag, _, size = struct.unpack_from("<IIQ", data, pos)
        p = pos + 16
        if tag == 2:
            mid, _, _, _, _, blen, plen = struct.unpack_from("<IIQQQII", data, p)
            mods[mid] = data[p + 40 + blen:p + 40 + blen + plen].decode()
        elif tag == 3:
            (n,) = struct.unpack_from("<Q", data, p)
            samples += sum(struct.unpack_from("<Q", data, p + 8 + 24 * i + 16)[0] for i in range(n))
        elif tag == 8:
            ver, _, n, limit, cut, lost = struct.unpack_from("<IIQQQQ", data, p)
            if ver != 1:
                fail("STACKS layout %d" % ver)
            hdr = (limit, cut, lost)
            stacks = [struct.unpack_from("<IIQQ", data, p + 40 + 24 * i) for i in range(n)]
        pos = p + size
    return mods, samples, stacks, hdr


_syms = {}


def symbols(path):
    if path not in _syms:
        out = []
        if os.path.exists(path):
            txt = subprocess.run(["nm", "--defined-only", path], capture_output=True,
                                 text=True).stdout
            for line in txt.splitlines():
                f = line.split()
                if len(f) == 3 and f[1] in "tTwWi":
                    out.append((int(f[0], 16), f[2]))
        out.sort()
        _syms[path] = out
    return _syms[path]


def name(mods, m, a):
    if m == CUT_MODULE:
        return "[cut]"
    if m == NO_MODULE or m not in mods:
        return "[unknown]"
    path = mods[m]
    t = symbols(path)
    i = bisect.bisect_right(t, (a, "\uffff")) - 1
    if i < 0:
        return "[%s]" % os.path.basename(path)
    return t[i][1]


def main():
    mods, samples, stacks, hdr = read(sys.argv[1])
    if stacks is None:
        print("# no stacks")
        return
    limit, cut, lost = hdr
    folded = collections.Counter()
    names = [None] * len(stacks)
    for i, (parent, m, a, count) in enumerate(stacks):
        if parent != NO_PARENT and parent >= i:
            fail("node %d has a later parent %d" % (i, parent))
        if m == CUT_MODULE and parent != NO_PARENT:
            fail("a cut marker below the root")
        names[i] = name(mods, m, a)
    total = 0
    for i, (parent, m, a, count) in enumerate(stacks):
        if not count:
            continue
        frames, j = [], i
        while j != NO_PARENT:
            frames.append(names[j])
            j = stacks[j][0]
        folded[";".join(reversed(frames))] += count
        total += count
    if total + lost != samples:
        fail("stacks %d + lost %d != samples %d" % (total, lost, samples))
    print("# samples %d stacked %d cut %d lost %d nodes %d limit %d" %
          (samples, total, cut, lost, len(stacks), limit))
    for k, v in sorted(folded.items(), key=lambda kv: -kv[1]):
        print("%s %d" % (k, v))


main()

#!/usr/bin/env python3
"""export_same.py REPORT.json KIND FILE: checks that one export of a
profile gives every function the same self and inclusive samples, and the
same total, as `cgprof report --json` of it, under the same names.

KIND is the reader's output read from FILE:
  folded      cgprof export -f folded (lines "a;b;c COUNT")
  pprof-top   go tool pprof -top -nodefraction=0 -nodecount=100000
  callgrind   "SELF INCL" pairs from callgrind_annotate, as written by
              t0266: "self NAME VALUE" and "incl NAME VALUE" lines
  dot         cgprof export -f dot -t 0
  html        cgprof export -f html (the page's embedded JSON; its calls
              too: null where the report leaves them blank)
Prints each difference; exit status 1 if there is one.  Time is compared
in samples (report seconds x rate), to within half a sample."""
import json
import re
import sys


def report(path):
    d = json.load(open(path))
    rate = d["rate"]
    funcs = {}
    for f in d["functions"]:
        calls = f.get("calls", 0) + f.get("self_calls", 0)
        funcs[f["name"]] = (f["self_seconds"] * rate, f.get("inclusive_seconds", 0) * rate,
                            calls or None)
    return d["total_seconds"] * rate, rate, funcs


def folded(path):
    selfs, incl, total = {}, {}, 0.0
    for line in open(path):
        stack, count = line.rstrip("\n").rsplit(" ", 1)
        c = float(count)
        names = stack.split(";")
        total += c
        selfs[names[-1]] = selfs.get(names[-1], 0) + c
        for n in set(names):
            incl[n] = incl.get(n, 0) + c
    return total, {n: (selfs.get(n, 0), incl[n]) for n in incl}


UNITS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3, "mins": 6e4, "hrs": 3.6e6}


def pprof_ms(v):
    m = re.fullmatch(r"([0-9.]+)([a-zµ]*)", v)
    return float(m.group(1)) * UNITS.get(m.group(2), 1.0) if m.group(2) else float(v)


def pprof_top(path, rate):
    funcs, total, on = {}, None, False
    for line in open(path):
        m = re.search(r"of ([0-9.]+[a-zµ]*) total", line)
        if m:
            total = pprof_ms(m.group(1)) * rate / 1e3
        if "flat%" in line:
            on = True
            continue
        if on and line.strip():
            w = line.split()
            name = " ".join(w[5:])
            funcs[name] = (pprof_ms(w[0]) * rate / 1e3, pprof_ms(w[3]) * rate / 1e3)
    return total, funcs


def callgrind(path):
    selfs, incl, total = {}, {}, None
    for line in open(path):
        kind, rest = line.rstrip("\n").split(" ", 1)
        name, value = rest.rsplit(" ", 1)
        if kind == "total":
            total = float(value)
        elif kind == "self":
            selfs[name] = float(value)
        else:
            incl[name] = float(value)
    return total, {n: (selfs.get(n, 0), incl.get(n, 0)) for n in set(selfs) | set(incl)}


def dot(path, rate):
    text = open(path).read()
    total = float(re.search(r"-- total ([0-9.]+)s", text).group(1)) * rate
    funcs = {}
    for m in re.finditer(r'label="(.*?)\\nself ([0-9.]+)s \([^)]*\)\\ntotal ([0-9.]+)s', text):
        name = m.group(1).replace('\\"', '"').replace("\\\\", "\\")
        funcs[name] = (float(m.group(2)) * rate, float(m.group(3)) * rate)
    return total, funcs


def html(path):
    text = open(path).read()
    m = re.search(r'<script id="cgprof-data" type="application/json">(.*?)</script>', text, re.S)
    d = json.loads(m.group(1))
    # calls: null where the report leaves them blank (none counted)
    return d["total"], {f[0]: (f[1], f[2], f[3] + f[4] if f[3] is not None else None)
                        for f in d["f"]}


def main():
    rep, kind, path = sys.argv[1:4]
    total, rate, want = report(rep)
    tol = 0.5 + 1e-6 * total
    if kind in ("dot",):
        tol = max(tol, 0.0005 * rate + 0.01)  # printed in ms
    got_total, got = {
        "folded": lambda: folded(path),
        "pprof-top": lambda: pprof_top(path, rate),
        "callgrind": lambda: callgrind(path),
        "dot": lambda: dot(path, rate),
        "html": lambda: html(path),
    }[kind]()
    bad = []
    if got_total is None or abs(got_total - total) > tol:
        bad.append("%s: total %s, report %.1f" % (kind, got_total, total))
    # every function with time in either must agree; one with none in the
    # report may be left out of an export
    # "[truncated]" stands for the frames cut at the depth limit: an
    # export's frame (docs/export.md), not a function of the report
    got.pop("[truncated]", None)
    for name in sorted(set(want) | set(got)):
        w = want.get(name, (0.0, 0.0, None))
        g = got.get(name)
        if g is None:
            if w[0] > tol or w[1] > tol:
                bad.append("%s: %s missing (report self %.1f incl %.1f)" % (kind, name, *w))
            continue
        if name not in want and (g[0] > tol or g[1] > tol):
            bad.append("%s: %s not in the report (self %.1f incl %.1f)" % (kind, name, *g))
            continue
        for what, a, b in (("self", g[0], w[0]), ("inclusive", g[1], w[1])):
            if abs(a - b) > tol:
                bad.append("%s: %s %s %.1f, report %.1f" % (kind, name, what, a, b))
        if len(g) > 2 and g[2] != (w[2] if len(w) > 2 else None):
            bad.append("%s: %s calls %s, report %s" % (kind, name, g[2], w[2] if len(w) > 2 else None))
    print("\n".join(bad) if bad else "%s: %d functions, total %.1f as the report" % (kind, len(got), total))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

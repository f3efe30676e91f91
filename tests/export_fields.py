"""export_fields.py: field-by-field checks of cgprof's exports, each read by
its own reader, against the profile's known content (tests/t0507).

  pprof RAW PROG JSON HZ ARCS   RAW: `go tool pprof -raw` output
  callgrind CG PROG JSON ARCS   CG: the callgrind export
  dot DOT GPROFQ                the dot export of a gmon.out and gprof -q of it

ARCS: "caller callee count" lines, the program's known calls.  JSON: cgprof
report --json of the same profile.  Exits 1 with what differs."""
import json
import re
import subprocess
import sys

bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


def known_arcs(path):
    arcs = {}
    for ln in open(path):
        c, e, n = ln.split()
        arcs[(c, e)] = int(n)
    return arcs


def syms(prog):
    """name -> (address, size) of the program's functions (nm)."""
    out = subprocess.run(["nm", "-S", "--defined-only", prog], capture_output=True,
                         text=True, check=True).stdout
    s = {}
    for ln in out.splitlines():
        f = ln.split()
        if len(f) == 4 and f[2] in "tTwW":
            s[f[3]] = (int(f[0], 16), int(f[1], 16))
    return s


def addr2line(prog, addrs):
    """[(function, file, line)] of each address, as binutils reads the DWARF."""
    out = subprocess.run(["addr2line", "-f", "-e", prog] + ["0x%x" % a for a in addrs],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    r = []
    for i in range(0, len(out), 2):
        loc = out[i + 1].split(" (")[0]
        file, _, line = loc.rpartition(":")
        r.append((out[i], file, int(line) if line.isdigit() else 0))
    return r


def pprof(raw, prog, js, hz, arcs):
    rep = json.load(open(js))
    text = open(raw).read()
    period = 1000000000 // int(hz)
    check(re.search(r"^PeriodType: cpu-clock nanoseconds$", text, re.M), "PeriodType is not cpu-clock nanoseconds")
    check(re.search(r"^Period: %d$" % period, text, re.M), "Period is not %d" % period)
    check(re.search(r"^samples/count cpu-clock/nanoseconds\[dflt\] calls/count\s*$", text, re.M),
          "sample types are not samples/count cpu-clock/nanoseconds calls/count")
    sec = text.split("\nLocations\n")
    samples, rest = sec[0], sec[1]
    locs_txt, maps_txt = rest.split("\nMappings\n")
    maps = {}
    for ln in maps_txt.splitlines():
        m = re.match(r"(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+) (\S*)", ln)
        if m:
            maps[int(m.group(1))] = (int(m.group(2), 16), int(m.group(3), 16),
                                     int(m.group(4), 16), m.group(5), m.group(6))
    locs = {}
    for ln in locs_txt.splitlines():
        m = re.match(r"\s*(\d+): 0x([0-9a-f]+) M=(\d+) (.*) (\S*):(\d+) s=(\d+)$", ln)
        if m:
            locs[int(m.group(1))] = (int(m.group(2), 16), int(m.group(3)), m.group(4),
                                     m.group(5), int(m.group(6)), int(m.group(7)))
    check(locs, "no locations")
    # the program's mapping: its file and build-id as the ELF says
    bid = subprocess.run(["readelf", "-n", prog], capture_output=True, text=True).stdout
    bid = re.search(r"Build ID: ([0-9a-f]+)", bid).group(1)
    pm = [k for k, v in maps.items() if v[3].endswith("/" + prog.split("/")[-1]) or v[3] == prog.split("/")[-1]]
    check(len(pm) == 1, "the program's mapping: %r" % maps)
    if len(pm) != 1:
        return
    start, limit, off, _, mbid = maps[pm[0]]
    check(mbid == bid, "build-id %s, the ELF's %s" % (mbid, bid))
    # every location in the program: function, file, line and start line
    # as addr2line and nm read them at the same address
    st = syms(prog)
    mine = [(k, v) for k, v in locs.items() if v[1] == pm[0]]
    check(len(mine) >= 5, "%d locations in the program" % len(mine))
    truth = addr2line(prog, [v[0] - start + off for k, v in mine])
    for (k, v), (fn, file, line) in zip(mine, truth):
        if fn in ("_start", "_init", "??"):
            continue
        check(start <= v[0] < limit, "location %d outside its mapping" % k)
        check(v[2] == fn and v[3] == file and v[4] == line,
              "location %d 0x%x: %s %s:%d, addr2line: %s %s:%d" % (k, v[0], v[2], v[3], v[4], fn, file, line))
        fl = addr2line(prog, [st[fn][0]])[0][2] if fn in st else None
        check(v[5] == fl, "location %d: start line %d, the function's first line %s" % (k, v[5], fl))
    # samples: ns = samples * period; the total is the report's; calls per
    # (caller, callee) the known ones
    total = 0
    calls = {}
    for ln in samples.splitlines():
        m = re.match(r"\s*(\d+)\s+(\d+)\s+(\d+): ([\d ]+)$", ln)
        if not m:
            continue
        n, ns, c = int(m.group(1)), int(m.group(2)), int(m.group(3))
        stack = [int(x) for x in m.group(4).split()]
        check(ns == n * period, "sample %s: %d ns for %d samples" % (stack, ns, n))
        total += n
        if c:
            check(n == 0, "a call sample with samples: %s" % ln)
            key = (locs[stack[1]][2], locs[stack[0]][2]) if len(stack) > 1 else None
            calls[key] = calls.get(key, 0) + c
    want = round(rep["total_seconds"] * int(hz))
    check(total == want, "%d samples, the report's total %d" % (total, want))
    for k, n in arcs.items():
        check(calls.get(k) == n, "calls %s -> %s: %s, known %d" % (k[0], k[1], calls.get(k), n))


def callgrind(cg, prog, js, hz, arcs):
    rep = json.load(open(js))
    period = 1000000000 // int(hz)
    st = syms(prog)
    first = dict(zip(st, [x[2] for x in addr2line(prog, [st[f][0] for f in st])]))
    lines = open(cg).read().splitlines()
    check("positions: line" in lines, "no 'positions: line'")
    check("events: samples ns" in lines, "events are not 'samples ns'")
    total = round(rep["total_seconds"] * int(hz))
    check("summary: %d %d" % (total, total * period) in lines, "summary is not %d %d" % (total, total * period))
    fn = cfn = None
    self_cost = {}
    calls = {}
    after_calls = False
    fnline = {}
    for ln in lines:
        if ln.startswith("fn="):
            fn = ln[3:]
            self_cost.setdefault(fn, 0)
        elif ln.startswith("cfn="):
            cfn = ln[4:]
        elif ln.startswith("calls="):
            n, target = ln[6:].split()
            calls[(fn, cfn)] = int(n)
            if cfn in first:
                check(int(target) == first[cfn], "calls=%s %s to %s: its first line is %d" % (n, target, cfn, first[cfn]))
            after_calls = True
        elif re.match(r"^\d+ \d+ \d+$", ln):
            pos, s, ns = map(int, ln.split())
            check(ns == s * period, "%s: %d ns for %d samples" % (fn, ns, s))
            if after_calls:
                # a call's cost sits at its caller's first line (docs/export.md)
                if fn in first:
                    check(pos == first[fn], "%s -> %s at line %d, %s starts at %d" % (fn, cfn, pos, fn, first[fn]))
                after_calls = False
            else:
                self_cost[fn] += s
                if fn in first and s:
                    lo = first[fn]
                    check(pos >= lo, "%s's self cost at line %d, before its first line %d" % (fn, pos, lo))
    for k, n in arcs.items():
        check(calls.get(k) == n, "calls %s -> %s: %s, known %d" % (k[0], k[1], calls.get(k), n))
    check(sum(self_cost.values()) == total, "self costs add up to %d, not %d" % (sum(self_cost.values()), total))
    for f in rep["functions"]:
        if f["name"] in first:
            want = round(f["self_seconds"] * int(hz))
            check(self_cost.get(f["name"], 0) == want,
                  "%s: self %s samples, the report's %d" % (f["name"], self_cost.get(f["name"]), want))


def dot(dotf, gq):
    # gprof -q: in each primary entry, the callee lines (after [N]) give
    # self, children, count/total and name
    want = {}
    cur = None
    for ln in open(gq):
        if ln.startswith("---"):
            cur = None
            continue
        m = re.match(r"\[\d+\]\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d+]*\s*(\S+)", ln)
        if m:
            cur = m.group(1)
            continue
        m = re.match(r"\s+([\d.]+)\s+([\d.]+)\s+(\d+)/(\d+)\s+(\S+)", ln)
        if m and cur:
            want[(cur, m.group(5))] = (int(m.group(3)), float(m.group(1)) + float(m.group(2)))
    names = dict(re.findall(r'^\s*(f\d+) \[label="([^\\"]+)', open(dotf).read(), re.M))
    got = {}
    for a, b, n, t in re.findall(r'^\s*(f\d+) -> (f\d+) \[label="(\d+) calls\\n([\d.]+)s"', open(dotf).read(), re.M):
        got[(names[a], names[b])] = (int(n), float(t))
    check(want, "no arcs in gprof -q")
    for k, (n, t) in want.items():
        g = got.get(k)
        check(g is not None, "dot has no edge %s -> %s" % k)
        if g:
            check(g[0] == n, "%s -> %s: %d calls, gprof %d" % (k + (g[0], n)))
            # gprof prints 2 decimals, dot 3
            check(abs(g[1] - t) <= 0.0051, "%s -> %s: %.3f s, gprof %.2f" % (k + (g[1], t)))
    for k in got:
        check(k in want, "dot edge %s -> %s is not in gprof -q" % k)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "pprof":
        pprof(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], known_arcs(sys.argv[6]))
    elif mode == "callgrind":
        callgrind(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], known_arcs(sys.argv[6]))
    elif mode == "dot":
        dot(sys.argv[2], sys.argv[3])
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)

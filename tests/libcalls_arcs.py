#!/usr/bin/env python3
"""libcalls_arcs.py KIND FILE: the arcs one output of cgprof holds, as
"caller callee count" lines (counts summed per pair, pairs without a
count left out), names without their " [module]" and an IFUNC's strlen
implementation (__strlen_avx2, __strlen_evex...) named strlen, for
tests/t0601-libcalls-more.sh to compare every output with the same
known counts.

KIND: json (cgprof report --json), pprof (go tool pprof -raw), callgrind
(cgprof export -f callgrind), dot (cgprof export -f dot -t 0), html
(cgprof export -f html: the page's embedded data)."""
import json
import re
import sys
from collections import defaultdict


def norm(name):
    name = re.sub(r" \[[^\]]*\]$", "", name)
    return re.sub(r"^__strlen_[a-z0-9_]+$", "strlen", name)


def from_json(text):
    for a in json.loads(text)["arcs"]:
        yield a["caller"], a["callee"], a.get("count") or 0


def from_pprof(text):
    locs, samples, part = {}, [], None
    for line in text.splitlines():
        if line.startswith("Samples:"):
            part = "s"
        elif line.startswith("Locations"):
            part = "l"
        elif line.startswith("Mappings"):
            part = None
        elif part == "s":
            m = re.match(r"^\s*(\d+)\s+(\d+)\s+(\d+): ([\d ]+)$", line)
            if m:
                samples.append((int(m.group(3)), m.group(4).split()))
        elif part == "l":
            m = re.match(r"^\s*(\d+): 0x[0-9a-f]+ M=\d+ (.*) \S*:\d+ s=\d+$", line)
            if m:
                locs[m.group(1)] = m.group(2)
    # a call count rides on a two-frame sample: callee, caller
    for calls, ids in samples:
        if calls and len(ids) == 2:
            yield locs[ids[1]], locs[ids[0]], calls


def from_callgrind(text):
    names, fn, cfn = {}, None, None

    def name(v):
        m = re.match(r"^\((\d+)\)(?: (.*))?$", v)
        if not m:
            return v
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names[m.group(1)]

    for line in text.splitlines():
        if line.startswith("fn="):
            fn = name(line[3:])
        elif line.startswith("cfn="):
            cfn = name(line[4:])
        elif line.startswith("calls="):
            yield fn, cfn, int(line[6:].split()[0])


def from_dot(text):
    nodes = dict(re.findall(r'^\s*(f\d+) \[label="((?:[^"\\]|\\.)*?)\\n', text, re.M))
    for a, b, n in re.findall(r'^\s*(f\d+) -> (f\d+) \[label="(\d+) calls', text, re.M):
        yield nodes[a], nodes[b], int(n)


def from_html(text):
    m = re.search(r'<script id="cgprof-data" type="application/json">(.*?)</script>', text, re.S)
    d = json.loads(m.group(1))
    a = d["a"]
    for i in range(0, len(a), 4):
        if a[i + 2] is not None:
            yield d["f"][a[i]][0], d["f"][a[i + 1]][0], a[i + 2]


def main():
    kind, path = sys.argv[1], sys.argv[2]
    text = open(path).read()
    got = defaultdict(int)
    for caller, callee, n in globals()["from_" + kind](text):
        got[(norm(caller), norm(callee))] += n
    for (caller, callee), n in sorted(got.items()):
        if n:
            print(caller, callee, n)


if __name__ == "__main__":
    main()

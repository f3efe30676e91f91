"""Reads cgprof report's text (gprof's layout) for t0269.

flat(path)   -> {name: (% time, self seconds, calls or None)}
graph(path)  -> {name: {"pct": % time, "parents": [(name, calls)],
                        "children": [(name, calls)]}}
folded(path) -> ({function: self samples}, {function: inclusive samples}, total)
"""
import re

import export_same

ENTRY = re.compile(r"^\[(\d+)\]\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)?\s*(.*?) \[\d+\]$")
LINE = re.compile(r"^\s+([\d.]+)\s+([\d.]+)\s+(\d+(?:\+\d+)?/\d+)?\s*(.*?) \[\d+\]$")


def flat(path):
    out = {}
    for l in open(path):
        m = re.match(r"^\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s+(\d+)\s+[\d.]+\s+[\d.]+)?\s+(\S.*)$", l)
        if m and not l.startswith("["):
            out[m.group(5).strip()] = (float(m.group(1)), float(m.group(3)),
                                       int(m.group(4)) if m.group(4) else None)
        if l.startswith("\t\t\tCall graph"):
            break
    return out


def graph(path):
    text = open(path).read()
    body = text.split("index % time")[1].split("Index by function name")[0]
    out = {}
    for block in body.split("-----------------------------------------------"):
        lines = [l for l in block.split("\n") if l.strip()]
        i = next((k for k, l in enumerate(lines) if l.startswith("[")), None)
        if i is None:
            continue
        e = re.match(r"^\[\d+\]\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+(?:[\d+]+\s+)?(.*?) \[\d+\]$", lines[i])
        if not e:
            continue

        def arcs(ls):
            r = []
            for l in ls:
                m = LINE.match(l)
                if m:
                    r.append((m.group(4), m.group(3)))
            return r

        out[e.group(2)] = {"pct": float(e.group(1)), "parents": arcs(lines[:i]),
                           "children": arcs(lines[i + 1:])}
    return out


def folded(path):
    t, f = export_same.folded(path)
    return {n: v[0] for n, v in f.items()}, {n: v[1] for n, v in f.items()}, t

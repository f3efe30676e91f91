"""json_fields.py JSON TEXT HZ SRC ARCS: cgprof report --json of a profile of
tests/progs/fields.c checked field by field against docs/json-schema.md's
definitions, the text report of the same profile (TEXT: report -b -q) and
the program's known calls (ARCS) and call lines (marked SITE_* in SRC)."""
import json
import re
import sys

bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


js, text, hz, src, arcsf = sys.argv[1:6]
r = json.load(open(js))
hz = int(hz)
site = {}
for i, ln in enumerate(open(src), 1):
    m = re.search(r"SITE_(\w+)", ln)
    if m:
        site[m.group(1).lower()] = i
known = {}
for ln in open(arcsf):
    c, e, n = ln.split()
    known[(c, e)] = int(n)

check(r["schema"] == "cgprof-report" and r["version"] == 2, "schema/version")
check(r["rate"] == hz, "rate %s, recorded at %d" % (r["rate"], hz))
check(r["event"] == "cpu-clock", "event %s" % r["event"])
check(r["dimension"] == "seconds", "dimension %s" % r["dimension"])
check(r["times"] == "measured", "times %s for a profile with stacks" % r["times"])
check(r["lost_calls"] == 0, "lost_calls %s" % r["lost_calls"])
fn = {f["name"]: f for f in r["functions"]}
# total_seconds: all sampled time = the sum of the functions' self time
tot = sum(f["self_seconds"] for f in r["functions"])
check(abs(tot - r["total_seconds"]) < 0.0015 * len(fn), "total_seconds %s, functions' self %s" % (r["total_seconds"], tot))
# the text report's index [N] of each function
idx = dict((m.group(2), int(m.group(1))) for m in re.finditer(r"^\[(\d+)\].*?\s(\S+) \[\d+\]$", open(text).read(), re.M))
for f in r["functions"]:
    if f["name"] in idx:
        check(f["index"] == idx[f["name"]], "%s: index %d, report [%d]" % (f["name"], f["index"], idx[f["name"]]))
    # measured: child = inclusive - self
    if "inclusive_seconds" in f:
        check(abs(f["inclusive_seconds"] - f["self_seconds"] - f["child_seconds"]) < 0.0015,
              "%s: inclusive %s != self %s + child %s" % (f["name"], f["inclusive_seconds"], f["self_seconds"], f["child_seconds"]))
check(len(idx) >= 5, "the text report's index: %r" % idx)
# calls from other functions, self_calls, static file
into = {}
for (c, e), n in known.items():
    into[e] = into.get(e, 0) + n
for e, n in into.items():
    check(fn.get(e, {}).get("calls") == n, "%s: calls %s, known %d" % (e, fn.get(e, {}).get("calls"), n))
    check(fn.get(e, {}).get("self_calls") == 0, "%s: self_calls %s" % (e, fn.get(e, {}).get("self_calls")))
check(fn["spin"].get("file", "").endswith("fields.c"), "static spin has no file: %r" % fn["spin"])
check("file" not in fn["hot"], "hot is not static but has a file")
check("cycle" not in fn["hot"] and not r.get("cycles"), "a cycle in a program without one")
# arcs: counts, sites on the lines of the calls (the last one the last
# instruction of main), and their times measured from the stacks
arcs = {(a["caller"], a["callee"]): a for a in r["arcs"]}
for k, n in known.items():
    a = arcs.get(k)
    check(a is not None and a.get("count") == n, "arc %s -> %s: %s, known %d" % (k + (a and a.get("count"), n)))
    check(a is None or a.get("within_cycle", False) is False, "arc %s -> %s within a cycle" % k)
for name in ("hot", "warm", "finish"):
    a = arcs.get(("main", name), {})
    want = [{"file": src, "line": site[name], "count": known[("main", name)]}]
    got = [{"file": s["file"].split("/")[-1], "line": s["line"], "count": s["count"]} for s in a.get("sites", [])]
    want[0]["file"] = src.split("/")[-1]
    check(got == want, "main -> %s: sites %r, the call is on line %d" % (name, a.get("sites"), site[name]))
# arc times: hot -> spin carries spin's time in hot (the leaf is the callee)
for c in ("hot", "warm"):
    a = arcs[(c, "spin")]
    check(abs(a["self_seconds"] + a["child_seconds"] - fn[c]["inclusive_seconds"] + 0) < 0.0015 + fn[c]["self_seconds"],
          "%s -> spin: %s + %s, %s's inclusive %s" % (c, a["self_seconds"], a["child_seconds"], c, fn[c]["inclusive_seconds"]))
# stacks: the counts at the nodes add up to the samples
st = r["stacks"]
n = sum(x["count"] for x in st["nodes"])
# (of every sample: total_seconds leaves out those in libcgprof's mcount, as
# gprof leaves out mcount, so a run with one there has one node count more)
allsamp = sum(t["samples"] for t in r["threads"])
check(n == allsamp and n >= round(r["total_seconds"] * hz),
      "stack nodes hold %d samples, the threads %d, total %s s" % (n, allsamp, r["total_seconds"]))
for i, x in enumerate(st["nodes"]):
    check(x["parent"] is None or 0 <= x["parent"] < i, "node %d: parent %s not earlier" % (i, x["parent"]))
# lines: samples and seconds agree, and add up to the program's own
for l in r.get("lines", []):
    check(abs(l["samples"] / hz - l["self_seconds"]) < 0.0006, "line %r: samples and seconds differ" % l)
spin_lines = sum(l["samples"] for l in r["lines"] if l["module"] == "fields" and l["file"].endswith("fields.c"))
check(spin_lines > 0, "no sampled lines of fields.c")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)

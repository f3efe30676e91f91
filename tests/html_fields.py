"""html_fields.py JSON ARCS DOM FNDOM...: cgprof export -f html of a profile
of tests/progs/fields.c, as headless Chromium's DOM shows it after the
page's script ran, checked number by number against cgprof report --json
of the same profile (JSON) and the program's known calls (ARCS, "caller
callee count" lines).  DOM is the page as it opens (flat profile, flame
graph, source lines, summary); each FNDOM is the page opened at
#view=graph&fn=NAME (its file name ends in ".NAME").

Checked: the summary (total time, samples); every row of the flat profile
(self, self %, total, total %, calls, self calls) and that no function is
missing from it; each call graph view's heading and its callers' and
callees' calls, time and %; every flame graph frame's numbers against the
stacks merged by function (its path read from the frames' rows) and its
colour; the source lines view against the JSON's lines.  Times are shown
to the millisecond and percentages to 0.01: each must be the JSON's value
rounded so (half a unit either way, and a hair for float sums)."""
import json
import re
import sys
from html.parser import HTMLParser

bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.kids = tag, dict(attrs), parent, []

    def text(self):
        return "".join(k if isinstance(k, str) else k.text() for k in self.kids)

    def find(self, pred):
        out = []
        for k in self.kids:
            if not isinstance(k, str):
                if pred(k):
                    out.append(k)
                out.extend(k.find(pred))
        return out

    def children(self, tag):
        return [k for k in self.kids if not isinstance(k, str) and k.tag == tag]


VOID = {"meta", "input", "br", "img", "link", "hr", "col", "source", "wbr", "area", "base"}


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#root", {}, None)

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.kids.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.kids.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.kids.append(data)


def parse(path):
    t = Tree()
    t.feed(open(path, encoding="utf-8").read())
    return t.root


def by_id(root, i):
    r = root.find(lambda n: n.attrs.get("id") == i)
    return r[0] if r else None


def rows(table):
    """[(tr node, [cell texts])] of a table's data rows (those with td)"""
    out = []
    for tr in table.find(lambda n: n.tag == "tr"):
        tds = tr.children("td")
        if tds:
            out.append((tr, [td.text() for td in tds]))
    return out


js, arcsf, dom = sys.argv[1:4]
fndoms = sys.argv[4:]
r = json.load(open(js))
rate, total = r["rate"], r["total_seconds"]
known = {}
for ln in open(arcsf):
    c, e, n = ln.split()
    known[(c, e)] = int(n)
calls_into = {}
for (c, e), n in known.items():
    calls_into[e] = calls_into.get(e, 0) + n


def secs(s, what):
    m = re.fullmatch(r"(\d+\.\d{3}) s", s)
    check(m is not None, "%s: '%s' is not a time in seconds to the ms" % (what, s))
    return float(m.group(1)) if m else None


def pct(s, what):
    m = re.fullmatch(r"(\d+\.\d{2})%", s)
    check(m is not None, "%s: '%s' is not a percentage to 0.01" % (what, s))
    return float(m.group(1)) if m else None


def same_secs(shown, want, what):
    s = secs(shown, what)
    if s is not None:
        check(abs(s - want) <= 0.0005 + 1e-9, "%s: shown %s, the JSON has %.6f s" % (what, shown, want))


def same_pct(shown, want_secs, what):
    p = pct(shown, what)
    want = 100 * want_secs / total if total > 0 else 0
    if p is not None:
        check(abs(p - want) <= 0.005 + 1e-6, "%s: shown %s, the JSON's %.6f s of %.6f s is %.4f%%"
              % (what, shown, want_secs, total, want))


fn = {f["name"]: f for f in r["functions"]}
check(total > 0 and fn, "the JSON has no samples or no functions")
page = parse(dom)

# the summary: total time and its samples
summary = by_id(page, "summary").text()
m = re.fullmatch(r"total (\S+ s) \((\d+) samples\)", summary)
check(m is not None, "summary '%s'" % summary)
if m:
    same_secs(m.group(1), total, "summary")
    check(abs(int(m.group(2)) - total * rate) < 0.5 + 1e-6,
          "summary: %s samples, the JSON's %s s at %s Hz" % (m.group(2), total, rate))

# the flat profile, row by row
shown = {}
for tr, c in rows(by_id(page, "flat")):
    name = c[0]
    check(tr.attrs.get("data-fn") == name, "flat: row data-fn %r holds %r" % (tr.attrs.get("data-fn"), name))
    check(name not in shown, "flat: %s shown twice" % name)
    shown[name] = c
    f = fn.get(name)
    check(f is not None, "flat: %s is not in the JSON" % name)
    if f is None or len(c) != 7:
        check(len(c) == 7, "flat: %s has %d cells" % (name, len(c)))
        continue
    incl = f.get("inclusive_seconds", f["self_seconds"] + f["child_seconds"])
    same_secs(c[1], f["self_seconds"], "flat %s self" % name)
    same_pct(c[2], f["self_seconds"], "flat %s self %%" % name)
    same_secs(c[3], incl, "flat %s total" % name)
    same_pct(c[4], incl, "flat %s total %%" % name)
    if f.get("counted", True):
        want = (str(f["calls"]), str(f["self_calls"]))
        if want == ("0", "0"):
            want = ("", "")  # none counted: blank, as the report leaves them
    else:
        want = ("", "")
    check((c[5], c[6]) == want, "flat %s calls '%s' self calls '%s', the JSON's %s" % (name, c[5], c[6], want))
    if name in calls_into:
        check(c[5] == str(calls_into[name]), "flat %s calls '%s', the program makes %d" % (name, c[5], calls_into[name]))
for name, f in fn.items():
    if f["self_seconds"] > 0 or f.get("inclusive_seconds", 0) > 0 or f.get("calls"):
        check(name in shown, "flat: %s (in the JSON, with time or calls) is missing" % name)
# sorted by self time, most first (the page's default)
selfs = [secs(c[1], "flat") or 0 for c in shown.values()]
check(selfs == sorted(selfs, reverse=True), "flat: not sorted by self time: %r" % selfs)

# the call graph view of each function
arcs_in, arcs_out = {}, {}
for a in r["arcs"]:
    arcs_in.setdefault(a["callee"], []).append(a)
    arcs_out.setdefault(a["caller"], []).append(a)
for path in fndoms:
    name = path.rsplit(".", 1)[1]
    f = fn.get(name)
    check(f is not None, "%s: %s is not in the JSON" % (path, name))
    if f is None:
        continue
    v = by_id(parse(path), "cg-view")
    h = v.children("h2")[0].text() if v and v.children("h2") else ""
    m = re.fullmatch(r"(.*): self (\S+ s) \((\S+)\), total (\S+ s) \((\S+)\), (?:(\d+) calls|calls not counted)"
                     r"(?: \+ (\d+) recursive)?(?:, cycle (\d+))?", h)
    check(m is not None and m.group(1) == name, "graph %s: heading '%s'" % (name, h))
    if not m:
        continue
    incl = f.get("inclusive_seconds", f["self_seconds"] + f["child_seconds"])
    same_secs(m.group(2), f["self_seconds"], "graph %s self" % name)
    same_pct(m.group(3), f["self_seconds"], "graph %s self %%" % name)
    same_secs(m.group(4), incl, "graph %s total" % name)
    same_pct(m.group(5), incl, "graph %s total %%" % name)
    if f.get("counted", True) and (f["calls"] or f["self_calls"]):
        check(m.group(6) == str(f["calls"]), "graph %s: %s calls, the JSON's %s" % (name, m.group(6), f["calls"]))
        check((m.group(7) or "0") == str(f["self_calls"]), "graph %s: %s recursive, the JSON's %s" % (name, m.group(7), f["self_calls"]))
    else:
        check(m.group(6) is None, "graph %s: %s calls, none counted in the JSON" % (name, m.group(6)))
    if name in calls_into:
        check(m.group(6) == str(calls_into[name]), "graph %s: %s calls, the program makes %d" % (name, m.group(6), calls_into[name]))
    check(m.group(8) == (str(f["cycle"]) if "cycle" in f else None), "graph %s: cycle %s" % (name, m.group(8)))
    tables = v.find(lambda n: n.tag == "table")
    check(len(tables) == 2, "graph %s: %d tables, want Callers and Callees" % (name, len(tables)))
    if len(tables) != 2:
        continue
    for title, t, arcs, end, other in (("callers", tables[0], arcs_in.get(name, []), "caller", "callee"),
                                       ("callees", tables[1], arcs_out.get(name, []), "callee", "caller")):
        got = {}
        for tr, c in rows(t):
            if c == ["none"]:
                continue
            check(len(c) == 4 and c[0] not in got, "graph %s %s: row %r" % (name, title, c))
            got[c[0]] = c
        want = {a[end]: a for a in arcs}
        check(sorted(got) == sorted(want), "graph %s %s: shown %s, the JSON's arcs %s" % (name, title, sorted(got), sorted(want)))
        costs = []
        for o, a in want.items():
            c = got.get(o)
            if not c or len(c) != 4:
                continue
            what = "graph %s %s %s" % (name, title, o)
            check(c[1] == (str(a["count"]) if "count" in a else ""), "%s: calls '%s', the JSON's %s" % (what, c[1], a.get("count")))
            pair = (a["caller"], a["callee"])
            if pair in known:
                check(c[1] == str(known[pair]), "%s: calls '%s', the program makes %d" % (what, c[1], known[pair]))
            same_secs(c[2], a["self_seconds"] + a["child_seconds"], what + " time")
            same_pct(c[3], a["self_seconds"] + a["child_seconds"], what + " %")
        costs = [secs(c[2], "graph") or 0 for c in got.values()]
        check(costs == sorted(costs, reverse=True), "graph %s %s: not sorted by time: %r" % (name, title, costs))

# the flame graph: each frame's path (from the rows of the frames drawn
# before it), numbers and colour, against the JSON's stacks merged by
# function (a frame's total: its samples and its callees')
# Samples in functions the report leaves out (gprof's exclusions: mcount,
# libcgprof's call counting) are in the JSON's stacks but in no function,
# and not in its total: the page leaves them out too.
tree = {(): [0, 0]}
nodes = r["stacks"]["nodes"]
paths = []
for n in nodes:
    name = n.get("function", "[truncated]")
    up = paths[n["parent"]] if n["parent"] is not None else ()
    p = None if up is None or (name not in fn and not n.get("cut")) else up + (name,)
    paths.append(p)
    if p is None:
        continue
    for k in range(len(p) + 1):
        tree.setdefault(p[:k], [0, 0])[1] += n["count"]
    tree[p][0] += n["count"]
# Only the program's own stacks, from _start, are compared: a sample in
# the loader running libcgprof's constructor is the runtime's, and the
# page and the JSON part from it differently (the page keeps the frames
# under the runtime's).
def ours(p):
    return len(p) > 0 and p[0] == "_start"
stack, seen = [], set()
frames = page.find(lambda n: n.tag == "g" and "fr" in n.attrs.get("class", "").split())
check(len(frames) > 3, "flame graph: %d frames" % len(frames))
for g in frames:
    rect = g.children("rect")
    title = g.children("title")
    if not rect or not title:
        check(False, "flame graph: a frame without rect or title")
        continue
    depth = int(rect[0].attrs["y"]) // 18
    name = g.attrs.get("data-name")
    stack = stack[:depth] + [name]
    p = tuple(stack[1:])
    check(p not in seen, "flame graph: %s drawn twice" % ";".join(p))
    seen.add(p)
    if not ours(p):
        continue
    t = title[0].text()
    m = re.fullmatch(r"(.*): (\S+ s) \((\S+)\) with callees, self (\S+ s) \((\S+)\)", t)
    check(m is not None and m.group(1) == name, "flame graph frame %s: title '%s'" % (";".join(p), t))
    want = tree.get(p)
    check(want is not None, "flame graph: %s is no stack of the JSON" % ";".join(p))
    if m and want:
        what = "flame graph %s" % ";".join(p)
        same_secs(m.group(2), want[1] / rate, what + " total")
        same_pct(m.group(3), want[1] / rate, what + " total %")
        same_secs(m.group(4), want[0] / rate, what + " self")
        same_pct(m.group(5), want[0] / rate, what + " self %")
    fill = rect[0].attrs.get("fill", "")
    c = re.fullmatch(r"rgb\((-?\d+),(-?\d+),(-?\d+)\)", fill)
    check(c is not None and all(0 <= int(x) <= 255 for x in c.groups()),
          "flame graph %s: fill '%s'" % (";".join(p), fill))
# every stack of at least 1% of the samples has its frame
for p, (s, t) in tree.items():
    if ours(p) and t >= 0.01 * tree[()][1]:
        check(p in seen, "flame graph: no frame for %s (%d of %d samples)" % (";".join(p), t, tree[()][1]))

# source lines: the JSON's lines, each with its time and share
want = {(l["file"], l["line"]): l for l in r.get("lines", [])}
got = {}
for tr, c in rows(by_id(page, "lines")):
    key = tr.attrs.get("data-line", "")
    f, _, ln = key.rpartition(":")
    got[(f, int(ln))] = c
    check(len(c) == 4 and c[0] == "%s:%s" % (f.rsplit("/", 1)[-1], ln), "lines %s: %r" % (key, c))
check(sorted(got) == sorted(want), "lines: shown %s, the JSON's %s" % (sorted(got), sorted(want)))
for k, c in got.items():
    if k in want and len(c) == 4:
        check(c[1] in fn, "lines %s:%d: function %s" % (k[0], k[1], c[1]))
        same_secs(c[2], want[k]["self_seconds"], "lines %s:%d" % k)
        check(abs((secs(c[2], "lines") or 0) * rate - want[k]["samples"]) < 0.5 + 1e-6,
              "lines %s:%d: %s, the JSON's %d samples" % (k[0], k[1], c[2], want[k]["samples"]))
        same_pct(c[3], want[k]["self_seconds"], "lines %s:%d %%" % k)

for b in bad:
    print(b)
print("html: %d flat rows, %d function views, %d frames, %d lines; %d problems"
      % (len(shown), len(fndoms), len(frames), len(got), len(bad)))
sys.exit(1 if bad else 0)

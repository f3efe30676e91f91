#!/bin/sh
# t0310: the numbers in the runtime's own files -- the histogram credits
# the function that ran (gmon.out read by GNU gprof, and cgprof profiles of
# position-dependent -no-pie executables), counts exact in both; and the
# JSON report agrees with the text report, number for number.
. "$(dirname "$0")/lib.sh"

gcc -O2 -pg "$PROGS/split.c" -o "$WORK/split" &&
gcc -O2 -pg -no-pie "$PROGS/split.c" -o "$WORK/split_np" &&
gcc -O2 -pg -no-pie "$PROGS/calls.c" -o "$WORK/calls_np" || exit 1

# shares_ok TRUTH FLAT N: f60/f30/f10 percentages of a flat profile (gprof's
# or cgprof's) within 4 binomial standard deviations of the truth the
# program measured (plus half a point), N the number of samples.
shares_ok() {
    awk -v n="$3" 'NR == FNR { for (i = 1; i < NF; i += 2) if ($i ~ /^f[0-9]+$/) truth[$i] = $(i + 1); next }
        $1 ~ /^[0-9.]+$/ && NF >= 4 && ($NF in truth) { got[$NF] = $1 }
        END { bad = 0
            if (n < 1) { print "no samples"; exit 1 }
            for (f in truth) { p = truth[f] / 100; tol = 400 * sqrt(p * (1 - p) / n) + 0.5;
                d = got[f] - truth[f]; if (d < 0) d = -d;
                printf "%s: %s%% sampled, %s%% true, tolerance %.2f (%d samples)\n", f, got[f] + 0, truth[f], tol, n;
                if (!(f in got) || d > tol) bad = 1 }
            exit bad }' "$1" "$2"
}

test_expect "gmon.out: the histogram credits the function that ran (GNU gprof reads it)" "
    rm -f gmon.out && $CGPROF record -e cpu-clock --format gmon ./split 1000000 >truth && cat truth &&
    gprof -b -p split gmon.out >flat && cat flat &&
    n=\$(awk '\$1 ~ /^[0-9.]+\$/ && NF >= 4 { t = \$2 } END { printf \"%d\", t * 1000 + 0.5 }' flat) &&
    shares_ok truth flat \$n &&
    printf 'main f60 100\nmain f30 100\nmain f10 100\n' >exp && same_arcs exp split gmon.out
"

# main's printf is a library call (docs/libcalls.md); gcrt1's __cxa_atexit
# call has no function of its own to come from
test_expect "-no-pie, cgprof profile: exact counts, named" "
    rm -f cgprof.data && $CGPROF record --format cgprof ./calls_np >/dev/null &&
    $CGPROF report -b -q cgprof.data | awk -f $ROOT/tests/arcs.awk | grep -v ' __cxa_atexit ' |
        sort -u >got &&
    (cat $PROGS/calls.arcs; echo '__libc_start_call_main main 1'; echo 'main printf 1') |
        sort | diff -u - got
"

test_expect "-no-pie, cgprof profile: samples credited to the function that ran" "
    rm -f cgprof.data && $CGPROF record -e cpu-clock --format cgprof ./split_np 1000000 >truth && cat truth &&
    $CGPROF report -b -p >flat && cat flat &&
    n=\$($CGPROF report --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(round(d[\"total_seconds\"] * d[\"rate\"]))') &&
    shares_ok truth flat \$n
"

# json_vs_text JSON FLAT ARCS: every function's seconds and calls in the
# JSON as in the text report (whose seconds have 2 decimals), every arc
# with its count; seconds are whole samples at the profile's rate and sum
# to the total.
cat >"$WORK/json_vs_text.py" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
rate, bad = d["rate"], []
flat = {}
for line in open(sys.argv[2]):
    m = re.match(r"\s*[\d.]+\s+[\d.]+\s+([\d.]+)\s+(?:(\d+)\s+[\d.]+\s+[\d.]+\s+)?(\S.*)$", line)
    if m:
        flat[m.group(3).strip()] = (float(m.group(1)), int(m.group(2) or 0))
funcs = {f["name"]: f for f in d["functions"]}
total = 0.0
for name, f in funcs.items():
    s = f["self_seconds"]
    total += s
    if abs(s * rate - round(s * rate)) > 1e-6:
        bad.append("%s: %r s is not a whole number of samples at %r Hz" % (name, s, rate))
    if s > 0 or name in flat:
        want = flat.get(name)
        if want is None:
            bad.append("%s: in the JSON with %r s, not in the flat profile" % (name, s))
        elif abs(want[0] - s) > 0.005 + 1e-9 or want[1] != f.get("calls", 0) + f.get("self_calls", 0):
            bad.append("%s: JSON %r s %d calls, text %r s %d calls" %
                       (name, s, f.get("calls", 0) + f.get("self_calls", 0), want[0], want[1]))
for name in flat:
    if name not in funcs:
        bad.append("%s: in the flat profile, not in the JSON" % name)
if abs(total - d["total_seconds"]) > 1e-6 * max(1.0, total):
    bad.append("self seconds sum to %r, total_seconds is %r" % (total, d["total_seconds"]))
text_arcs = set(tuple(l.split()) for l in open(sys.argv[3]) if l.strip())
bare = lambda n: re.sub(r" \[[^]]*\]$", "", n)  # arcs.awk drops the [module]
# arcs seen only in sampled stacks have no count ("counted": false), and
# the text's called column is empty for them: arcs.awk lists counted arcs
json_arcs = set((bare(a["caller"]), bare(a["callee"]), str(a["count"])) for a in d["arcs"]
                if a.get("counted", True))
for a in sorted(text_arcs ^ json_arcs):
    bad.append("arc %s: %s" % (" ".join(a), "text only" if a in text_arcs else "JSON only"))
print("%d functions, %d arcs, total %r s at %r Hz" % (len(funcs), len(json_arcs), total, rate))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# 300 Hz: a sample is 1/300 s, which no short decimal holds
test_expect "--json: seconds and counts as in the text report, whole samples summing to the total" "
    rm -f cgprof.data && $CGPROF record -e cpu-clock -F 300 --format cgprof ./split 300000 >/dev/null &&
    $CGPROF report --json >j && $CGPROF report -b -p >flat &&
    $CGPROF report -b -q | awk -f $ROOT/tests/arcs.awk | sort -u >arcs &&
    python3 json_vs_text.py j flat arcs
"
test_done

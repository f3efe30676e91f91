#!/bin/sh
# check-report.sh [-g] FILE...: checks a cgprof report (text or --json)
# for the two promises every report keeps: each [N] it prints names an
# entry of its call graph, and no number is nan or inf.  Prints each
# breach as "FILE: ..." and exits 1 if there was one.
# -g: a report of gmon.out files, laid out as GNU gprof lays it out (which
# can name a function by an index it prints no entry for): numbers only.
status=0 gmon=0
[ "${1:-}" = -g ] && { gmon=1; shift; }
for f in "$@"; do
    if head -c 1 "$f" | grep -q '{'; then
        # JSON: a nan or inf outside strings
        sed 's/"\([^"\\]\|\\.\)*"/""/g' "$f" | grep -n -i -E '(^|[^a-z_])-?(nan|inf)([^a-z_]|$)' |
            sed "s|^|$f: not a number: |" | grep . && status=1
        continue
    fi
    awk -v f="$f" -v gmon=$gmon '
        function bad(msg) { print f ": " msg; errs++ }
        # a number field that is not one (names are the last fields of a
        # line; a library function keeps its " [lib]" after them)
        {
            for (i = 1; i <= NF; i++)
                if ($i ~ /^-?(nan|inf|NaN|Inf|INF|NAN)(\/.*)?$/ && $(i + 1) !~ /^\[[^0-9]/) {
                    bad("line " NR ": not a number: " $0)
                    break
                }
        }
        /^\t\t\tCall graph/ || /^granularity: each sample hit covers/ { graph = 1 }
        /^Index by function name/ { graph = 0; index_sec = 1; next }
        /^\f/ { graph = 0 }
        graph && /^\[[0-9]+\]/ { n = substr($1, 2) + 0; entry[n] = 1; next }
        graph && /^-+$/ { next }
        graph && NF > 0 && $NF ~ /^\[[0-9]+\]$/ { ref[substr($NF, 2) + 0] = NR }
        index_sec {
            line = " " $0
            while (match(line, /[ \t]\[[0-9]+\] /)) {
                ref[substr(line, RSTART + 2, RLENGTH - 4) + 0] = NR
                line = substr(line, RSTART + RLENGTH)
            }
        }
        END {
            for (n in ref)
                if (!gmon && !(n in entry))
                    bad("[" n "] (line " ref[n] ") has no entry in the call graph")
            exit errs > 0
        }' "$f" || status=1
done
exit $status

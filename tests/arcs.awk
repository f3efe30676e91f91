# arcs.awk: reads a gprof-style call graph (gprof -b -q, cgprof report -b -q)
# and prints one line per arc, "caller callee count", taken from the parent
# lines above each function and the children lines below it (pipe through
# sort -u).  Blocks of a cycle as a whole are skipped: the members' own
# blocks show the same arcs.
function primary_name(   n) {
    n = NF - 1                       # drop the trailing [index]
    if ($(n) ~ /^[0-9]+>$/ && $(n-1) == "<cycle") n -= 2
    if ($(n) ~ /^\[[^0-9]/) n--       # a library function's [module]
    return $(n)
}
# count and name of a parent/child line, in cnt and who; 0 if none
function arc_fields(   i, c) {
    for (i = 1; i <= NF; i++)
        if ($i ~ /^[0-9]+(\/[0-9]+)?$/) {
            split($i, c, "/"); cnt = c[1]; who = $(i + 1)
            return 1
        }
    return 0
}
/^-+$/ { in_block = 0; nparents = 0; next }
/^index / { nparents = 0; next }
/^\[[0-9]+\]/ {
    in_block = 1; name = primary_name()
    skip = ($0 ~ /as a whole>/)
    if (!skip)
        for (j = 1; j <= nparents; j++) print pw[j], name, pc[j]
    nparents = 0
    next
}
/\[[0-9]+\]$/ {
    if (!arc_fields()) next
    if (in_block) { if (!skip) print name, who, cnt }
    else { nparents++; pw[nparents] = who; pc[nparents] = cnt }
}

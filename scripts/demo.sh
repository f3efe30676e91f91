#!/bin/sh
# demo.sh: builds the bundled demo with -pg, profiles it with cgprof record
# and prints the flat profile and call graph.
set -e
cd "$(dirname "$0")/.."
mkdir -p build/demo
gcc -O2 -pg examples/demo.c -o build/demo/demo
cd build/demo
rm -f gmon.out cgprof.data
../cgprof record ./demo
../cgprof report

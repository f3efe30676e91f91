#!/bin/sh
# build.sh: installs the Debian packages cgprof needs (when missing), then
# runs a make target.  Usage: ./build.sh [demo|check|bench|all|install ...]
set -e
cd "$(dirname "$0")"
sh scripts/deps.sh
exec make "${@:-all}"

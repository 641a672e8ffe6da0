#!/bin/sh
# Install dependencies, build, and run the main job on the bundled sample
# capture: ingest -> info -> replay -> report.
set -e
cd "$(dirname "$0")"
./install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
SWT=build/cli/swaptrace
OUT=${OUT:-out/demo}
mkdir -p "$OUT"
$SWT ingest -o "$OUT/sample.db" samples/rnd-1dev-pc0
$SWT info "$OUT/sample.db"
echo
# what readahead would have done: the kernel's policy, the upper bound and
# Leap, from no readahead to 32-page windows
$SWT replay -p none -p auto -p fixed -p oracle -p leap -c 0-5 "$OUT/sample.db"
echo
# and had the same pages been spread over two or four equal-priority devices
# (four at each of their 16 relative slot offsets, which decide readahead's luck)
$SWT replay -p auto -c 3 -l 2 -l 4:spread "$OUT/sample.db"
echo
# how much the answer depends on the memory the replay gives the task
$SWT replay -p auto -p fixed -p oracle -c 3 -m 50%,75%,125%,150% "$OUT/sample.db"
echo
echo "swaptrace: demo: database in $OUT/sample.db (query it with sqlite3; see docs/schema.md)"
$SWT report -o "$OUT/report" "$OUT/sample.db"

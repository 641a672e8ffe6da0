#!/bin/bash
# Replay speed: faults per second per policy on the largest shared capture
# (or the database/capture given), one core, best of REPS (9) runs.  Both the
# event loop alone and the whole run (tables, result allocation) are shown,
# and the whole command's wall time (loading the input from the database,
# the run, storing it).  Target: 20 million faults/s per kernel policy.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
swt=${SWAPTRACE:-$here/build/cli/swaptrace}
input=${1:-}
if [ -z "$input" ]; then
	input=$(ls -S /work/shared/captures/*-pc0/trace.dat "$here"/../shared/captures/*-pc0/trace.dat 2>/dev/null | head -1)
	input=$(dirname "$input")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db=$input
if [ -d "$input" ]; then
	db=$tmp/bench.db
	"$swt" ingest -q -o "$db" "$input"
fi
echo "replay speed on $input ($(sqlite3 "$db" 'SELECT count(*) FROM swap_in WHERE demand = 1') faults)"
printf '%-10s %14s %14s %11s\n' policy "loop Mfaults/s" "run Mfaults/s" "command ms"
# Each repetition replays into a fresh copy: replay does not store a run
# that repeats a stored one, so repeating into one database keeps only the
# first repetition's timings.
reps=${REPS:-9}
# One core, the last one: a replay moved between CPUs mid-run starts over
# with cold caches, which says nothing of its speed.
pin=()
if command -v taskset > /dev/null && [ "$(nproc)" -gt 1 ]; then
	pin=(taskset -c "$(($(nproc) - 1))")
	echo "pinned to CPU $(($(nproc) - 1))"
fi
for policy in none fixed adaptive vma auto oracle leap; do
	: > "$tmp/timings"
	for rep in $(seq "$reps"); do
		cp "$db" "$tmp/run.db"
		start=$(date +%s%N)
		"${pin[@]}" "$swt" replay -p "$policy" -c 3 "$tmp/run.db" > /dev/null
		end=$(date +%s%N)
		sqlite3 "$tmp/run.db" "SELECT faults * 1000.0 / loop_ns, faults * 1000.0 / replay_ns,
		                       ($end - $start) / 1e6 FROM run" >> "$tmp/timings"
	done
	awk -F'|' -v p="$policy" '$1 > l { l = $1 } $2 > r { r = $2 } !c || $3 < c { c = $3 }
		END { printf "%-10s %14.2f %14.2f %11.0f\n", p, l, r, c }' "$tmp/timings"
done

#!/bin/bash
# Capture overhead: the sample workload's throughput (swapload's MBps over
# its measured phase) with and without `swaptrace capture`, on the same
# machine, runs alternating so drift hits both sides alike.  Prints every
# run, the medians and their ratio; the target is under 5 % slowdown.
# Throughput on a shared machine is noisy, so it also compares the time
# and the CPU time the workload spent per swap-in (swapload's seconds, cpu
# and majflt): the same seed makes the same accesses, but reclaim makes a
# few more or fewer of them swap from run to run.  Tracing costs the
# workload CPU in its own context (every event is written by the task that
# hits the tracepoint).  With RT=1 (the default) the workload runs
# SCHED_FIFO, so other tenants of the machine disturb it less.
#
# SWAP=zram (the default) swaps to a compressed RAM disk: no disk latency
# to hide behind, so the workload is CPU-bound and sees the most trace
# events per second -- the worst case for overhead, and a measurement the
# host's disk does not blur.  SWAP=loop swaps to a loop device on a file
# with direct I/O, as the capture tests do; on a VM disk its run-to-run
# spread can be far larger than the overhead being measured.
#
# A run the kernel OOM-kills (memory-cgroup reclaim giving up, which
# happens now and then at this overcommit) is reported and left out.
#
# Needs root, zram or loop devices and a memory cgroup (v1 or v2).  Builds
# a Release tree in build-bench/ unless SWAPTRACE and SWAPLOAD are given.
#
#   bench/capture-overhead.sh                 # 7 pairs, 128 MB at 1.25x the limit
#   RUNS=9 MB=256 ACCESSES=600000 bench/capture-overhead.sh
#   SWAP=loop BLKTRACE=1 bench/capture-overhead.sh
#   SWAP=loop OUT=/dev/shm bench/capture-overhead.sh   # captures on another device
set -u -o pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-7}
MB=${MB:-128}
LIMIT_MB=${LIMIT_MB:-$((MB * 4 / 5))}
SWAP=${SWAP:-zram}
ACCESSES=${ACCESSES:-$([ "$SWAP" = zram ] && echo 300000 || echo 60000)}
SEED=${SEED:-21}
BLKTRACE=${BLKTRACE:-0}
RT=${RT:-1}
OUT=${OUT:-}	# where captures go (default: next to the loop swap's file)

[ "$(id -u)" -eq 0 ] || { echo "capture-overhead: needs root" >&2; exit 1; }
BENCH=capture-overhead
. bench/swap-host.sh
swap_host_build || exit 1

WORK=$(mktemp -d "${TMPDIR:-/tmp}/swt-bench-XXXXXX")
CAPDIR=$WORK
[ -n "$OUT" ] && CAPDIR=$(mktemp -d "$OUT/swt-bench-cap-XXXXXX")
cleanup() {
	swap_host_teardown
	rm -rf "$WORK"
	[ "$CAPDIR" != "$WORK" ] && rm -rf "$CAPDIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ "$SWAP" = zram ]; then
	swap_host_zram 1024 || { echo "capture-overhead: cannot set up zram swap" >&2; exit 1; }
else
	swap_host_loop "$WORK/swap.img" 1024 || { echo "capture-overhead: cannot set up loop swap" >&2; exit 1; }
fi
DEV=$SWAP_HOST_DEV
swap_host_cgroup "$LIMIT_MB" || exit 1

PRIO=
[ "$RT" = 1 ] && command -v chrt > /dev/null && PRIO="chrt -f 50"
RUN=$(swap_host_in_cgroup $PRIO "'$SWAPLOAD'" mb=$MB accesses=$ACCESSES seed=$SEED)
CAPTURE_OPTS=()
[ "$BLKTRACE" = 1 ] && CAPTURE_OPTS+=(--blktrace)

field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
# microseconds of FIELD (seconds or cpu) per swap-in of the measured phase
per_fault() {
	sed -n "s/.* $1=\([0-9.]*\).* majflt=\([0-9]*\).*/\1 \2/p" |
		awk '$2 > 0 { printf "%.2f\n", $1 * 1e6 / $2 }'
}

echo "capture-overhead: swapload mb=$MB accesses=$ACCESSES in a ${LIMIT_MB} MB cgroup, swap on $SWAP ($DEV), $RUNS pairs${CAPTURE_OPTS:+, ${CAPTURE_OPTS[*]}}"
plain=()
traced=()
plain_cpu=()
traced_cpu=()
plain_wall=()
traced_wall=()
echo "  (per run: MBps, then wall/CPU microseconds per swap-in)"
for i in $(seq 1 "$RUNS"); do
	sh -c "$RUN" > "$WORK/plain.out"
	p=$(field MBps < "$WORK/plain.out")
	pc=$(per_fault cpu < "$WORK/plain.out")
	pw=$(per_fault seconds < "$WORK/plain.out")
	rm -rf "$CAPDIR/cap"
	"$SWAPTRACE" capture "${CAPTURE_OPTS[@]}" -o "$CAPDIR/cap" -- sh -c "$RUN" > "$WORK/traced.out" 2> "$WORK/err"
	t=$(field MBps < "$WORK/traced.out")
	tc=$(per_fault cpu < "$WORK/traced.out")
	tw=$(per_fault seconds < "$WORK/traced.out")
	cpu=$(sed -n 's/.*: \([0-9.]*\) s (.*swaptrace used \([0-9.]*\) s of CPU/\2 \1/p' "$WORK/err")
	lost=$(awk '/^# lost events/ { s = 1; next } /^# / { s = 0 } s { n += $2 } END { print n + 0 }' "$CAPDIR/cap/meta.txt")
	size=$(du -sm "$CAPDIR/cap" | cut -f1)
	printf "  run %2d: plain %7s MBps %6s/%-6s us   captured %7s MBps %6s/%-6s us   (%s MB, %s lost; swaptrace CPU %s s in %s s)\n" \
		"$i" "${p:-OOM}" "${pw:--}" "${pc:--}" "${t:-OOM}" "${tw:--}" "${tc:--}" "$size" "$lost" ${cpu:-? ?}
	if [ -z "$p" ] || [ -z "$t" ]; then
		echo "         (the kernel OOM-killed a run: pair left out)"
		continue
	fi
	plain+=("$p")
	traced+=("$t")
	plain_cpu+=("$pc")
	traced_cpu+=("$tc")
	plain_wall+=("$pw")
	traced_wall+=("$tw")
done

[ "${#plain[@]}" -gt 0 ] || { echo "capture-overhead: no complete pair" >&2; exit 1; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mp=$(median "${plain[@]}")
mt=$(median "${traced[@]}")
ratios=()
for i in "${!plain[@]}"; do
	ratios+=("$(awk -v p="${plain[$i]}" -v t="${traced[$i]}" 'BEGIN { print t / p }')")
done
mr=$(median "${ratios[@]}")
cratios=()
wratios=()
for i in "${!plain_cpu[@]}"; do
	cratios+=("$(awk -v p="${plain_cpu[$i]}" -v t="${traced_cpu[$i]}" 'BEGIN { print t / p }')")
	wratios+=("$(awk -v p="${plain_wall[$i]}" -v t="${traced_wall[$i]}" 'BEGIN { print t / p }')")
done
mc=$(median "${cratios[@]}")
mw=$(median "${wratios[@]}")
awk -v p="$mp" -v t="$mt" -v r="$mr" -v c="$mc" -v w="$mw" 'BEGIN {
	printf "median: plain %.1f MBps, captured %.1f MBps\n", p, t
	printf "ratio of the medians, captured/plain: %.3f (%.1f %% slowdown)\n", t / p, (1 - t / p) * 100
	printf "median of the pairs\x27 ratios:         %.3f (%.1f %% slowdown; target < 5 %%)\n", r, (1 - r) * 100
	printf "time per swap-in, captured/plain (median of pairs): %.3f (%+.1f %%)\n", w, (w - 1) * 100
	printf "CPU per swap-in, captured/plain (median of pairs):  %.3f (%+.1f %%)\n", c, (c - 1) * 100
}'

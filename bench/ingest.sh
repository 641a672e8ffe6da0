#!/bin/bash
# Ingest speed against the reference decoders, and ingest's peak memory.
#
#   bench/ingest.sh [CAPTURE_DIR] [REPEAT]
#
# CAPTURE_DIR is a capture laid out like ../shared/captures/* (trace.dat,
# meta.txt, blk/*.xz); by default the largest shared one.  Each command runs
# REPEAT times (default 5), the four in turn, and the median wall time counts:
#   swaptrace ingest trace.dat     vs  trace-cmd report -i trace.dat > /dev/null
#   swaptrace ingest blktrace      vs  blkparse -i NAME -o /dev/null
# and, on the ingested blktrace, btt's tables:
#   swaptrace info --latency DB    vs  btt -i (blkparse -d's dump)
# Targets: blktrace ingest faster than blkparse; trace.dat ingest at least 3x
# faster than trace-cmd report.  Then peak RSS (GNU time) of ingest on every
# shared capture and on a blktrace set twice as long as the largest, which
# should not grow with the trace.
#
# SWAPTRACE=path uses that binary; otherwise an optimised build is made in
# build-bench/.  This is a benchmark, not a test: it prints, it does not judge.
set -eu -o pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
REPEAT=${2:-5}

for tool in blkparse btt trace-cmd xz python3 /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench: '$tool' is missing (./install-deps.sh)" >&2; exit 1; }
done
if [ -z "${SWAPTRACE:-}" ]; then
	cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DSWT_BUILD_TESTS=OFF >/dev/null
	cmake --build build-bench -j "$(nproc)" >/dev/null
	SWAPTRACE=$SRC/build-bench/cli/swaptrace
fi

CAPTURES=
for d in "${SWT_SHARED_CAPTURES:-}" "$SRC/../shared/captures" /work/shared/captures; do
	if [ -n "$d" ] && ls "$d"/*/trace.dat >/dev/null 2>&1; then CAPTURES=$(cd "$d" && pwd); break; fi
done
if [ -n "${1:-}" ]; then
	CAP=$(cd "$1" && pwd)
else
	[ -n "$CAPTURES" ] || { echo "bench: no shared captures; give a capture directory" >&2; exit 1; }
	CAP=$(dirname "$(ls -S "$CAPTURES"/*/trace.dat | head -n 1)")
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/swt-bench-XXXXXX")
trap 'rm -rf "$TMP"' EXIT

unpack_blk() { # capture-dir dest-dir: the blkparse input name
	mkdir -p "$2"
	for f in "$1"/blk/*.xz; do xz -dc "$f" > "$2/$(basename "$f" .xz)"; done
	echo "$2/swap"
}

# run_timed OUT-PREFIX cmd...: one run's wall time (ms, in .ms), CPU time
# (user + system, ms, in .cpu) and peak RSS (KiB, in .rss)
run_timed() {
	local prefix=$1 t0 t1
	shift
	t0=$(date +%s%N)
	/usr/bin/time -f '%M %U %S' -o "$prefix.time" "$@" >/dev/null 2>"$prefix.err" ||
		{ echo "bench: failed: $*" >&2; cat "$prefix.err" >&2; exit 1; }
	t1=$(date +%s%N)
	echo "$(( (t1 - t0) / 1000000 ))" > "$prefix.ms"
	awk '{ print $1 > "'"$prefix.rss"'"; printf "%d\n", ($2 + $3) * 1000 > "'"$prefix.cpu"'" }' \
		"$prefix.time"
}

# once LABEL cmd...: one more run of a command, appended to its list
once() {
	local label=$1
	shift
	run_timed "$TMP/$label" "$@"
	echo "$(cat "$TMP/$label.ms") $(cat "$TMP/$label.cpu")" >> "$TMP/$label.all"
}

# median LABEL: the median wall and CPU ms of its runs
median() {
	echo "$(cut -d' ' -f1 "$TMP/$1.all" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')" \
	     "$(cut -d' ' -f2 "$TMP/$1.all" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
}

BLK=$(unpack_blk "$CAP" "$TMP/blk")
echo "capture: $CAP"
echo "  trace.dat $(stat -c %s "$CAP/trace.dat") bytes; blktrace $(cat "$BLK".blktrace.* | wc -c) bytes; $REPEAT runs each, median"
echo

# each round runs the four commands once: this shared VM's speed drifts by
# 2x over minutes, and runs of one command in a row would each meet a
# different drift
: > "$TMP/td-ingest.all"; : > "$TMP/td-report.all"; : > "$TMP/blk-ingest.all"; : > "$TMP/blk-parse.all"
for round in $(seq "$REPEAT"); do
	once td-ingest "$SWAPTRACE" ingest -q -o "$TMP/td.db" --meta "$CAP/meta.txt" "$CAP/trace.dat"
	# (run_timed sends every command's output to /dev/null)
	once td-report trace-cmd report -i "$CAP/trace.dat"
	once blk-ingest "$SWAPTRACE" ingest -q -o "$TMP/blk.db" --meta "$CAP/meta.txt" "$BLK"
	once blk-parse blkparse -i "$BLK" -o /dev/null
done
read -r td_ingest td_ingest_cpu <<< "$(median td-ingest)"
read -r td_report td_report_cpu <<< "$(median td-report)"
read -r blk_ingest blk_ingest_cpu <<< "$(median blk-ingest)"
read -r blk_parse blk_parse_cpu <<< "$(median blk-parse)"

printf '%-34s %8s %8s\n' "command" "wall ms" "cpu ms"
printf '%-34s %8d %8d\n' "swaptrace ingest trace.dat" "$td_ingest" "$td_ingest_cpu" \
	"trace-cmd report > /dev/null" "$td_report" "$td_report_cpu" \
	"swaptrace ingest blktrace" "$blk_ingest" "$blk_ingest_cpu" \
	"blkparse -o /dev/null" "$blk_parse" "$blk_parse_cpu"
echo
awk -v a="$td_report" -v b="$td_ingest" -v c="$blk_parse" -v d="$blk_ingest" \
    -v ac="$td_report_cpu" -v bc="$td_ingest_cpu" -v cc="$blk_parse_cpu" -v dc="$blk_ingest_cpu" 'BEGIN {
	printf "trace.dat: ingest is %.2fx faster than trace-cmd report (target >= 3); in CPU time %.2fx\n", a / b, ac / bc
	printf "blktrace:  ingest is %.2fx faster than blkparse (target > 1); in CPU time %.2fx\n", c / d, cc / dc
}'
echo "(ingest decodes and writes on two cores at once: under other load, wall ratios drop)"

# --- btt's tables -----------------------------------------------------------------
# info --latency prints btt's latency and merge tables from the database
# ingest wrote; btt reads blkparse's binary dump of the same trace
blkparse -i "$BLK" -d "$TMP/dump.bin" -O >/dev/null 2>&1
: > "$TMP/info-latency.all"; : > "$TMP/btt.all"
cd "$TMP"	# btt writes its per-device IOPS and MB/s files here
for round in $(seq "$REPEAT"); do
	once info-latency "$SWAPTRACE" info --latency "$TMP/blk.db"
	once btt btt -i "$TMP/dump.bin"
done
cd "$SRC"
read -r info_latency info_latency_cpu <<< "$(median info-latency)"
read -r btt_ms btt_cpu <<< "$(median btt)"
echo
printf '%-34s %8s %8s\n' "command" "wall ms" "cpu ms"
printf '%-34s %8d %8d\n' "swaptrace info --latency" "$info_latency" "$info_latency_cpu" \
	"btt -i (blkparse's dump)" "$btt_ms" "$btt_cpu"
awk -v a="$btt_ms" -v b="$info_latency" 'BEGIN {
	printf "btt tables: info --latency takes %.2fx btt'"'"'s time (info also counts blkparse'"'"'s summary)\n", b / a
}'

# --- peak memory ----------------------------------------------------------------
echo
echo "peak RSS of swaptrace ingest (KiB):"
printf '  %-22s %12s %10s %14s %12s %10s\n' capture "trace.dat B" "RSS" "libtracecmd RSS" "blktrace B" "RSS"
rss_caps=("$CAP")
if [ -n "$CAPTURES" ]; then
	for cap in "$CAPTURES"/*/; do
		[ "${cap%/}" != "$CAP" ] && [ -f "$cap/trace.dat" ] && rss_caps+=("${cap%/}")
	done
fi
for cap in "${rss_caps[@]}"; do
	blk=$(unpack_blk "$cap" "$TMP/rss-blk")
	run_timed "$TMP/rss-td" "$SWAPTRACE" ingest -q -o "$TMP/rss.db" --meta "$cap/meta.txt" "$cap/trace.dat"
	run_timed "$TMP/rss-lib" env SWT_TRACEDAT_READER=libtracecmd \
		"$SWAPTRACE" ingest -q -o "$TMP/rss.db" --meta "$cap/meta.txt" "$cap/trace.dat"
	run_timed "$TMP/rss-blk" "$SWAPTRACE" ingest -q -o "$TMP/rss.db" --meta "$cap/meta.txt" "$blk"
	printf '  %-22s %12d %10d %14d %12d %10d\n' "$(basename "$cap")" "$(stat -c %s "$cap/trace.dat")" \
		"$(cat "$TMP/rss-td.rss")" "$(cat "$TMP/rss-lib.rss")" "$(cat "$blk".blktrace.* | wc -c)" \
		"$(cat "$TMP/rss-blk.rss")"
	rm -rf "$TMP/rss-blk"
done

# the largest blktrace set played twice in a row, the second copy shifted in
# time past the end of the first and in sequence numbers: twice the trace
# should take the same memory
python3 - "$TMP/double" "$BLK".blktrace.* <<'PY'
import os, struct, sys
out_dir, paths = sys.argv[1], sys.argv[2:]
files = [open(p, "rb").read() for p in paths]
def records(data):
    off = 0
    while off < len(data):
        size = 48 + struct.unpack_from("<H", data, off + 46)[0]
        yield off, size
        off += size
times = [struct.unpack_from("<Q", d, off + 8)[0] for d in files for off, _ in records(d)]
shift = max(times) - min(times) + 1000000
os.makedirs(out_dir)
for path, data in zip(paths, files):
    last_seq = max(struct.unpack_from("<I", data, off + 4)[0] for off, _ in records(data))
    copy = bytearray(data)
    for off, _ in records(data):
        seq, t = struct.unpack_from("<IQ", data, off + 4)
        struct.pack_into("<IQ", copy, off + 4, seq + last_seq, t + shift)
    with open(os.path.join(out_dir, os.path.basename(path)), "wb") as out:
        out.write(data)
        out.write(copy)
PY
run_timed "$TMP/rss-double" "$SWAPTRACE" ingest -q -o "$TMP/rss.db" --meta "$CAP/meta.txt" "$TMP/double/swap"
printf '  %-22s %12s %10s %14s %12d %10d\n' "$(basename "$CAP") x2" - - - \
	"$(cat "$TMP/double"/swap.blktrace.* | wc -c)" "$(cat "$TMP/rss-double.rss")"
echo "  (RSS includes the trace.dat decoder process.  Compressed data is read a chunk"
echo "   per CPU at a time; 'libtracecmd RSS' is the same ingest through libtracecmd's"
echo "   own reader (SWT_TRACEDAT_READER=libtracecmd), which keeps every chunk it"
echo "   decompresses until the file is closed, so it grows with the trace)"

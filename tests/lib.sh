# Shared helpers for the end-to-end test scripts (sourced, bash).
# ctest passes SWAPTRACE, SWT_SOURCE_DIR, SWT_BUILD_DIR, SWT_TOOLS_DIR and
# optionally SWT_SHARED_CAPTURES.  Exit 77 means "skipped" to ctest.
set -u -o pipefail

: "${SWAPTRACE:?SWAPTRACE must point at the swaptrace binary}"
: "${SWT_SOURCE_DIR:?}"
: "${SWT_BUILD_DIR:?}"

TEST_NAME=$(basename "$0" .sh)
WORK=$(mktemp -d "${SWT_BUILD_DIR}/tmp-${TEST_NAME}-XXXXXX")
# The reference tools mount tracefs for themselves (`trace-cmd convert`
# does, through libtracefs) and leave it mounted: a test puts the host back
# as it found it.
TRACEFS_UNMOUNTED_AT_START=0
mountpoint -q /sys/kernel/tracing 2>/dev/null || TRACEFS_UNMOUNTED_AT_START=1
lib_cleanup() {
	# a test that made a file immutable and failed before undoing it
	chattr -R -i "$WORK" 2>/dev/null
	rm -rf "$WORK"
	if [ "$TRACEFS_UNMOUNTED_AT_START" = 1 ] && mountpoint -q /sys/kernel/tracing 2>/dev/null; then
		umount /sys/kernel/tracing 2>/dev/null
	fi
}
trap lib_cleanup EXIT
FAILURES=0

fail() {
	echo "FAIL: $*" >&2
	FAILURES=$((FAILURES + 1))
}

skip() {
	echo "SKIP: $*"
	exit 77
}

check_eq() { # actual expected what
	if [ "$1" != "$2" ]; then
		fail "$3: got '$1', expected '$2'"
	fi
}

finish() {
	if [ "$FAILURES" -ne 0 ]; then
		echo "$TEST_NAME: $FAILURES failure(s)" >&2
		exit 1
	fi
	echo "$TEST_NAME: ok"
	exit 0
}

need_tool() {
	command -v "$1" >/dev/null 2>&1 || skip "'$1' is not installed (run ./install-deps.sh)"
}

# The real captures shared with this project (read-only).
find_captures() {
	local d
	for d in "${SWT_SHARED_CAPTURES:-}" "$SWT_SOURCE_DIR/../shared/captures" /work/shared/captures; do
		if [ -n "$d" ] && [ -d "$d" ] && ls "$d"/*/trace.dat >/dev/null 2>&1; then
			CAPTURES=$(cd "$d" && pwd)
			return 0
		fi
	done
	skip "shared captures not found (set SWT_SHARED_CAPTURES)"
}

# Decompress a capture's blktrace files into the build tree (cached) and
# print the blkparse input name for them.
blk_input() { # capture-name
	local name=$1 src="$CAPTURES/$1/blk" dst="$SWT_BUILD_DIR/captures/$1" f out
	mkdir -p "$dst"
	for f in "$src"/*.xz; do
		out="$dst/$(basename "$f" .xz)"
		if [ ! -s "$out" ] || [ "$f" -nt "$out" ]; then
			xz -dc "$f" > "$out.tmp" && mv "$out.tmp" "$out"
		fi
	done
	echo "$dst/swap"
}

# json_get FILE PYTHON-EXPR (d is the parsed document)
json_get() {
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

# Per-device counters as blkparse counts them, one line per device:
# "MAJ,MIN rq rd rc rm wq wd wc wm" (queued, dispatched, completed, merges).
# blkparse's summary leaves passthrough (PC) requests out and tells writes
# by the W bit, which no printed field shows (a discard's RWBS is D, W bit
# or not): so the events are read three times, all of them, those -a
# write passes (W bit) and those -a pc passes, and the PC ones taken off.
blkparse_counts() { # blkparse-input
	{
		for mask in all write pc; do
			blkparse -i "$1" $([ $mask = all ] || echo "-a $mask") -f "$mask %M,%m %a %d\n" \
				-o /dev/stdout 2>/dev/null
		done
	} | awk '
		NF == 4 && $3 ~ /^(Q|D|C|M|F)$/ {
			k = $2 " " (($3 == "F") ? "M" : $3)
			if ($1 == "all") {
				n[k " 0"]++
				devs[$2] = 1
			} else if ($1 == "write") {
				n[k " 1"]++
				n[k " 0"]--
			} else {
				n[k " " (($4 ~ /W/) ? 1 : 0)]--
			}
		}
		END {
			for (d in devs)
				printf "%s %d %d %d %d %d %d %d %d\n", d,
					n[d " Q 0"], n[d " D 0"], n[d " C 0"], n[d " M 0"],
					n[d " Q 1"], n[d " D 1"], n[d " C 1"], n[d " M 1"]
		}' | sort
}

# The same line format from `swaptrace info --json`.
info_counts() { # info.json
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for x in sorted(d["devices"], key=lambda x: x["dev"]):
    print(x["dev"].replace(":", ","), *(x[k] for k in (
        "reads_queued", "reads_dispatched", "reads_completed", "read_merges",
        "writes_queued", "writes_dispatched", "writes_completed", "write_merges")))
PY
}

meta_value() { # meta.txt key
	awk -v k="$2" '$1 == k { print $2; exit }' "$1"
}

# slot_complaint VALUE: what info, report and replay say of a stream slot
# VALUE (as SQL writes it) that ingest never stores (store/store.h); a
# whole number past the end is taken to be in the sample's one area
slot_complaint() {
	case $1 in
	0) echo "is the swap area's header, never a page" ;;
	-*) echo "is below the swap area" ;;
	*[!0-9]*) echo "is not a whole number" ;;
	[1-9]*) echo "is past the end of swap area 7:0 (262144 slots)" ;;
	*) echo "is not a whole number" ;;
	esac
}

# zero_root_pages DB TABLE...: zero the first page of each table (and of its
# indexes) in DB, as a damaged disk would: SQLite opens the file, and
# reading those tables fails with "database disk image is malformed"
zero_root_pages() {
	local db=$1 size root; shift
	size=$(sqlite3 "$db" 'PRAGMA page_size') || return 1
	for root in $(sqlite3 "$db" "SELECT rootpage FROM sqlite_schema WHERE rootpage > 0 AND
			tbl_name IN ($(printf "'%s'," "$@" | sed 's/,$//'))"); do
		dd if=/dev/zero of="$db" bs="$size" seek=$((root - 1)) count=1 conv=notrunc \
			2>/dev/null || return 1
	done
}

# long_path LENGTH NAME: print a path of exactly LENGTH bytes ending in /NAME,
# its directories (under $WORK, none longer than 200 bytes) created: for
# messages and opens of paths longer than fixed buffers and SQLite's limit
long_path() {
	local dir=$WORK/long left
	left=$(($1 - ${#dir} - ${#2} - 1))
	while [ "$left" -gt 0 ]; do
		local n=$((left > 201 ? 200 : left - 1))
		# one byte left over could not be a directory: leave two
		[ $((left - n - 1)) -ne 1 ] || n=$((n - 1))
		dir=$dir/$(printf "%${n}s" | tr ' ' p)
		left=$(($1 - ${#dir} - ${#2} - 1))
	done
	mkdir -p "$dir"
	printf '%s/%s' "$dir" "$2"
}

#!/bin/bash
# Every shared capture's blktrace files: swaptrace info's per-device counters
# equal blkparse's, its latency and merge tables (--latency) btt's, and the
# swap page streams equal the kernel's pswpin and pswpout over the run.
. "$(dirname "$0")/lib.sh"
need_tool blkparse
need_tool btt
need_tool xz
find_captures

for cap in "$CAPTURES"/*/; do
	name=$(basename "$cap")
	[ -d "$cap/blk" ] || continue
	input=$(blk_input "$name")
	db="$WORK/$name.db"
	if ! "$SWAPTRACE" ingest -q -o "$db" --meta "$cap/meta.txt" "$input"; then
		fail "$name: ingest failed"
		continue
	fi
	"$SWAPTRACE" info --json "$db" > "$WORK/$name.json" || fail "$name: info failed"
	check_eq "$(info_counts "$WORK/$name.json")" "$(blkparse_counts "$input")" "$name: per-device counters vs blkparse"
	check_eq "$(json_get "$WORK/$name.json" 'd["swap_in_pages"]')" "$(meta_value "$cap/meta.txt" pswpin)" "$name: swap-in pages vs pswpin"
	check_eq "$(json_get "$WORK/$name.json" 'd["swap_out_pages"]')" "$(meta_value "$cap/meta.txt" pswpout)" "$name: swap-out pages vs pswpout"
	check_eq "$(json_get "$WORK/$name.json" 'd["lost_events"]')" 0 "$name: lost events"
	# btt reads blkparse's binary dump of the same files; it writes per-device
	# files (7,0_iops_fp.dat...) into its working directory, hence the cd
	if blkparse -i "$input" -d "$WORK/$name.bin" -O > /dev/null 2>&1 &&
		(cd "$WORK" && btt -A -i "$name.bin" -o "$name.btt" > /dev/null 2>&1); then
		"$SWAPTRACE" info --json --latency "$db" > "$WORK/$name.latency.json" ||
			fail "$name: info --latency failed"
		# the same tables as SQL's joins and sorts give them (info-block.c
		# joins bios to requests and orders Q2Q in C where it can)
		SWT_TEST_INFO_SQL=1 "$SWAPTRACE" info --json --latency "$db" > "$WORK/$name.sql.json" ||
			fail "$name: info --latency (SQL) failed"
		cmp -s "$WORK/$name.latency.json" "$WORK/$name.sql.json" ||
			fail "$name: info --latency differs from SQL's own joins"
		python3 "$SWT_SOURCE_DIR/tests/btt-compare.py" "$WORK/$name.btt.avg" \
			"$WORK/$name.latency.json" > "$WORK/$name.btt-diff" ||
			fail "$name: latency and merge tables vs btt: $(head -5 "$WORK/$name.btt-diff")"
		# the text table reads as btt's (one device: its all-devices table)
		if [ "$name" = rnd-1dev-pc0 ]; then
			check_eq "$("$SWAPTRACE" info --latency "$db" |
				sed -n 's/^  \([QGIMD]2[QGIMDC] .*\)$/\1/p' | tr -s ' ')" \
				"$(sed -n '/^=* All Devices/,/^=* Device Overhead/s/^\([QGIMD]2[QGIMDC] .*\)$/\1/p' \
					"$WORK/$name.btt.avg" | tr -s ' ')" \
				"$name: info --latency's table vs btt's"
		fi
		rm -f "$WORK/$name.bin" "$WORK/$name.btt"*
	else
		fail "$name: blkparse -d or btt failed"
	fi
	echo "$name: blktrace ingest agrees with blkparse and btt"
done

# A blktrace set in a capture's blk/ folder (capture's layout and the
# shared captures') is named after the capture, not "blk".
mkdir -p "$WORK/mycap/blk"
cp "$(blk_input rnd-1dev-pc0)".blktrace.* "$WORK/mycap/blk/"
"$SWAPTRACE" ingest -q -o "$WORK/blkname.db" --meta "$CAPTURES/rnd-1dev-pc0/meta.txt" "$WORK/mycap/blk/swap" ||
	fail "ingest of DIR/blk/swap"
check_eq "$(sqlite3 "$WORK/blkname.db" 'SELECT name FROM capture')" mycap "capture name of DIR/blk/swap"
# ... and, without --meta, takes DIR/meta.txt as ingesting DIR does (it
# looked in DIR/blk only: no page-cluster, the layout guessed with a
# warning, and replay refused the database)
cp "$CAPTURES/rnd-1dev-pc0/meta.txt" "$WORK/mycap/"
if "$SWAPTRACE" ingest -q -o "$WORK/blkmeta.db" "$WORK/mycap/blk/swap" 2>"$WORK/blkmeta.err"; then
	check_eq "$(cat "$WORK/blkmeta.err")" "" "DIR/blk/swap without --meta: warnings"
	check_eq "$(sqlite3 "$WORK/blkmeta.db" 'SELECT name, page_cluster FROM capture')" \
		"mycap|$(meta_value "$WORK/mycap/meta.txt" page_cluster)" \
		"DIR/blk/swap without --meta: DIR/meta.txt's page-cluster"
else
	fail "ingest of DIR/blk/swap without --meta: $(cat "$WORK/blkmeta.err")"
fi
# ... and so from inside DIR, as blk/swap (named "blk")
(cd "$WORK/mycap" && "$SWAPTRACE" ingest -q -o "$WORK/blkmeta.db" blk/swap) ||
	fail "ingest of blk/swap from inside DIR"
check_eq "$(sqlite3 "$WORK/blkmeta.db" 'SELECT name, page_cluster FROM capture')" \
	"mycap|$(meta_value "$WORK/mycap/meta.txt" page_cluster)" "blk/swap from inside DIR: name and page-cluster"
rm -f "$WORK/blkmeta.db"

# Lost events (a ring buffer that overran): every 10th completion, or every
# 10th issue, left out of rnd-1dev-pc0's files.  The lost count is what was
# left out, and each request still seen issued and completed has the
# completion it had in the whole trace: one lost completion must not pair
# every later completion at that sector with the request before it.
TF() { python3 "$SWT_SOURCE_DIR/tests/tracefile.py" "$@"; }
input=$(blk_input rnd-1dev-pc0)
"$SWAPTRACE" ingest -q -o "$WORK/whole.db" --meta "$CAPTURES/rnd-1dev-pc0/meta.txt" "$input" ||
	fail "rnd-1dev-pc0: ingest"
for act in 8 7; do
	what=$([ $act = 8 ] && echo completions || echo issues)
	mkdir -p "$WORK/lossy$act"
	dropped=0
	for f in "$input".blktrace.*; do
		n=$(TF blk-drop "$f" "$WORK/lossy$act/$(basename "$f")" $act 10) || fail "dropping $what"
		dropped=$((dropped + n))
	done
	db="$WORK/lossy$act.db"
	"$SWAPTRACE" ingest -q -o "$db" --meta "$CAPTURES/rnd-1dev-pc0/meta.txt" "$WORK/lossy$act/swap" ||
		{ fail "ingest with lost $what"; continue; }
	"$SWAPTRACE" info --json "$db" > "$WORK/lossy$act.json" || fail "info with lost $what"
	check_eq "$(json_get "$WORK/lossy$act.json" 'd["lost_events"]')" "$dropped" "lost $what counted"
	# the events kept are counted as blkparse counts them, orphans too
	check_eq "$(info_counts "$WORK/lossy$act.json")" "$(blkparse_counts "$WORK/lossy$act/swap")" \
		"with lost $what: per-device counters vs blkparse"
	# (EXCEPT sorts: a correlated NOT EXISTS scanned the whole table per row)
	sqlite3 "$db" "ATTACH '$WORK/whole.db' AS whole;
		SELECT (SELECT count(*) FROM request WHERE issue_ns IS NOT NULL
			AND complete_ns IS NOT NULL),
		       (SELECT count(*) FROM (SELECT dev, sector, issue_ns, complete_ns FROM request
			WHERE issue_ns IS NOT NULL AND complete_ns IS NOT NULL
			EXCEPT SELECT dev, sector, issue_ns, complete_ns FROM whole.request)),
		       (SELECT count(*) FROM whole.request WHERE issue_ns IS NOT NULL
			AND complete_ns IS NOT NULL)" \
		> "$WORK/pairs$act.txt" || fail "pairs with lost $what"
	IFS='|' read -r pairs wrong whole < "$WORK/pairs$act.txt"
	check_eq "$wrong" 0 "with every 10th of the $what lost: requests paired with another's completion"
	[ "$pairs" -ge $((whole - dropped)) ] ||
		fail "with every 10th of the $what lost: $pairs requests issued and completed, fewer than $whole - $dropped"
	echo "lost $what ($dropped): $pairs of $whole requests keep their issue and completion, none paired wrongly"
done

# A read requeued and issued again, a write completed in two parts, in both
# byte orders: info's counts and KiB are blkparse's summary's, line by line
# (the write's final part was counted with the whole request's 16 sectors,
# Writes Completed 12KiB where blkparse has 8, and the Requeued line was
# missing, its KiB not taken back from the dispatches).
summary_lines() { # the per-device count lines of blkparse's or info's text
	sed -n 's/^ \(Reads\? [A-Z][a-z]*:.*\|Read Dispatches:.*\)$/\1/p' | tr -s ' \t' ' '
}
for order in little big; do
	mkdir -p "$WORK/requeue-$order"
	TF blk-write "$WORK/requeue-$order/set.blktrace.0" $order <<'EOF_RECORDS' || fail "writing requeue-$order"
1000 Q R 100 8
1010 G R 100 8
1020 I R 100 8
1030 D R 100 8
1040 R R 100 8
1050 I R 100 8
1060 D R 100 8
1070 C R 100 8
2000 Q WS 200 16
2010 G WS 200 16
2020 I WS 200 16
2030 D WS 200 16
2040 C WS 200 8
2050 C WS 208 8
EOF_RECORDS
	db="$WORK/requeue-$order.db"
	"$SWAPTRACE" ingest -q -o "$db" --swap 8:0 "$WORK/requeue-$order/set" 2>/dev/null ||
		{ fail "requeue-$order: ingest"; continue; }
	check_eq "$("$SWAPTRACE" info "$db" | summary_lines)" \
		"$(blkparse -i "$WORK/requeue-$order/set" 2>/dev/null | summary_lines)" \
		"requeue and partial completion ($order-endian): info's counts and KiB vs blkparse's"
	# the block_event view is blkparse's stream: the write's last part has
	# what the first left (the view had it as the whole request, 200+16)
	check_eq "$(sqlite3 -separator ' ' "$db" 'SELECT action, sector, nr_sectors FROM block_event ORDER BY ts')" \
		"$(blkparse -i "$WORK/requeue-$order/set" -f '%a %S %n\n' 2>/dev/null | grep -E '^[A-Z]+ [0-9]+ [0-9]+$')" \
		"requeue and partial completion ($order-endian): block_event vs blkparse's events"
done

# blkparse_counts (lib.sh) counts as blkparse's summary does: a discard
# without the W bit is a read, and passthrough (PC) requests are left out
# (it counted the discard a write, by its RWBS letter D, and the PC
# issues and completions as reads and writes).
mkdir -p "$WORK/pcdisc"
TF blk-write "$WORK/pcdisc/set.blktrace.0" <<'EOF_RECORDS' || fail "writing pcdisc"
1000 Q D 100 8
1010 G D 100 8
1020 I D 100 8
1030 D D 100 8
1040 C D 100 8
2000 I WP 0 0
2010 D WP 0 0
2020 C WP 0 0
3000 D P 0 0
3010 C P 0 0
EOF_RECORDS
"$SWAPTRACE" ingest -q -o "$WORK/pcdisc.db" --swap 8:0 "$WORK/pcdisc/set" 2>/dev/null &&
	"$SWAPTRACE" info --json "$WORK/pcdisc.db" > "$WORK/pcdisc.json" || fail "pcdisc: ingest or info"
check_eq "$(blkparse_counts "$WORK/pcdisc/set")" "8,0 1 1 1 0 0 0 0 0" "discard and PC requests: blkparse_counts"
check_eq "$(info_counts "$WORK/pcdisc.json")" "$(blkparse_counts "$WORK/pcdisc/set")" \
	"discard and PC requests: per-device counters vs blkparse"
check_eq "$(blkparse -i "$WORK/pcdisc/set" 2>/dev/null | summary_lines)" \
	"$("$SWAPTRACE" info "$WORK/pcdisc.db" | summary_lines)" "discard and PC requests: info's count lines vs blkparse's"

# A passthrough (PC) request's queue event is its own, not a file-system
# bio's: a PC read queued at a swap slot, one written with no data, next
# to a file-system read of slot 1.  Before, both PC queues were bios: the
# block_event view had them with pc 0, info counted them as Reads and
# Writes Queued (blkparse: 1 and 0), and the PC read was a swap-in page.
mkdir -p "$WORK/pcq"
TF blk-write "$WORK/pcq/set.blktrace.0" <<'EOF_RECORDS' || fail "writing pcq"
1000 Q R 8 8
1010 G R 8 8
1020 I R 8 8
1030 D R 8 8
1040 C R 8 8
2000 Q P 16 8
2010 G P 16 8
2020 I P 16 8
2030 D P 16 8
2040 C P 16 8
3000 Q WP 0 0
3010 G WP 0 0
3020 I WP 0 0
3030 D WP 0 0
3040 C WP 0 0
EOF_RECORDS
"$SWAPTRACE" ingest -q -o "$WORK/pcq.db" --swap 8:0 "$WORK/pcq/set" 2>/dev/null &&
	"$SWAPTRACE" info --json "$WORK/pcq.db" > "$WORK/pcq.json" || fail "pcq: ingest or info"
check_eq "$(sqlite3 -separator ' ' "$WORK/pcq.db" 'SELECT action, write FROM block_event WHERE pc = 1 ORDER BY ts')" \
	"$(blkparse -i "$WORK/pcq/set" -a pc -f '%a %d\n' -o /dev/stdout 2>/dev/null |
		awk 'NF == 2 && $1 ~ /^[A-Z]$/ { print $1, ($2 ~ /W/) ? 1 : 0 }')" \
	"PC queue events: block_event's passthrough events vs blkparse's"
check_eq "$(info_counts "$WORK/pcq.json")" "$(blkparse_counts "$WORK/pcq/set")" \
	"PC queue events: per-device counters vs blkparse"
check_eq "$(json_get "$WORK/pcq.json" 'd["swap_in_pages"]')" 1 "PC queue events: swap-in pages"

# Passthrough (PC) requests as a real host has them (smartctl's 512-byte
# SMART reads, hdparm's flushes of no data, a read requeued and issued
# again), a PC write with data and a PC read queued: info prints
# blkparse's PC lines, and --json has their counts and KiB (info had
# no PC lines, nor keys).  blkparse adds a PC read's queued KiB to the
# file-system Reads Queued KiB: info's do as blkparse's.
pc_lines() { # the PC count lines of blkparse's or info's text
	sed -n 's/^ \(PC .*\)$/\1/p' | tr -s ' \t' ' '
}
mkdir -p "$WORK/pcio"
TF blk-write "$WORK/pcio/set.blktrace.0" <<'EOF_RECORDS' || fail "writing pcio"
1000 Q R 8 8
1010 G R 8 8
1020 I R 8 8
1030 D R 8 8
1040 C R 8 8
2000 I P 0 1
2010 D P 0 1
2020 C P 0 1
3000 I P 0 1
3010 D P 0 1
3020 C P 0 1
4000 I WP 0 0
4010 D WP 0 0
4020 C WP 0 0
5000 I P 0 8
5010 D P 0 8
5020 R P 0 8
5030 I P 0 8
5040 D P 0 8
5050 C P 0 8
6000 I WP 0 16
6010 D WP 0 16
6020 C WP 0 16
7000 Q P 0 8
7010 G P 0 8
7020 I P 0 8
7030 D P 0 8
7040 C P 0 8
EOF_RECORDS
"$SWAPTRACE" ingest -q -o "$WORK/pcio.db" --swap 8:0 "$WORK/pcio/set" 2>/dev/null &&
	"$SWAPTRACE" info "$WORK/pcio.db" > "$WORK/pcio.txt" &&
	"$SWAPTRACE" info --json "$WORK/pcio.db" > "$WORK/pcio.json" || fail "pcio: ingest or info"
blkparse -i "$WORK/pcio/set" > "$WORK/pcio.blkparse" 2>/dev/null || fail "pcio: blkparse"
check_eq "$(pc_lines < "$WORK/pcio.txt")" "$(pc_lines < "$WORK/pcio.blkparse")" \
	"PC requests: info's PC lines vs blkparse's"
[ "$(pc_lines < "$WORK/pcio.blkparse" | wc -l)" = 4 ] || fail "PC requests: blkparse printed no PC lines"
check_eq "$(summary_lines < "$WORK/pcio.txt")" "$(summary_lines < "$WORK/pcio.blkparse")" \
	"PC requests: info's count lines vs blkparse's"
# --json's keys, written out as blkparse's lines
check_eq "$(python3 - "$WORK/pcio.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
for left, right, kib in (("PC Reads Queued:", "PC Writes Queued:", "queued"),
                         ("PC Read Disp.:", "PC Write Disp.:", "dispatched"),
                         ("PC Reads Req.:", "PC Writes Req.:", "requeued"),
                         ("PC Reads Compl.:", "PC Writes Compl.:", "completed")):
    line = []
    for label, rw in ((left, "reads"), (right, "writes")):
        n = d["pc_%s_%s" % (rw, kib)]
        k = d.get("pc_%s_%s_kib" % (rw, kib))
        line.append("%s %d%s" % (label, n, "" if k is None else ", %dKiB" % k))
    print(" ".join(line))
PY
)" "$(pc_lines < "$WORK/pcio.blkparse")" "PC requests: info --json's PC counts vs blkparse's lines"
# no PC lines where blkparse has none
check_eq "$("$SWAPTRACE" info "$WORK/requeue-little.db" | pc_lines)" \
	"$(blkparse -i "$WORK/requeue-little/set" 2>/dev/null | pc_lines)" "no PC requests: no PC lines"

# vs_btt NAME SWAP: ingest $WORK/NAME/set with swap area SWAP and compare
# info's latency and merge tables (NAME.json) with btt's (NAME.btt.avg)
# into NAME.diff.  1 when ingest, info, blkparse or btt failed; 2 when the
# tables differ.
vs_btt() {
	local name=$1 swap=$2
	"$SWAPTRACE" ingest -q -o "$WORK/$name.db" --swap "$swap" "$WORK/$name/set" 2>/dev/null &&
		"$SWAPTRACE" info --json --latency "$WORK/$name.db" > "$WORK/$name.json" &&
		blkparse -i "$WORK/$name/set" -d "$WORK/$name.bin" -O > /dev/null 2>&1 &&
		(cd "$WORK" && btt -A -i "$name.bin" -o "$name.btt" > /dev/null 2>&1) || return 1
	python3 "$SWT_SOURCE_DIR/tests/btt-compare.py" "$WORK/$name.btt.avg" "$WORK/$name.json" \
		> "$WORK/$name.diff" || return 2
}

# Stages of no time: two requests queued in one nanosecond and one of them
# through every stage in it.  btt takes a span of no time as 1 ns (info
# printed min 0.000000000 for Q2Q, Q2G, G2I, I2D, D2C and Q2C).
mkdir -p "$WORK/zero"
TF blk-write "$WORK/zero/set.blktrace.0" <<'EOF_RECORDS' || fail "writing zero"
1000 Q R 100 8
1000 G R 100 8
1000 I R 100 8
1000 D R 100 8
1000 C R 100 8
1000 Q R 300 8
1000 G R 300 8
1000 I R 300 8
1000 D R 300 8
1500 C R 300 8
1600 Q R 500 8
1700 G R 500 8
1800 I R 500 8
1900 D R 500 8
2000 C R 500 8
EOF_RECORDS
vs_btt zero 8:0
case $? in
1) fail "stages of no time: ingest, info or btt failed" ;;
2) fail "stages of no time: latency tables vs btt: $(head -3 "$WORK/zero.diff")" ;;
esac

# Swap on a bio-based remapper: device-mapper (253,0) and md (9,1) bios are
# queued and completed, the disk's (8,0) go through every stage.  btt puts
# the remappers' Q2Q and Q2C in its Q2Qdm and Q2Cdm rows (info printed them
# as Q2Q and Q2C, and the all-devices Q2Q and Q2C took them in), and has no
# merge row for a device that issued nothing (info printed "#Q 0, #D 0"
# for the three queued bios of 253,0).
mkdir -p "$WORK/dm"
TF blk-write "$WORK/dm/set.blktrace.0" <<'EOF_RECORDS' || fail "writing dm"
1000 Q R 100 8 253,0
1050 Q W 500 8 9,1
1100 Q R 2100 8
1200 G R 2100 8
1300 I R 2100 8
1400 D R 2100 8
1500 C R 2100 8
1600 C W 500 8 9,1
1900 C R 100 8 253,0
2000 Q R 108 8 253,0
2100 Q R 2108 8
2200 G R 2108 8
2300 I R 2108 8
2400 D R 2108 8
2500 C R 2108 8
2900 C R 108 8 253,0
3000 Q R 116 8 253,0
3050 Q W 508 8 9,1
3100 Q R 2116 8
3200 G R 2116 8
3300 I R 2116 8
3400 D R 2116 8
3500 C R 2116 8
3600 C W 508 8 9,1
3900 C R 116 8 253,0
EOF_RECORDS
vs_btt dm 253:0
case $? in
1) fail "remappers: ingest, info or btt failed" ;;
*)	[ -s "$WORK/dm.diff" ] && fail "remappers: latency and merge tables vs btt: $(head -4 "$WORK/dm.diff")"
	check_eq "$(json_get "$WORK/dm.json" '[d["latency"].get("Q2Cdm", {}).get("n") for d in d["devices"]]')" \
		"[None, 2, 3]" "remappers: Q2Cdm of 8:0, 9:1, 253:0" ;;
esac

# btt's merge table counts request sectors at completion, #D at every issue
# and neither for I/O of no sectors: a read requeued and issued again, a
# write completed in two parts, a request issued without a queue event, a
# completion without an issue and a flush of no sectors (info had #Q 6,
# #D 6, sectors min 0, avg 8, max 16, total 48 where btt has 5, 5, 8, 9,
# 8, 48), and the latency rows too (see "again" below).
mkdir -p "$WORK/blks"
TF blk-write "$WORK/blks/set.blktrace.0" <<'EOF_RECORDS' || fail "writing blks"
1000 Q R 100 8
1010 G R 100 8
1020 I R 100 8
1030 D R 100 8
1040 R R 100 8
1050 I R 100 8
1060 D R 100 8
1070 C R 100 8
2000 Q W 200 16
2010 G W 200 16
2020 I W 200 16
2030 D W 200 16
2040 C W 200 8
2050 C W 208 8
3000 I W 300 8
3100 D W 300 8
3500 C W 300 8
4000 C R 400 8
5000 Q WF 0 0
5100 G WF 0 0
5200 I WF 0 0
5300 D WF 0 0
5400 C WF 0 0
6000 Q R 600 8
6100 G R 600 8
6200 I R 600 8
6300 D R 600 8
6400 C R 600 8
EOF_RECORDS
vs_btt blks 8:0
if [ $? = 1 ]; then
	fail "requeue, partial completion, orphans, flush: ingest, info or btt failed"
else
	check_eq "$(grep ' merges: ' "$WORK/blks.diff")" "" "requeue, partial completion, orphans, flush: merge row vs btt"
	check_eq "$(cat "$WORK/blks.diff")" "" "requeue, partial completion, orphans, flush: latency and merge tables vs btt"
	grep -q '^ *(  8,  0) |' "$WORK/blks.btt.avg" || fail "requeue, partial completion, orphans, flush: btt printed no merge row"
fi

# A requeued request goes through its stages again and btt counts each
# time: Q G I D R D C has its D2C from the second issue and a second I2D
# (info had D2C from the first), a re-insert a second G2I and a merged
# bio a second M2D, an insert first seen after a requeue no I2D for the
# issue before it, and each requeue is one more #Q.  A request completed
# in parts completes each bio at the part that holds it (info took the
# last part for all), and a bio no part holds whole has no D2C or Q2C;
# a flush (no sectors) is in no stage (info had 9 D2C where btt has 7,
# avg 0.000000477 where btt has 0.000000243, #Q 9 where btt has 12).
mkdir -p "$WORK/again"
TF blk-write "$WORK/again/set.blktrace.0" <<'EOF_RECORDS' || fail "writing again"
1000 Q R 100 8
1010 G R 100 8
1020 I R 100 8
1030 D R 100 8
1040 R R 100 8
1500 D R 100 8
1700 C R 100 8
2000 Q R 300 8
2010 G R 300 8
2020 I R 300 8
2030 Q R 308 8
2040 M R 308 8
2100 D R 300 16
2200 R R 300 16
2250 I R 300 16
2700 D R 300 16
2900 C R 300 16
3000 Q R 500 8
3010 G R 500 8
3030 D R 500 8
3040 R R 500 8
3100 I R 500 8
3500 D R 500 8
3700 C R 500 8
4000 Q W 600 8
4010 G W 600 8
4020 Q W 608 8
4030 M W 608 8
4040 I W 600 16
4100 D W 600 16
4300 C W 600 8
4700 C W 608 8
5000 Q W 800 16
5010 G W 800 16
5020 I W 800 16
5030 D W 800 16
5040 C W 800 8
5050 C W 808 8
6000 Q WF 0 0
6010 G WF 0 0
6020 I WF 0 0
6030 D WF 0 0
6040 R WF 0 0
6050 D WF 0 0
6060 C WF 0 0
7000 Q R 900 8
7100 G R 900 8
7200 I R 900 8
7300 D R 900 8
7400 C R 900 8
EOF_RECORDS
vs_btt again 8:0
case $? in
1) fail "stages again after a requeue, parts, flush: ingest, info or btt failed" ;;
2) fail "stages again after a requeue, parts, flush: tables vs btt: $(head -4 "$WORK/again.diff")" ;;
esac
check_eq "$(json_get "$WORK/again.json" '[d["devices"][0]["latency"][k]["n"] for k in ("D2C", "I2D", "M2D")]')" \
	"[7, 8, 3]" "stages again after a requeue: D2C, I2D and M2D counts"

# A trace that starts in the middle of I/O: btt follows a device from its
# first queue event on and counts nothing of the issues and completions
# before it (info had #Q 3, #D 3, sectors avg 13, total 40 where btt has
# 2, 2, 12 and 24).  btt drops passthrough events unread: a PC request
# queued first does not start the device's I/O for it.
mkdir -p "$WORK/cull"
TF blk-write "$WORK/cull/set.blktrace.0" <<'EOF_RECORDS' || fail "writing cull"
400 Q P 0 0
500 C R 40 8
600 D R 60 8
700 C R 60 8
1000 Q R 100 8
1010 G R 100 8
1020 I R 100 8
1030 D R 100 8
1040 C R 100 8
1100 C R 60 8
2000 Q R 200 8
2010 G R 200 8
2020 I R 200 8
2030 D R 200 8
2040 C R 200 8
EOF_RECORDS
vs_btt cull 8:0
case $? in
1) fail "I/O before the first queue: ingest, info or btt failed" ;;
2) fail "I/O before the first queue: tables vs btt: $(head -3 "$WORK/cull.diff")" ;;
esac
finish

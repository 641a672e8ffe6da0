#!/bin/bash
# Every shared capture's trace.dat: event counts equal trace-cmd report's,
# per-device block counters equal blkparse's on the same capture's blktrace
# files, and the swap page streams equal pswpin/pswpout.
. "$(dirname "$0")/lib.sh"
need_tool trace-cmd
need_tool blkparse
need_tool xz
find_captures

for cap in "$CAPTURES"/*/; do
	name=$(basename "$cap")
	db="$WORK/$name.db"
	if ! "$SWAPTRACE" ingest -q -o "$db" "$cap"; then
		fail "$name: ingest failed"
		continue
	fi
	"$SWAPTRACE" info --json "$db" > "$WORK/$name.json" || fail "$name: info failed"
	# trace-cmd report: "swt:  comm-pid [cpu] ts: event_name: ..." -> counts by name
	expected=$(trace-cmd report -i "$cap/trace.dat" 2>/dev/null | awk '
		{ for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) {
			e = $(i + 1); sub(/:$/, "", e); n[e]++; break } }
		END { for (e in n) print e, n[e] }' | sort)
	actual=$(json_get "$WORK/$name.json" '"\n".join("%s %d" % (k, v) for k, v in sorted(d["events"].items()))')
	check_eq "$actual" "$expected" "$name: event counts vs trace-cmd report"
	if [ -d "$cap/blk" ]; then
		check_eq "$(info_counts "$WORK/$name.json")" "$(blkparse_counts "$(blk_input "$name")")" "$name: per-device counters vs blkparse"
	fi
	check_eq "$(json_get "$WORK/$name.json" 'd["swap_in_pages"]')" "$(meta_value "$cap/meta.txt" pswpin)" "$name: swap-in pages vs pswpin"
	check_eq "$(json_get "$WORK/$name.json" 'd["swap_out_pages"]')" "$(meta_value "$cap/meta.txt" pswpout)" "$name: swap-out pages vs pswpout"
	check_eq "$(json_get "$WORK/$name.json" 'd["lost_events"]')" 0 "$name: lost events"
	echo "$name: trace.dat ingest agrees with trace-cmd report and blkparse"
done
finish

#!/bin/bash
# Every shared capture's blktrace files: swaptrace info's per-device counters
# equal blkparse's, and the swap page streams equal the kernel's pswpin and
# pswpout over the run.
. "$(dirname "$0")/lib.sh"
need_tool blkparse
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
	echo "$name: blktrace ingest agrees with blkparse"
done
finish

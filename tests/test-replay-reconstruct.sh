#!/bin/bash
# --approximate's reconstruction judged where the truth is known: each
# page-cluster 0 capture replayed with auto at page-cluster 3 becomes a
# readahead capture (reconstruct-check.c), whose reconstructed stream must
# answer what-if questions -- every kernel policy and the oracle at
# page-cluster 1-5 -- as the exact stream does: coverage within 8 % on
# average and 20 % at worst, accuracy within 10 % on average, the faults
# within 3 % (docs/replay-model.md, Input); also for traces begun mid-run.
. "$(dirname "$0")/lib.sh"
find_captures
check="$SWT_TOOLS_DIR/reconstruct-check"
[ -x "$check" ] || { fail "reconstruct-check not built"; finish; }

for name in rnd-1dev seq-1dev rnd-1ssd-vma rnd-4dev; do
	db="$WORK/$name-pc0.db"
	"$SWAPTRACE" ingest -q -o "$db" "$CAPTURES/$name-pc0" || { fail "$name: ingest"; continue; }
	cp "$db" "$WORK/$name-ra.db"
	out=$("$check" "$db" "$WORK/$name-ra.db") || fail "$name: reconstruction outside its bounds"
	printf '%-13s %s\n' "$name" "$out"
	# A trace begun mid-run: the same capture without its first half, where
	# most pages' earlier faults are out of sight.  (rnd-4dev's second half
	# keeps 868 readahead hits: too few for the relative bounds.)
	[ "$name" = rnd-4dev ] && continue
	mid=$(sqlite3 "$db" 'SELECT (min(ts) + max(ts)) / 2 FROM swap_in')
	sqlite3 "$db" "DELETE FROM swap_in WHERE ts < $mid; DELETE FROM fault WHERE ts < $mid;
		DELETE FROM swap_out WHERE ts < $mid;" || { fail "$name: cutting its first half"; continue; }
	cp "$db" "$WORK/$name-ra.db"
	out=$("$check" "$db" "$WORK/$name-ra.db") ||
		fail "$name begun mid-run: reconstruction outside its bounds"
	printf '%-13s %s\n' "$name, mid-run" "$out"
done
finish
